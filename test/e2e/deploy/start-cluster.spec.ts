/**
 * `npm run start:cluster` as a newcomer runs it: the command itself (build included) in a process
 * group of its own, like a terminal's foreground job, over this run's NATS and Redis (TRANSPORTER
 * and CACHER exported, SECRETS_KEY not: the key `npm start` generates in DATA_DIR is used). What it
 * prints is all the test knows: where the gateway listens, the file of root's generated credentials
 * (never a secret), every process's health and metrics ports. Every routed endpoint is then served (no 503: each service and worker
 * is up and found), a push goes through events to a worker, and Ctrl-C (SIGINT to the group)
 * stops every process, leaving none behind.
 */
import { spawn } from "child_process";
import fs from "fs";
import os from "os";
import path from "path";
import { freePort, ROOT, serviceNames } from "../../support/processes";
import { StartClusterCommand } from "../../support/start-cluster-command";
import { internalApi } from "../../support/builds";
import { client, waitFor } from "../../support/http";
import { pushBody } from "../../support/push-fixtures";
import { gatewayRoutes } from "../../support/routes";
import { NATS_URL, REDIS_URL, requireServers, uniqueNamespace } from "../../support/servers";
import { deletePushChannel } from "../../../lib/push/provisioning";

const namespace = uniqueNamespace("start-cluster");
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "glv3-start-cluster-"));
const secret = "start-cluster-internal-secret-0123456789abcdef";
let command: StartClusterCommand;

/** PIDs of live processes started with this run's NAMESPACE in their environment. */
function processesOfThisCluster(): number[] {
	const found: number[] = [];
	for (const entry of fs.readdirSync("/proc")) {
		if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
		try {
			const environ = fs.readFileSync(`/proc/${entry}/environ`, "latin1").split("\0");
			if (environ.includes(`NAMESPACE=${namespace}`)) found.push(Number(entry));
		} catch {
			// gone meanwhile, or not ours to read
		}
	}
	return found;
}

beforeAll(async () => {
	await requireServers("nats", "redis");
	// SECRETS_KEY not set: the key `npm start` generates in DATA_DIR is used.
	command = await StartClusterCommand.start({ PORT: String(await freePort()), NAMESPACE: namespace, DATA_DIR: dataDir, INTERNAL_API_SECRET: secret }, 180000);
}, 200000);

afterAll(async () => {
	// Only after a failure: whatever is left of this run.
	command?.kill();
	for (const pid of processesOfThisCluster()) {
		try {
			process.kill(pid, "SIGKILL");
		} catch {
			// already gone
		}
	}
	fs.rmSync(dataDir, { recursive: true, force: true });
	await deletePushChannel(NATS_URL, REDIS_URL, namespace).catch(() => undefined);
});

it("prints the gateway's address, where root's generated credentials are, and each process's health and metrics ports", async () => {
	expect(command.output).toMatch(/^Gateway: http:\/\/localhost:\d+\/api\/v3$/m);
	expect(command.output).toMatch(/^Docs: {4}http:\/\/localhost:\d+\/api\/v3\/docs /m);
	const file = path.join(dataDir, "initial_root_credentials");
	expect(command.output).toContain(`This start created root (login root); its generated password and private token are in ${file} (yours only;`);
	expect(command.output).toContain(`  export T=$(sed -n 's/^Private token: //p' ${file})\n`);
	const token = await command.pastedToken();
	expect(token).toMatch(/^[A-Za-z0-9_-]{20}$/);
	expect(command.output).not.toContain(token);
	const listed = [...command.output.matchAll(/^ {2}(\S+) +health http:\/\/localhost:(\d+)\/ready +metrics http:\/\/localhost:(\d+)\/metrics$/gm)];
	// Every service and worker, each its own process with its own ports.
	expect(listed.map(m => m[1]).sort()).toEqual(
		serviceNames()
			.map(s => path.basename(s))
			.sort(),
	);
	expect(new Set(listed.flatMap(m => [m[2], m[3]])).size).toBe(listed.length * 2);
	for (const [, name, health, metrics] of listed) {
		const ready = await fetch(`http://127.0.0.1:${health}/ready`);
		expect([name, ready.status]).toEqual([name, 200]);
		expect(await ready.json()).toMatchObject({ state: "up", connected: true });
		const scraped = await fetch(`http://127.0.0.1:${metrics}/metrics`);
		expect([name, scraped.status]).toEqual([name, 200]);
		expect(await scraped.text()).toContain(`nodeID="${name}-`);
	}
});

