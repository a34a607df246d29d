/**
 * The all-in-one default: every service in one process, the in-process channel adapter, and
 * the three workers against real peers (an HTTP task tracker, smtp-server, ngircd). Covers the
 * internal push API's contract, delivery by all three workers, retries then dead letters when
 * a peer is down, and replaying them.
 */
import type { Middleware, ServiceSchema } from "moleculer";
import { waitFor, client, type Client } from "../../support/http";
import { listenOnIrc, startIrcServer, type IrcListener, type IrcServer } from "../../support/peers/irc-server";
import { pushBody } from "../../support/push-fixtures";
import { startSmtpSink, type SmtpSink } from "../../support/peers/smtp-sink";
import { startTaskTracker, type TaskTracker } from "../../support/peers/task-tracker";
import type { LocalStack } from "../../support/broker";

let tracker: TaskTracker;
let smtp: SmtpSink;
let irc: IrcServer;
let listener: IrcListener;
let stack: LocalStack;
let projectId: number;
let projectPath: string;
let config: typeof import("../../../config").config;
const SECRET = "integration-internal-secret-0123456789abcdef";
const originalEnv = { ...process.env };
/** Every call the services make to accounts.projectById (a broker middleware counts them). */
const projectLookups: number[] = [];
let savedEnv: Record<string, string | undefined> = {};

/** A client without a private token: the internal API takes the shared secret instead. */
function internal(): Client {
	return client(stack.url, undefined);
}
const post = (body: unknown, secret: string | null = SECRET) =>
	internal().post("/internal/push", { body, headers: secret === null ? {} : { "Gitlab-Shared-Secret": secret } });

beforeAll(async () => {
	[tracker, smtp, irc] = await Promise.all([startTaskTracker(["12", "13"]), startSmtpSink(), startIrcServer()]);
	listener = await listenOnIrc(irc, "#dev");
	Object.assign(
		process.env,
		(savedEnv = {
			TASK_TRACKER_API_URL: tracker.apiUrl,
			SMTP_URL: smtp.url,
			ALLOW_LOCAL_REQUESTS: "true",
			IRC_MESSAGE_INTERVAL_MS: "10",
			PUSH_RETRY_DELAY_MS: "50",
			PUSH_MAX_DELIVERIES: "3",
			OUTBOUND_TIMEOUT_MS: "2000",
			GITLAB_URL: "http://gitlab.example.com",
		}),
	);
	savedEnv = Object.fromEntries(Object.keys(savedEnv).map(k => [k, originalEnv[k]]));
	// config/ reads the environment once: load everything after the peers' ports are known.
	config = (await import("../../../config")).config;
	const { ChannelsMiddlewares } = await import("../../../middlewares/channels.middleware");
	const { startLocal } = await import("../../support/broker");
	const services = await Promise.all(
		["api", "accounts", "integrations", "events", "workers/task-tracker-commenter", "workers/push-mailer", "workers/irc-sender"].map(
			async name => (await import(`../../../services/${name}.service`)).default as ServiceSchema,
		),
	);
	// Moleculer's types give a `call` hook the return type of a call rather than of a wrapped `call`.
	const countProjectLookups = {
		name: "CountProjectLookups",
		call(next: (name: string, params: unknown, opts: unknown) => unknown) {
			return (name: string, params: unknown, opts: unknown) => {
				if (name === "accounts.projectById") projectLookups.push((params as { id: number }).id);
				return next(name, params, opts);
			};
		},
	} as unknown as Middleware;
	stack = await startLocal(services, { middlewares: [...ChannelsMiddlewares(config), countProjectLookups] });
	const project = (await stack.api().post("/projects", { body: { name: "push-demo" } })).body;
	projectId = project.id;
	projectPath = project.path_with_namespace;
	const api = stack.api();
	expect(
		(await api.put(`/projects/${projectId}/services/task-tracker-comments`, { form: { api_key: "tracker-token", restrict_to_branch: "master" } })).status,
	).toBe(200);
	expect((await api.put(`/projects/${projectId}/services/emails-on-push`, { form: { recipients: "dev@example.com ops@example.com" } })).status).toBe(200);
	expect((await api.put(`/projects/${projectId}/services/irc-gateway`, { form: { recipients: `irc://127.0.0.1:${irc.port}/#dev` } })).status).toBe(200);
}, 60000);

afterAll(async () => {
	for (const [k, v] of Object.entries(savedEnv))
		if (v === undefined) delete process.env[k];
		else process.env[k] = v;
	await stack?.stop();
	await listener?.close();
	await Promise.all([tracker?.stop(), smtp?.stop(), irc?.stop()]);
});

