/**
 * Push events end to end over the real NATS JetStream and Redis: the gateway, accounts,
 * integrations, events and the three workers as separate processes, each worker against a
 * real peer started here (an HTTP task tracker, smtp-server, ngircd with listening clients).
 *
 * Durability: an event posted before any worker ever started is delivered when they start; a
 * worker killed mid-stream and started again loses nothing and delivers nothing twice; a peer
 * that is down is retried, then dead-lettered (the API and the other workers unaffected), and
 * the dead letter is replayed.
 */
import { startCluster, type Cluster } from "../../support/cluster";
import { client, waitFor } from "../../support/http";
import { listenOnIrc, startIrcServer, type IrcListener, type IrcServer } from "../../support/peers/irc-server";
import { pushBody } from "../../support/push-fixtures";
import { startSmtpSink, type SmtpSink } from "../../support/peers/smtp-sink";
import { startTaskTracker, type TaskTracker } from "../../support/peers/task-tracker";

let cluster: Cluster;
let tracker: TaskTracker;
let smtp: SmtpSink;
let irc: IrcServer;
let dev: IrcListener;
let ops: IrcListener;
let projectId: number;
let projectPath: string;
let projectName: string;

const WORKERS = { tracker: "workers/task-tracker-commenter", mailer: "workers/push-mailer", irc: "workers/irc-sender" };

const secret = () => ({ "Gitlab-Shared-Secret": cluster.internalSecret });
const postPush = (body: unknown) => client(cluster.url).post("/internal/push", { body, headers: secret() });
const deadLetters = async () => (await client(cluster.url).get("/internal/dead-letters", { headers: secret() })).body as any[];
const mailsWithSubject = (text: string) => smtp.messages.filter(m => m.subject?.includes(text));
const put = (slug: string, form: Record<string, string>) => cluster.api().put(`/projects/${projectId}/services/${slug}`, { form });

async function push(spec: Parameters<typeof pushBody>[0]) {
	const body = pushBody({ projectId, path: projectPath, userName: "Jane", ...spec });
	const res = await postPush(body);
	expect(res.status).toBe(202);
	return { body, id: res.body.id as string };
}

beforeAll(async () => {
	[tracker, smtp, irc] = await Promise.all([startTaskTracker(["12", "13", "21"]), startSmtpSink(), startIrcServer()]);
	[dev, ops] = await Promise.all([listenOnIrc(irc, "#dev"), listenOnIrc(irc, "#ops", { key: "sesame" })]);
	// The workers are not started yet: the first test posts an event before they exist.
	cluster = await startCluster({
		nodes: { api: "api", accounts: "accounts", integrations: "integrations", events: "events" },
		env: {
			TASK_TRACKER_API_URL: tracker.apiUrl,
			SMTP_URL: smtp.url,
			ALLOW_LOCAL_REQUESTS: "true",
			GITLAB_URL: "http://gitlab.example.com",
			IRC_MESSAGE_INTERVAL_MS: "20",
			PUSH_RETRY_DELAY_MS: "200",
			PUSH_MAX_DELIVERIES: "4",
			PUSH_ACK_WAIT_MS: "3000",
			OUTBOUND_TIMEOUT_MS: "3000",
			// The workers keep a project's settings far longer than any test: only the change
			// announcement can make them read a change (see "sees a settings change").
			PUSH_SETTINGS_CACHE_TTL_MS: "600000",
		},
	});
	await cluster.waitForRoute("GET", "/projects/1/services/emails-on-push");
	const project = (await cluster.api().post("/projects", { body: { name: "pushed" } })).body;
	projectId = project.id;
	projectPath = project.path_with_namespace;
	projectName = project.name;
	// Configured as a new user would, through the API.
	expect((await put("task-tracker-comments", { api_key: "tracker-token" })).status).toBe(200);
	expect((await put("emails-on-push", { recipients: "dev@example.com ops@example.com" })).status).toBe(200);
	expect((await put("irc-gateway", { recipients: `irc://127.0.0.1:${irc.port}/#dev irc://127.0.0.1:${irc.port}/ops?key=sesame` })).status).toBe(200);
	await waitFor("events to be served", async () => (await postPush({})).status === 400, 30000);
}, 120000);

