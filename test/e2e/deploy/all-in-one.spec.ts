/**
 * The all-in-one process as `npm start` runs it (every service, no transporter): the root
 * bootstrap across restarts, the banner it prints when it serves, health and metrics ports, SIGTERM with requests in flight, and a
 * clear start-up error for a bad setting or a secrets key that is not the data's.
 */
import fs from "fs";
import http from "http";
import os from "os";
import path from "path";
import { freePort, startServiceProcess, stopProcess, type ServiceProcess } from "../../support/processes";
import { client, waitFor } from "../../support/http";

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "glv3-aio-"));
let ports: { port: number; health: number; metrics: number };
/** Root's generated token, printed by the first start in this data directory. */
let rootToken = "";

async function startAllInOne(extra: Record<string, string> = {}): Promise<ServiceProcess> {
	ports = { port: await freePort(), health: await freePort(), metrics: await freePort() };
	return startServiceProcess({
		name: "all-in-one",
		services: "",
		env: {
			PATH: process.env.PATH ?? "",
			DATA_DIR: dataDir,
			PORT: String(ports.port),
			HEALTH_PORT: String(ports.health),
			METRICS_PORT: String(ports.metrics),
			LOG_LEVEL: "info",
			LOG_FORMAT: "text",
			...extra,
		},
	});
}

const stop = (proc: ServiceProcess) => stopProcess(proc, "SIGTERM");

/** Its output once it has printed its banner (just after /ready first answers: the broker's `started` hook). */
const afterBanner = (proc: ServiceProcess) => waitFor("the start banner", () => /^Ctrl-C stops it\.$/m.test(proc.output.join("")) && proc.output.join(""));

/** The banner's first lines: where it serves and its reference page. */
const addresses = () => {
	const origin = `http://localhost:${ports.port}`;
	return [
		`Gateway: ${origin}/api/v3`,
		`API v4:  ${origin}/api/v4`,
		`Docs:    ${origin}/api/v3/docs (both versions; OpenAPI 3.1 at ${origin}/api/v3/openapi.json)`,
		"",
	].join("\n");
};

afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

it("creates root once, its generated credentials in a file the log and the banner name, and keeps them across restarts", async () => {
	const first = await startAllInOne();
	const log = await afterBanner(first);
	const file = path.join(dataDir, "initial_root_credentials");
	expect(log).toContain(`Created the root user (login root): its generated password and private token are in ${file} (mode 0600), and nowhere else.`);
	expect(fs.statSync(file).mode & 0o777).toBe(0o600);
	const written = fs.readFileSync(file, "utf8");
	const password = /^Password: (\S+)$/m.exec(written)![1];
	const token = /^Private token: ([A-Za-z0-9_-]{20})$/m.exec(written)![1];
	rootToken = token;
	expect(log).toContain(
		[
			addresses(),
			`This start created root (login root); its generated password and private token are in ${file} (yours only; keep them, then delete it). ` +
				"Ready to paste:",
			`  export T=$(sed -n 's/^Private token: //p' ${file})`,
			`  curl -H "PRIVATE-TOKEN: $T" http://localhost:${ports.port}/api/v3/user`,
			"The internal API (/api/v3/internal: builds, pushes) is off: set INTERNAL_API_SECRET to turn it on.",
			"Ctrl-C stops it.",
		].join("\n"),
	);
	expect([log.includes(password), log.includes(token)]).toEqual([false, false]);
	const docs = await fetch(`http://127.0.0.1:${ports.port}/api/v3/docs`);
	expect([docs.status, docs.headers.get("content-type")]).toEqual([200, "text/html; charset=utf-8"]);
	const api = client(`http://127.0.0.1:${ports.port}/api/v3`, token);
	expect((await api.get("/user")).body).toMatchObject({ id: 1, username: "root", is_admin: true });
	expect((await api.post("/projects", { form: { name: "kept" } })).status).toBe(201);
	expect(await stop(first)).toBe(0);

	const second = await startAllInOne({
		GITLAB_ROOT_PASSWORD: "another-password",
		GITLAB_ROOT_TOKEN: "abcdefghij1234567890",
		INTERNAL_API_SECRET: "x".repeat(32),
	});
	const secondLog = await afterBanner(second);
	expect(secondLog).not.toContain("Created the root user");
	expect(secondLog).toContain(
		[
			addresses(),
			"root was created by an earlier start (what it generated went to initial_root_credentials in the data directory). With its token in T:",
			`  curl -H "PRIVATE-TOKEN: $T" http://localhost:${ports.port}/api/v3/user`,
			"Ctrl-C stops it.",
		].join("\n"),
	);
	expect(secondLog).not.toContain(token);
	expect(secondLog).not.toContain("export T=");
	const again = client(`http://127.0.0.1:${ports.port}/api/v3`, token);
	expect((await again.get("/user")).body).toMatchObject({ id: 1, private_token: token });
	expect((await again.get("/projects/root%2Fkept")).status).toBe(200);
	expect((await again.post("/session", { token: null, form: { login: "root", password } })).status).toBe(201);
	expect((await again.post("/session", { token: null, form: { login: "root", password: "another-password" } })).status).toBe(401);
	expect((await client(`http://127.0.0.1:${ports.port}/api/v3`, "abcdefghij1234567890").get("/user")).status).toBe(401);
	expect(await stop(second)).toBe(0);
}, 60000);