describe("POST /internal/push", () => {
	it("needs the shared secret: 401 without or with a wrong one, 404 when the internal API is off", async () => {
		const body = pushBody({ projectId, path: projectPath });
		for (const secret of [null, "wrong", ""]) {
			const res = await post(body, secret);
			expect(res.status).toBe(401);
			expect(res.body).toEqual({ message: "401 Unauthorized" });
		}
		const saved = config.internalApiSecret;
		config.internalApiSecret = "";
		try {
			expect((await post(body)).status).toBe(404);
		} finally {
			config.internalApiSecret = saved;
		}
	});

	it("refuses an invalid payload with a GitLab-style 400 and an unknown project with 404", async () => {
		const bad = await post({ ...pushBody({ projectId, path: projectPath }), ref: "master" });
		expect(bad.status).toBe(400);
		expect(bad.body).toEqual({ error: "ref is invalid" });
		const missing = await post({ object_kind: "push" });
		expect(missing.status).toBe(400);
		expect(missing.body).toEqual({ error: "ref is missing" });
		const unknown = await post(pushBody({ projectId: 999999, path: projectPath }));
		expect(unknown.status).toBe(404);
		expect(unknown.body).toEqual({ message: "404 Project Not Found" });
	});

	it("asks accounts about a project once, and takes a push for a project created after one was refused", async () => {
		const next = projectId + 1;
		const refused = await post(pushBody({ projectId: next, path: "root/later" }));
		expect(refused.status).toBe(404);
		const created = await stack.api().post("/projects", { body: { name: "later" } });
		expect(created.status).toBe(201);
		expect(created.body.id).toBe(next);
		projectLookups.length = 0;
		for (let i = 0; i < 3; i++)
			expect((await post(pushBody({ projectId: next, path: created.body.path_with_namespace, commits: [{ message: `later ${i}` }] }))).status).toBe(202);
		// The refusal was not remembered; the project, once found, is.
		expect(projectLookups).toEqual([next]);
	});

	it("answers 202 with the event id, and all three workers deliver", async () => {
		const before = { comments: tracker.requests.length, mails: smtp.messages.length, irc: listener.messages.length };
		const body = pushBody({ projectId, path: projectPath, userName: "Jane", commits: [{ message: "fix #12 crash on start", author: "Ada" }] });
		const res = await post(body);
		expect(res.status).toBe(202);
		expect(res.body).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/) });

		await waitFor("the comment and completion", () => tracker.tasks.get("12") === true);
		expect(tracker.comments.get("12")).toEqual([
			`Jane pushed to branch master of ${projectPath.split("/")[0]} / push-demo ( ${body.commits[0].url} ): fix #12 crash on start`,
		]);
		expect(tracker.requests.slice(before.comments).every(r => r.authorization === "Bearer tracker-token")).toBe(true);

		await waitFor("two mails", () => smtp.messages.length === before.mails + 2);
		const mails = smtp.messages.slice(before.mails);
		expect(mails.map(m => (m.to as { text: string }).text).sort()).toEqual(["dev@example.com", "ops@example.com"]);
		expect(mails[0].subject).toBe(`[Git][${projectPath}][master] fix #12 crash on start`);

		await waitFor("two IRC lines", () => listener.messages.length === before.irc + 2);
		expect(listener.messages.slice(before.irc).map(m => m.text)).toEqual([
			`[push-demo] Jane pushed 1 new commit to master: http://gitlab.example.com/${projectPath}/compare/${body.before.slice(0, 8)}...${body.after.slice(0, 8)}`,
			`push-demo/master ${body.after.slice(0, 8)} Ada (1 file): fix #12 crash on start`,
		]);
	});

	it("retries a peer that is down, dead-letters the event, and replays it to that worker only", async () => {
		tracker.down(503);
		const mailsBefore = smtp.messages.length;
		const gets = () => tracker.requests.filter(r => r.method === "GET" && r.path === "/api/1.0/tasks/13").length;
		const res = await post(pushBody({ projectId, path: projectPath, commits: [{ message: "see #13" }] }));
		expect(res.status).toBe(202);
		const id = res.body.id;
		const dead = await waitFor("a dead letter", async () => {
			const list = await internal().get("/internal/dead-letters", { headers: { "Gitlab-Shared-Secret": SECRET } });
			return list.body.find((d: { event_id: string }) => d.event_id === id);
		});
		expect(gets()).toBe(3);
		expect(dead).toMatchObject({
			group: "task-tracker-commenter",
			project_id: projectId,
			ref: "refs/heads/master",
			error: expect.stringContaining("failed"),
		});
		// The other workers were not held up by the tracker.
		await waitFor("the mails of that push", () => smtp.messages.length === mailsBefore + 2);
		expect((await stack.api().get("/user")).status).toBe(200);

		tracker.up();
		const replay = await internal().post(`/internal/dead-letters/${encodeURIComponent(dead.id)}/replay`, { headers: { "Gitlab-Shared-Secret": SECRET } });
		expect(replay.status).toBe(200);
		expect(replay.body).toEqual({ id, group: "task-tracker-commenter", replayed: true });
		await waitFor("the replayed comment", () => (tracker.comments.get("13") ?? []).length === 1);
		expect(smtp.messages.length).toBe(mailsBefore + 2);
		const list = await internal().get("/internal/dead-letters", { headers: { "Gitlab-Shared-Secret": SECRET } });
		expect(list.body.find((d: { event_id: string }) => d.event_id === id)).toBeUndefined();
		const again = await internal().post(`/internal/dead-letters/${encodeURIComponent(dead.id)}/replay`, { headers: { "Gitlab-Shared-Secret": SECRET } });
		expect(again.status).toBe(404);
	});

	it("refuses to call a tracker on the local network without ALLOW_LOCAL_REQUESTS, for good (no retries, no dead letter)", async () => {
		config.allowLocalRequests = false;
		try {
			const before = tracker.requests.length;
			const mailsBefore = smtp.messages.length;
			const res = await post(pushBody({ projectId, path: projectPath, commits: [{ message: "fix #12 again" }] }));
			expect(res.status).toBe(202);
			// The mailer's SMTP server is the operator's own (SMTP_URL), not a user-chosen target.
			await waitFor("the mails of that push", () => smtp.messages.length === mailsBefore + 2);
			await new Promise(r => setTimeout(r, 300));
			expect(tracker.requests.length).toBe(before);
			const list = await internal().get("/internal/dead-letters", { headers: { "Gitlab-Shared-Secret": SECRET } });
			expect(list.body.find((d: { event_id: string }) => d.event_id === res.body.id)).toBeUndefined();
		} finally {
			config.allowLocalRequests = true;
		}
	});
});