afterAll(async () => {
	// Cluster.stop() also deletes the namespace's push streams and delivery records.
	await cluster?.stop();
	await Promise.all([dev?.close(), ops?.close()]);
	await Promise.all([tracker?.stop(), smtp?.stop(), irc?.stop()]);
}, 60000);

it("delivers an event posted before any worker had ever started, once the workers start", async () => {
	const { body } = await push({ commits: [{ message: "fix #12 first push", author: "Ada", added: ["a.txt"], modified: [] }] });
	await new Promise(r => setTimeout(r, 500));
	expect(tracker.requests).toHaveLength(0);

	await Promise.all(Object.entries(WORKERS).map(([name, services]) => cluster.spawnNode(name, services)));

	await waitFor("task 12 commented and completed", () => tracker.tasks.get("12") === true, 30000);
	expect(tracker.comments.get("12")).toEqual([
		`Jane pushed to branch master of ${projectPath.split("/")[0]} / ${projectName} ( ${body.commits[0].url} ): fix #12 first push`,
	]);
	expect(tracker.requests.map(r => `${r.method} ${r.path} ${r.authorization}`)).toEqual([
		"GET /api/1.0/tasks/12 Bearer tracker-token",
		"POST /api/1.0/tasks/12/stories Bearer tracker-token",
		"PUT /api/1.0/tasks/12 Bearer tracker-token",
	]);

	await waitFor("one mail per recipient", () => mailsWithSubject("fix #12 first push").length === 2, 30000);
	const mail = mailsWithSubject("fix #12 first push")[0];
	expect(mail.subject).toBe(`[Git][${projectPath}][master] fix #12 first push`);
	expect(mail.from?.value).toEqual([{ name: "Jane", address: "gitlab@localhost" }]);
	expect(mail.text).toContain(`Jane pushed to branch master at ${projectPath.split("/")[0]} / ${projectName}`);
	expect(mail.text).toContain("- + a.txt");

	const summary = `[${projectName}] Jane pushed 1 new commit to master: http://gitlab.example.com/${projectPath}/compare/${body.before.slice(0, 8)}...${body.after.slice(0, 8)}`;
	const commitLine = `${projectName}/master ${body.after.slice(0, 8)} Ada (1 file): fix #12 first push`;
	await waitFor("the IRC lines in both channels", () => dev.messages.length >= 2 && ops.messages.length >= 2, 30000);
	expect(dev.messages.map(m => m.text)).toEqual([summary, commitLine]);
	expect(ops.messages.map(m => [m.target, m.text])).toEqual([
		["#ops", summary],
		["#ops", commitLine],
	]);
}, 90000);

