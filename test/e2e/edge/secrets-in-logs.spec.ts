/**
 * No secret in any log line. The newcomer's full start, `npm run start:cluster` itself (every
 * service and worker its own process, each one's output shown with its name), at LOG_LEVEL=debug
 * in JSON lines, with what a first start generates (root's password and token, the secrets key),
 * the internal API's secret in the file docs/guide.md makes, and what a deployment sets (an SMTP
 * password), walked through
 * everything that handles a secret: sign-ins with the right and a wrong password, a new user,
 * integrations with secrets, the internal API, and a push the three workers deliver to real peers
 * (an HTTP task tracker with the integration's API key, an SMTP server that takes the login, IRC).
 * Then every line of every process, and the launcher's own, is searched for each secret the test
 * knows, as it is and in the encodings a log could carry it in. test/e2e/edge/security.spec.ts checks
 * the same of every endpoint's requests, on a split stack with chosen credentials.
 */
import crypto from "crypto";
import fs from "fs";
import os from "os";
import path from "path";
import { deletePushChannel } from "../../../lib/push/provisioning";
import { internalApi } from "../../support/builds";
import { client, waitFor } from "../../support/http";
import { freePort } from "../../support/processes";
import { pushBody } from "../../support/push-fixtures";
import { PushPeers } from "../../support/push-stack";
import { NATS_URL, REDIS_URL, requireServers, uniqueNamespace } from "../../support/servers";
import { StartClusterCommand } from "../../support/start-cluster-command";

const namespace = uniqueNamespace("secrets-in-logs");
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "glv3-secrets-in-logs-"));
const random = (what: string) => `${what}-${crypto.randomBytes(12).toString("hex")}`;
/** What the test chooses; the rest the start generates, read from where it puts them. */
const chosen = {
	"the SMTP password": random("smtp-password"),
	"a user's password": random("user-password"),
	"a wrong password typed at sign-in": random("typo-password"),
	"the task tracker's API key": random("tracker-key"),
	"a pipeline service's token": random("pipeline-token"),
	"a build server's password": random("build-server-password"),
};
const SMTP_USER = "mailer@example.com";
let peers: PushPeers;
let command: StartClusterCommand;
const secrets: Record<string, string> = { ...chosen };
/** The internal API's secret where docs/guide.md puts it, for the start to read. */
const INTERNAL_SECRET_FILE = path.join(dataDir, ".internal-api-secret");
fs.writeFileSync(INTERNAL_SECRET_FILE, crypto.randomBytes(32).toString("hex") + "\n", { mode: 0o600 });

beforeAll(async () => {
	await requireServers("nats", "redis");
	peers = await PushPeers.start(["7"]);
	const smtpLogin = `${encodeURIComponent(SMTP_USER)}:${encodeURIComponent(chosen["the SMTP password"])}`;
	command = await StartClusterCommand.start(
		{
			PORT: String(await freePort()),
			NAMESPACE: namespace,
			DATA_DIR: dataDir,
			LOG_LEVEL: "debug",
			LOG_FORMAT: "json",
			SMTP_URL: peers.smtp.url.replace("smtp://", `smtp://${smtpLogin}@`),
			TASK_TRACKER_API_URL: peers.tracker.apiUrl,
			// The peers listen on 127.0.0.1.
			ALLOW_LOCAL_REQUESTS: "true",
		},
		240000,
	);
}, 300000);

afterAll(async () => {
	// Only after a failure: a launcher still running.
	await command?.interrupt();
	await peers?.stop();
	fs.rmSync(dataDir, { recursive: true, force: true });
	await deletePushChannel(NATS_URL, REDIS_URL, namespace).catch(() => undefined);
}, 60000);