it("serves every endpoint area through the gateway, workers included", async () => {
	const base = command.url;
	const token = await command.pastedToken();
	const api = client(base, token);
	expect((await api.get("/user")).body).toMatchObject({ id: 1, username: "root" });
	const project = await api.post("/projects", { form: { name: "cluster-demo", visibility_level: 20 } });
	expect(project.status).toBe(201);
	const id = project.body.id as number;
	// Every service is found by the gateway a moment after it is ready.
	await waitFor("labels", async () => (await api.post(`/projects/${id}/labels`, { form: { name: "bug", color: "#d9534f" } })).status === 200, 30000);
	const runner = internalApi(base, secret);
	const buildId = await waitFor("builds", async () => (await runner.create({ project_id: id })).body?.id as number | undefined, 30000);
	expect((await runner.trace(buildId, "$ rspec\n")).status).toBe(200);
	await waitFor(
		"integrations",
		async () => (await api.put(`/projects/${id}/services/emails-on-push`, { form: { recipients: "dev@example.com" } })).status === 200,
	);
	const snippet = await waitFor("snippets", async () => {
		const res = await api.post(`/projects/${id}/snippets`, { form: { title: "t", file_name: "a.txt", code: "hello", visibility_level: 0 } });
		return res.status === 201 && (res.body.id as number);
	});

	// A push reaches events, then the push-mailer worker, which writes mail files without SMTP_URL.
	const pushed = await runner.raw.post("/internal/push", { headers: runner.headers, body: pushBody({ projectId: id, path: "root/cluster-demo" }) });
	expect(pushed.status).toBe(202);
	const mailDir = path.join(dataDir, "mail");
	await waitFor("the push mail", () => Promise.resolve(fs.existsSync(mailDir) && fs.readdirSync(mailDir).some(f => f.endsWith(".eml"))), 30000);

	// Every routed endpoint, with ids that exist: answered by its service (a 503 is a service the gateway cannot reach).
	const ids: Record<string, string> = {
		id: String(id),
		build_id: String(buildId),
		snippet_id: String(snippet),
		key_id: "1",
		user_id: "1",
		slug: "emails-on-push",
		sha: "0ff3ae198f8601a285adcf5c0fff204ee6fba5fd",
		name: "bug",
	};
	const unserved: string[] = [];
	for (const route of gatewayRoutes()) {
		const routePath = route.fullPath.replace(/:([A-Za-z_]+)/g, (_, p: string) => ids[p] ?? "1");
		const res = await api.request(route.method, routePath, route.kind === "api" ? {} : { headers: runner.headers, token: null });
		if (res.status === 503 || res.status >= 500) unserved.push(`${route.method} ${route.fullPath}: ${res.status} ${res.text.slice(0, 200)}`);
	}
	expect(unserved).toEqual([]);
}, 120000);

it("stops every process on Ctrl-C (SIGINT to the process group) and leaves none running", async () => {
	expect(processesOfThisCluster().length).toBeGreaterThanOrEqual(serviceNames().length);
	const { code, signal } = await command.interrupt();
	expect(command.output).toContain("Got SIGINT: stopping");
	expect(command.output).toContain("Stopped, every process exited cleanly.");
	// npm, like a shell, ends itself with the signal it was interrupted by once its script is done.
	expect(code === 0 || signal === "SIGINT").toBe(true);
	expect(processesOfThisCluster()).toEqual([]);
	const port = /^Gateway: http:\/\/localhost:(\d+)/m.exec(command.output)![1];
	expect(await fetch(`http://127.0.0.1:${port}/api/v3/user`).catch(() => "refused")).toBe("refused");
}, 60000);

it("stops at once, naming NATS and its address, when NATS is not reachable", async () => {
	const closedPort = await freePort();
	const transporter = `nats://127.0.0.1:${closedPort}`;
	const run = spawn("npm", ["run", "start:cluster"], {
		cwd: ROOT,
		stdio: ["ignore", "pipe", "pipe"],
		env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? os.tmpdir(), DATA_DIR: dataDir, TRANSPORTER: transporter, CACHER: REDIS_URL },
	});
	let said = "";
	run.stdout.on("data", chunk => (said += chunk));
	run.stderr.on("data", chunk => (said += chunk));
	const code = await new Promise<number | null>(resolve => run.once("exit", resolve));
	expect(code).toBe(1);
	expect(said).toContain(`start:cluster failed: NATS is not reachable at ${transporter} (TRANSPORTER).`);
	// Nothing was built or started: no process, no reconnect noise.
	expect(said).not.toContain("Building");
	expect(said).not.toContain("Starting ");
	expect(said).not.toMatch(/CONNECTION_REFUSED|ECONNREFUSED/);
}, 120000);

it("stops at once with the store's one line when DATA_DIR cannot hold the data (a regular file)", async () => {
	const notADirectory = path.join(dataDir, "not-a-directory");
	fs.writeFileSync(notADirectory, "a file");
	const run = spawn("npm", ["run", "start:cluster"], {
		cwd: ROOT,
		stdio: ["ignore", "pipe", "pipe"],
		env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? os.tmpdir(), DATA_DIR: notADirectory, TRANSPORTER: NATS_URL, CACHER: REDIS_URL },
	});
	let said = "";
	run.stdout.on("data", chunk => (said += chunk));
	run.stderr.on("data", chunk => (said += chunk));
	const code = await new Promise<number | null>(resolve => run.once("exit", resolve));
	expect(code).toBe(1);
	expect(said).toContain(`start:cluster failed: DATA_DIR=${notADirectory} is a file, not a directory (ENOTDIR: a file stands where a directory should be)`);
	expect(said).not.toMatch(/^\s+at /m);
	expect(said).not.toContain("Starting ");
}, 120000);