it("comments only on the branches listed in restrict_to_branch", async () => {
	expect((await put("task-tracker-comments", { api_key: "tracker-token", restrict_to_branch: "master, release" })).status).toBe(200);
	const before = tracker.requests.length;
	await push({ ref: "refs/heads/feature", commits: [{ message: "touches #13 on feature" }] });
	await waitFor("the feature push's mails", () => mailsWithSubject("touches #13 on feature").length === 2, 30000);
	await push({ ref: "refs/heads/release", commits: [{ message: "fixes #13 on release" }] });
	await waitFor("task 13 completed", () => tracker.tasks.get("13") === true, 30000);
	expect(tracker.comments.get("13")).toHaveLength(1);
	expect(tracker.comments.get("13")![0]).toMatch(/pushed to branch release of .*: fixes #13 on release$/);
	expect(tracker.requests.slice(before).map(r => `${r.method} ${r.path}`)).toEqual([
		"GET /api/1.0/tasks/13",
		"POST /api/1.0/tasks/13/stories",
		"PUT /api/1.0/tasks/13",
	]);
}, 60000);

it("leaves the diff out with disable_diffs, and puts it in without", async () => {
	const diffs = [{ old_path: "lib/x.rb", new_path: "lib/x.rb", diff: "@@ -1 +1 @@\n-puts 1\n+puts 2\n" }];
	expect((await put("emails-on-push", { recipients: "dev@example.com", disable_diffs: "true" })).status).toBe(200);
	await push({ commits: [{ message: "diff-off change" }], diffs });
	// Settings are read when the mailer takes the event (as GitLab's job reads them): the next change waits for this mail.
	await waitFor("the diff-off mail", () => mailsWithSubject("diff-off change").length === 1, 30000);
	expect((await put("emails-on-push", { recipients: "dev@example.com", disable_diffs: "0" })).status).toBe(200);
	await push({ commits: [{ message: "diff-on change" }], diffs });
	await waitFor("both mails", () => mailsWithSubject("diff-off change").length === 1 && mailsWithSubject("diff-on change").length === 1, 30000);
	const off = mailsWithSubject("diff-off change")[0].text!;
	const on = mailsWithSubject("diff-on change")[0].text!;
	expect(off).toContain("1 changed file:\n\n- lib/x.rb");
	expect(off).not.toContain("Changes:");
	expect(off).not.toContain("+puts 2");
	expect(on).toContain("Changes:\n\n=====================================\nlib/x.rb\n=====================================\n@@ -1 +1 @@\n-puts 1\n+puts 2");
	expect((await put("emails-on-push", { recipients: "dev@example.com ops@example.com" })).status).toBe(200);
}, 60000);

it("mails only the default branch's pushes under v4's branches_to_be_notified, tag pushes always, and every branch with all", async () => {
	const settings = `/projects/${projectId}/integrations/emails-on-push`;
	const v4 = client(cluster.url.replace(/\/api\/v3$/, "/api/v4"), cluster.rootToken);
	const onlyDefault = await v4.put(settings, { body: { recipients: "dev@example.com", branches_to_be_notified: "default" } });
	expect([onlyDefault.status, onlyDefault.body.properties.branches_to_be_notified]).toEqual([200, "default"]);
	// Posted first, the feature push is taken before the master one; by the master push's mail, it has sent nothing.
	await push({ ref: "refs/heads/feature", commits: [{ message: "feature push, not mailed" }] });
	await push({ ref: "refs/tags/v9", commits: [{ message: "tag push, mailed" }] });
	await push({ commits: [{ message: "master push, mailed" }] });
	await waitFor("the master and tag pushes' mails", () => mailsWithSubject("master push, mailed").length === 1 && mailsWithSubject("v9").length === 1, 30000);
	expect(mailsWithSubject("feature push, not mailed")).toEqual([]);
	// v3 does not know the setting: its PUT keeps it.
	expect((await put("emails-on-push", { recipients: "dev@example.com" })).status).toBe(200);
	expect((await v4.get(settings)).body.properties.branches_to_be_notified).toBe("default");
	expect((await v4.put(settings, { body: { recipients: "dev@example.com ops@example.com", branches_to_be_notified: "all" } })).status).toBe(200);
	await push({ ref: "refs/heads/feature", commits: [{ message: "feature push, mailed" }] });
	await waitFor("the feature push's mails", () => mailsWithSubject("feature push, mailed").length === 2, 30000);
}, 60000);

it("colours IRC lines only with colorize_messages", async () => {
	const recipients = `irc://127.0.0.1:${irc.port}/#dev`;
	expect((await put("irc-gateway", { recipients, colorize_messages: "1" })).status).toBe(200);
	const start = dev.messages.length;
	const coloured = await push({ commits: [{ message: "colour me" }] });
	await waitFor("the coloured lines", () => dev.messages.length === start + 2, 30000);
	expect(dev.messages[start].text).toBe(
		`[\x0304${projectName}\x0f] Jane pushed \x021\x0f new commit to \x0305master\x0f: \x0302\x1fhttp://gitlab.example.com/${projectPath}/compare/${coloured.body.before.slice(0, 8)}...${coloured.body.after.slice(0, 8)}\x0f`,
	);
	expect((await put("irc-gateway", { recipients, colorize_messages: "false" })).status).toBe(200);
	await push({ commits: [{ message: "plain please" }] });
	await waitFor("the plain lines", () => dev.messages.length === start + 4, 30000);
	expect(dev.messages[start + 3].text).toMatch(/^\S+\/master [0-9a-f]{8} Ada Lovelace \(1 file\): plain please$/);
	const formattingCodes = ["\x02", "\x03", "\x0f", "\x1f"];
	expect(dev.messages.slice(start + 2).some(m => formattingCodes.some(code => m.text.includes(code)))).toBe(false);
}, 60000);

it("sees a settings change at once, although each worker keeps the settings it read, in its own process", async () => {
	expect((await put("emails-on-push", { recipients: "first@example.com" })).status).toBe(200);
	await push({ commits: [{ message: "settings before the change" }] });
	await waitFor("the first mail", () => mailsWithSubject("settings before the change").length === 1, 30000);
	expect(mailsWithSubject("settings before the change").map(m => (m.to as { text: string }).text)).toEqual(["first@example.com"]);

	// The mailer (another process than integrations) has the first settings now; the change reaches it as a broadcast.
	expect((await put("emails-on-push", { recipients: "second@example.com" })).status).toBe(200);
	await push({ commits: [{ message: "settings after the change" }] });
	await waitFor("the second mail", () => mailsWithSubject("settings after the change").length === 1, 30000);
	expect(mailsWithSubject("settings after the change").map(m => (m.to as { text: string }).text)).toEqual(["second@example.com"]);
	expect(mailsWithSubject("settings before the change")).toHaveLength(1);

	expect((await put("emails-on-push", { recipients: "dev@example.com ops@example.com" })).status).toBe(200);
}, 60000);

it("loses nothing and delivers nothing twice when a worker is killed mid-stream and started again", async () => {
	const N = 20;
	smtp.hold();
	const ids: string[] = [];
	for (let i = 0; i < N; i++) ids.push((await push({ commits: [{ message: `crash-test ${i}` }] })).id);
	// Some mails are in the middle of being sent (received, not yet acknowledged) when the worker dies.
	await waitFor("mails in flight", () => smtp.held >= 2, 30000);
	await cluster.kill("mailer", "SIGKILL");
	// Let the sink see those connections close: their messages were never acknowledged.
	await new Promise(r => setTimeout(r, 500));
	smtp.release();
	expect(mailsWithSubject("crash-test").length).toBe(0);

	await cluster.spawnNode("mailer-2", WORKERS.mailer);
	await waitFor("every crash-test mail", () => mailsWithSubject("crash-test").length >= 2 * N, 60000);
	// Anything late would show up now.
	await new Promise(r => setTimeout(r, 2000));
	const counts = new Map<string, number>();
	for (const m of mailsWithSubject("crash-test")) {
		const k = `${m.subject}|${(m.to as { text: string }).text}`;
		counts.set(k, (counts.get(k) ?? 0) + 1);
	}
	expect(counts.size).toBe(2 * N);
	expect([...counts.values()].every(c => c === 1)).toBe(true);
	expect((await deadLetters()).filter(d => ids.includes(d.event_id))).toEqual([]);
}, 120000);

it("retries a peer that is down, then dead-letters the event; the API and the other workers carry on; a replay delivers it", async () => {
	tracker.down(503);
	const tries = () => tracker.requests.filter(r => r.path === "/api/1.0/tasks/21").length;
	const { id } = await push({ commits: [{ message: "see #21 while down" }] });

	// The API is not held up by the failing peer (a hung request would fail the test at its timeout).
	expect((await cluster.api().get("/user")).status).toBe(200);
	await waitFor("the other workers' mails", () => mailsWithSubject("see #21 while down").length === 2, 30000);

	const dead = await waitFor("the dead letter", async () => (await deadLetters()).find(d => d.event_id === id), 60000);
	expect(dead).toMatchObject({ group: "task-tracker-commenter", channel: `${cluster.namespace}.push`, project_id: projectId, ref: "refs/heads/master" });
	expect(tries()).toBe(4);
	// NAK with backoff (PUSH_RETRY_DELAY_MS=200, then 4x): a plain NAK would redeliver within a few ms.
	const at = tracker.requests.filter(r => r.path === "/api/1.0/tasks/21").map(r => r.at);
	const gaps = at.slice(1).map((t, i) => t - at[i]);
	expect(gaps[0]).toBeGreaterThanOrEqual(150);
	expect(gaps[1]).toBeGreaterThanOrEqual(600);
	expect(gaps[2]).toBeGreaterThanOrEqual(2400);

	tracker.up();
	const replay = await client(cluster.url).post(`/internal/dead-letters/${dead.id}/replay`, { headers: secret() });
	expect(replay.status).toBe(200);
	expect(replay.body).toEqual({ id, group: "task-tracker-commenter", replayed: true });
	await waitFor("the replayed comment", () => (tracker.comments.get("21") ?? []).length === 1, 30000);
	expect((await deadLetters()).find(d => d.event_id === id)).toBeUndefined();
	// The replay was for the task tracker only: no second mail.
	await new Promise(r => setTimeout(r, 1000));
	expect(mailsWithSubject("see #21 while down")).toHaveLength(2);
}, 120000);