it("serves /live, /ready and Prometheus metrics on their own ports", async () => {
	const proc = await startAllInOne();
	const live = await fetch(`http://127.0.0.1:${ports.health}/live`);
	expect(live.status).toBe(200);
	expect(await live.json()).toMatchObject({ state: "up" });
	expect((await fetch(`http://127.0.0.1:${ports.health}/ready`)).status).toBe(200);
	const metrics = await fetch(`http://127.0.0.1:${ports.metrics}/metrics`);
	expect(metrics.status).toBe(200);
	expect(await metrics.text()).toMatch(/^# (HELP|TYPE) moleculer_/m);
	expect(await stop(proc)).toBe(0);
}, 60000);

it("finishes in-flight requests on SIGTERM and exits 0", async () => {
	const proc = await startAllInOne();
	const token = rootToken;
	expect(token).toMatch(/^[A-Za-z0-9_-]{20}$/);
	const agent = new http.Agent({ keepAlive: true, maxSockets: 20 });
	// Requests fully written to connected sockets before the signal: they are in flight.
	const replies: Promise<number>[] = [];
	const sent: Promise<void>[] = [];
	for (let i = 0; i < 20; i++) {
		const req = http.request({ host: "127.0.0.1", port: ports.port, path: "/api/v3/user", agent, headers: { "PRIVATE-TOKEN": token } });
		replies.push(
			new Promise((resolve, reject) => req.on("response", res => (res.resume(), res.on("end", () => resolve(res.statusCode ?? 0)))).on("error", reject)),
		);
		sent.push(new Promise(resolve => req.on("finish", () => resolve())));
		req.end();
	}
	await Promise.all(sent);
	await new Promise(r => setTimeout(r, 50));
	const code = await stop(proc);
	const statuses = await Promise.all(replies);
	agent.destroy();
	expect(code).toBe(0);
	expect(statuses).toEqual(Array(20).fill(200));
}, 60000);

it("refuses to start with a bad setting and names it", async () => {
	const start = startServiceProcess({
		name: "bad-config",
		services: "",
		env: { PATH: process.env.PATH ?? "", DATA_DIR: dataDir, TRANSPORTER: "foo", PORT: "0" },
		readyTimeoutMs: 20000,
	});
	await expect(start).rejects.toThrow(/exited with [1-9]\d* before it was ready[\s\S]*Invalid configuration: TRANSPORTER="foo"/);
}, 30000);

it("refuses to start on data written with another secrets key, naming SECRETS_KEY and DATA_DIR/.secrets-key", async () => {
	const keyed = fs.mkdtempSync(path.join(os.tmpdir(), "glv3-aio-key-"));
	try {
		const env = (key: string | null) => ({ DATA_DIR: keyed, GITLAB_ROOT_TOKEN: "keyedroot01234567890", ...(key ? { SECRETS_KEY: key } : {}) });
		const first = await startAllInOne(env("the-key-the-data-has-0123"));
		expect((await client(`http://127.0.0.1:${ports.port}/api/v3`, "keyedroot01234567890").get("/user")).status).toBe(200);
		expect(await stop(first)).toBe(0);

		// Another key, then none (the generated DATA_DIR/.secrets-key): both refused before serving a request.
		for (const [key, says] of [
			["another-key-0123456789", /SECRETS_KEY is set to a different key/],
			[null, /SECRETS_KEY is not set, so the key generated in \S+\/\.secrets-key was used/],
		] as const) {
			const start = startAllInOne(env(key));
			await expect(start).rejects.toThrow(/exited with [1-9]\d* before it was ready/);
			const error = await start.catch((err: Error) => err.message);
			expect(error).toMatch(says);
			expect(error).toContain(`DATA_DIR=${keyed}`);
			expect(error).toContain("DATA_DIR/.secrets-key");
		}

		// The right key still opens the data, token look-ups included.
		const again = await startAllInOne(env("the-key-the-data-has-0123"));
		expect((await client(`http://127.0.0.1:${ports.port}/api/v3`, "keyedroot01234567890").get("/user")).body).toMatchObject({ username: "root" });
		expect(await stop(again)).toBe(0);
	} finally {
		fs.rmSync(keyed, { recursive: true, force: true });
	}
}, 90000);
