/**
 * The embedded default loses no push event: the all-in-one process (`npm start`: every service,
 * no transporter, the in-process channel journaled under DATA_DIR) is killed with SIGKILL in the
 * middle of a burst of pushes, and started again on the same data. Every event that was answered
 * 202 then reaches every peer exactly once; an event whose request the kill cut short reaches
 * each peer at most once.
 *
 * At the moment of the kill some events are delivered, some partly (one recipient mailed, the
 * other not; a task commented, not yet completed), some not at all, and some deliveries are in
 * the middle of being made: the task tracker and the SMTP server hold them unanswered, so that
 * the kill cuts them off before the peer accepts them (as a crash between the request and the
 * answer would). The IRC server is down until after the restart (every IRC delivery is being
 * retried): IRC has no acknowledgement, so a line a process wrote just before dying cannot be
 * told apart from one it did not, and would be sent again.
 */
import fs from "fs";
import os from "os";
import path from "path";
import { freePort, startServiceProcess, stopProcess, type ServiceProcess } from "../../support/processes";
import { listenOnIrc, startIrcServer, type IrcListener, type IrcServer } from "../../support/peers/irc-server";
import { startSmtpSink, type SmtpSink } from "../../support/peers/smtp-sink";
import { startTaskTracker, type TaskTracker } from "../../support/peers/task-tracker";
import { generateToken } from "../../../lib/crypto/tokens";
import { client, waitFor } from "../../support/http";
import { pushBody } from "../../support/push-fixtures";

/** The burst: at most N pushes (it is cut by the kill long before), CONCURRENCY at a time, each client pausing PAUSE_MS. */
const N = 300;
const CONCURRENCY = 4;
const PAUSE_MS = 20;
const SECRET = "durable-internal-secret-0123456789abcdef";
const rootToken = generateToken();
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "glv3-durable-"));

let tracker: TaskTracker;
let smtp: SmtpSink;
let irc: IrcServer | undefined;
let listener: IrcListener | undefined;
let ircPort: number;
let proc: ServiceProcess | undefined;
let env: Record<string, string>;
let url: string;
let projectId: number;
let projectPath: string;

const start = async () => (proc = await startServiceProcess({ name: "all-in-one", services: "", env }));
const taskIds = Array.from({ length: N }, (_, i) => String(i + 1));
const messageOf = (i: number) => `fix #${i + 1} durable push ${i}`;

beforeAll(async () => {
	[tracker, smtp, ircPort] = await Promise.all([startTaskTracker(taskIds), startSmtpSink(), freePort()]);
	const port = await freePort();
	url = `http://127.0.0.1:${port}/api/v3`;
	env = {
		PATH: process.env.PATH ?? "",
		NODE_ENV: "production",
		DATA_DIR: dataDir,
		PORT: String(port),
		HEALTH_PORT: String(await freePort()),
		METRICS_PORT: String(await freePort()),
		GITLAB_ROOT_TOKEN: rootToken,
		GITLAB_ROOT_PASSWORD: "root-password-123",
		INTERNAL_API_SECRET: SECRET,
		TASK_TRACKER_API_URL: tracker.apiUrl,
		SMTP_URL: smtp.url,
		ALLOW_LOCAL_REQUESTS: "true",
		IRC_MESSAGE_INTERVAL_MS: "10",
		// Retried until the IRC server is back (the delay stays short: 100 ms, 400 ms, then 1.6 s and more).
		PUSH_RETRY_DELAY_MS: "100",
		PUSH_MAX_DELIVERIES: "1000",
		OUTBOUND_TIMEOUT_MS: "2000",
		LOG_LEVEL: "info",
		LOG_FORMAT: "text",
	};
	await start();
	const api = client(url, rootToken);
	const project = (await api.post("/projects", { body: { name: "durable" } })).body;
	const put = (slug: string, form: Record<string, string>) => api.put(`/projects/${project.id}/services/${slug}`, { form });
	expect((await put("task-tracker-comments", { api_key: "tracker-token" })).status).toBe(200);
	expect((await put("emails-on-push", { recipients: "dev@example.com ops@example.com" })).status).toBe(200);
	expect((await put("irc-gateway", { recipients: `irc://127.0.0.1:${ircPort}/#dev` })).status).toBe(200);
	projectId = project.id;
	projectPath = project.path_with_namespace;
}, 60000);