it("walks everything that handles a secret, with what the start generated", async () => {
	// Root's token as the banner's line reads it, its password from the file that line names.
	const rootToken = await command.pastedToken();
	const credentials = fs.readFileSync(path.join(dataDir, "initial_root_credentials"), "utf8");
	Object.assign(secrets, {
		"root's private token": rootToken,
		"root's password": /^Password: (\S+)$/m.exec(credentials)![1],
		"the internal API's secret": fs.readFileSync(INTERNAL_SECRET_FILE, "utf8").trim(),
		"the secrets key": fs.readFileSync(path.join(dataDir, ".secrets-key"), "utf8").trim(),
	});
	expect(rootToken).toMatch(/^[A-Za-z0-9_-]{20}$/);
	const base = command.url;
	const root = client(base, rootToken);
	const anonymous = client(base);

	expect((await anonymous.post("/session", { token: null, form: { login: "root", password: secrets["root's password"] } })).status).toBe(201);
	expect((await anonymous.post("/session", { token: null, form: { login: "root", password: chosen["a wrong password typed at sign-in"] } })).status).toBe(
		401,
	);
	const user = { username: "walker", email: "walker@example.com", name: "Walker", password: chosen["a user's password"] };
	expect((await root.post("/users", { body: user })).status).toBe(201);
	const signedIn = await anonymous.post("/session", { token: null, form: { login: user.username, password: user.password } });
	expect(signedIn.status).toBe(201);
	secrets["a user's private token"] = signedIn.body.private_token as string;
	expect((await fetch(base.replace("/api/v3", "/api/v4/user"), { headers: { "PRIVATE-TOKEN": secrets["a user's private token"] } })).status).toBe(200);

	const project = (await root.post("/projects", { form: { name: "walk" } })).body as { id: number; path_with_namespace: string };
	await waitFor("integrations", async () => (await root.get(`/projects/${project.id}/services/emails-on-push`)).status === 200, 30000);
	const settings: [string, Record<string, string>][] = [
		["task-tracker-comments", { api_key: chosen["the task tracker's API key"] }],
		["emails-on-push", { recipients: "dev@example.com" }],
		["irc-gateway", { recipients: `irc://127.0.0.1:${peers.irc.port}/#dev` }],
		["pipeline-service-a", { token: chosen["a pipeline service's token"], project_url: "http://ci.example.com/p" }],
		["build-server-a", { build_server_url: "http://ci.example.com", build_key: "KEY", username: "ci", password: chosen["a build server's password"] }],
	];
	for (const [slug, form] of settings) expect([slug, (await root.put(`/projects/${project.id}/services/${slug}`, { form })).status]).toEqual([slug, 200]);

	const runner = internalApi(base, secrets["the internal API's secret"]);
	const buildId = await waitFor("builds", async () => (await runner.create({ project_id: project.id })).body?.id as number | undefined, 30000);
	expect((await runner.trace(buildId, "$ rspec\n")).status).toBe(200);
	expect((await runner.state(buildId, "running")).status).toBe(200);
	const pushed = await runner.raw.post("/internal/push", {
		headers: runner.headers,
		body: pushBody({ projectId: project.id, path: project.path_with_namespace, commits: [{ message: "fixes #7 from the walk" }] }),
	});
	expect(pushed.status).toBe(202);
	await waitFor(
		"every worker's delivery",
		() => Promise.resolve(peers.tracker.tasks.get("7") === true && peers.smtp.messages.length > 0 && peers.dev.messages.length > 0),
		60000,
	);
	// The secrets were used where they go: the peers received them.
	expect(peers.smtp.logins).toContainEqual({ username: SMTP_USER, password: chosen["the SMTP password"] });
	expect(peers.tracker.requests.some(r => r.authorization?.includes(chosen["the task tracker's API key"]))).toBe(true);

	// Ctrl-C: what every process prints while it stops is searched too.
	await command.interrupt();
	expect(command.output).toContain("Stopped, every process exited cleanly.");
}, 180000);

/** A secret as a log line could carry it: as it is, percent-encoded, in base64 (SMTP's AUTH LOGIN, a Basic header). */
function encodings(value: string): Record<string, string> {
	return { "as it is": value, "percent-encoded": encodeURIComponent(value), base64: Buffer.from(value).toString("base64") };
}

it("prints no secret in any line of any process, nor in the launcher's own", () => {
	const lines = command.output.split("\n");
	// Debug logging did happen, in JSON lines, from the services and the workers.
	expect(lines.filter(l => /"level":"debug"/.test(l)).length).toBeGreaterThan(100);
	for (const name of ["api", "accounts", "integrations", "events", "push-mailer", "task-tracker-commenter", "irc-sender"])
		expect([name, lines.some(l => l.startsWith(`${name} `))]).toEqual([name, true]);
	// The chosen ones, and the five the start and the walk made: root's token and password, the internal secret, the key, a user's token.
	expect(Object.keys(secrets)).toHaveLength(Object.keys(chosen).length + 5);
	const found: string[] = [];
	const searched = { ...secrets, "the SMTP login (AUTH PLAIN)": `\0${SMTP_USER}\0${chosen["the SMTP password"]}` };
	for (const [what, value] of Object.entries(searched))
		for (const [encoding, text] of Object.entries(encodings(value)))
			for (const [i, line] of lines.entries())
				if (line.includes(text)) found.push(`${what} (${encoding}) in line ${i + 1}: ${line.replaceAll(text, "<secret>")}`);
	expect(found).toEqual([]);
});