afterAll(async () => {
	if (proc) await stopProcess(proc, "SIGTERM");
	await listener?.close();
	await Promise.all([tracker?.stop(), smtp?.stop(), irc?.stop()]);
	fs.rmSync(dataDir, { recursive: true, force: true });
}, 60000);

it("delivers every accepted event to every peer exactly once after a kill -9 in the middle of a burst", async () => {
	const accepted = new Set<number>();
	const cut = new Set<number>();
	let next = 0;
	let killed = false;
	const loops = Array.from({ length: CONCURRENCY }, async () => {
		while (next < N && !killed) {
			const i = next++;
			const body = pushBody({ projectId, path: projectPath, userName: "Jane", commits: [{ message: messageOf(i) }] });
			const res = await client(url)
				.post("/internal/push", { body, headers: { "Gitlab-Shared-Secret": SECRET } })
				.catch(() => null);
			if (res?.status === 202) accepted.add(i);
			else if (killed) cut.add(i);
			else throw new Error(`push ${i}: ${res?.status} ${res?.text}`);
			await new Promise(r => setTimeout(r, PAUSE_MS));
		}
	});

	// Some events delivered, then the peers stop answering: deliveries pile up unacknowledged.
	await waitFor("deliveries under way", () => smtp.messages.length >= 8 && (tracker.comments.size ?? 0) >= 3, 30000, 10);
	smtp.hold();
	tracker.hold();
	await waitFor("deliveries held at both peers", () => smtp.held >= 1 && tracker.held >= 1, 30000, 10);
	await waitFor("more pushes accepted meanwhile", () => accepted.size >= 40, 30000, 10);
	killed = true;
	await stopProcess(proc!, "SIGKILL");
	proc = undefined;
	await Promise.all(loops);
	// What the peers were holding was never accepted: let them see the connections close first.
	await new Promise(r => setTimeout(r, 500));
	smtp.release();
	tracker.release();
	// Killed in the middle of the burst.
	expect(accepted.size).toBeGreaterThanOrEqual(40);
	expect(next).toBeLessThan(N);

	irc = await startIrcServer(ircPort);
	listener = await listenOnIrc(irc, "#dev");
	await start();
	await waitFor("the journal read back", () => /Recovered \d+ pending deliveries/.test(proc!.output.join("")), 20000);

	const mailsTo = (i: number, to: string) => smtp.messages.filter(m => m.subject?.endsWith(messageOf(i)) && (m.to as { text: string }).text === to).length;
	const ircLines = (i: number) => listener!.messages.filter(m => m.text.endsWith(`: ${messageOf(i)}`)).length;
	const delivered = (i: number) =>
		mailsTo(i, "dev@example.com") >= 1 && mailsTo(i, "ops@example.com") >= 1 && tracker.tasks.get(String(i + 1)) === true && ircLines(i) >= 1;
	await waitFor("every accepted event at every peer", () => [...accepted].every(delivered), 90000, 250);
	// Anything late or twice would show up now.
	await new Promise(r => setTimeout(r, 2000));

	const counts = (i: number) => ({
		i,
		dev: mailsTo(i, "dev@example.com"),
		ops: mailsTo(i, "ops@example.com"),
		comments: (tracker.comments.get(String(i + 1)) ?? []).length,
		completions: tracker.requests.filter(r => r.method === "PUT" && r.path === `/api/1.0/tasks/${i + 1}`).length,
		irc: ircLines(i),
	});
	for (const i of accepted) expect(counts(i)).toEqual({ i, dev: 1, ops: 1, comments: 1, completions: 1, irc: 1 });
	for (const i of cut) {
		const c = counts(i);
		expect([c.dev, c.ops, c.comments, c.completions, c.irc].every(n => n <= 1)).toBe(true);
	}
	const dead = await client(url).get("/internal/dead-letters", { headers: { "Gitlab-Shared-Secret": SECRET } });
	expect([dead.status, dead.body]).toEqual([200, []]);
}, 180000);
