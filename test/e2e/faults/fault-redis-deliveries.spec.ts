/**
 * Redis restarted without persistence in the middle of a burst of pushes whose deliveries are
 * being retried, over the real NATS JetStream: every event is delivered to every peer exactly
 * once.
 *
 * While the burst runs, each event is partly delivered: its mail to dev@ is accepted and its
 * task commented, while the mail to ops@ is refused (451) and completing the task fails (503),
 * so the workers keep retrying it. Redis (the cluster's cache and rate-limit store, a server of
 * this test's own) is then killed and started again empty. The retries that follow must not
 * mail dev@ or comment a second time: the delivery records that say so are not in Redis but in
 * a JetStream bucket beside the events.
 */
import { startCluster, type Cluster } from "../../support/cluster";
import { client, waitFor } from "../../support/http";
import { PrivateServer } from "../../support/private-servers";
import { pushBody } from "../../support/push-fixtures";
import { startSmtpSink, type SmtpSink } from "../../support/peers/smtp-sink";
import { startTaskTracker, type TaskTracker } from "../../support/peers/task-tracker";

const N = 30;
const CONCURRENCY = 3;
const PAUSE_MS = 60;

let redis: PrivateServer;
let cluster: Cluster;
let tracker: TaskTracker;
let smtp: SmtpSink;
let projectId: number;
let projectPath: string;

const taskIds = Array.from({ length: N }, (_, i) => String(100 + i));
const messageOf = (i: number) => `fix #${100 + i} while redis restarts ${i}`;

beforeAll(async () => {
	[redis, tracker, smtp] = await Promise.all([PrivateServer.redis(), startTaskTracker(taskIds), startSmtpSink()]);
	cluster = await startCluster({
		nodes: {
			api: "api",
			accounts: "accounts",
			integrations: "integrations",
			events: "events",
			mailer: "workers/push-mailer",
			tracker: "workers/task-tracker-commenter",
		},
		env: {
			CACHER: redis.url,
			TASK_TRACKER_API_URL: tracker.apiUrl,
			SMTP_URL: smtp.url,
			ALLOW_LOCAL_REQUESTS: "true",
			// Every event of the burst in flight at once (an event being retried holds its place).
			PUSH_MAX_IN_FLIGHT: String(2 * N),
			PUSH_RETRY_DELAY_MS: "200",
			PUSH_MAX_DELIVERIES: "50",
			PUSH_ACK_WAIT_MS: "5000",
			OUTBOUND_TIMEOUT_MS: "3000",
		},
	});
	await cluster.waitForRoute("GET", "/projects/1/services/emails-on-push");
	const project = (await cluster.api().post("/projects", { body: { name: "redis-restart" } })).body;
	projectId = project.id;
	projectPath = project.path_with_namespace;
	const put = (slug: string, form: Record<string, string>) => cluster.api().put(`/projects/${projectId}/services/${slug}`, { form });
	expect((await put("task-tracker-comments", { api_key: "tracker-token" })).status).toBe(200);
	expect((await put("emails-on-push", { recipients: "dev@example.com ops@example.com" })).status).toBe(200);
	const secret = { "Gitlab-Shared-Secret": cluster.internalSecret };
	await waitFor("events to be served", async () => (await client(cluster.url).post("/internal/push", { body: {}, headers: secret })).status === 400, 30000);
}, 120000);

afterAll(async () => {
	await cluster?.stop();
	await Promise.all([tracker?.stop(), smtp?.stop(), redis?.destroy()]);
}, 60000);

it("mails and comments exactly once although Redis lost everything while deliveries were being retried", async () => {
	smtp.refuseRecipient("ops@example.com");
	tracker.down(503, r => r.method === "PUT");
	const accepted: number[] = [];
	let next = 0;
	const headers = { "Gitlab-Shared-Secret": cluster.internalSecret };
	const loops = Array.from({ length: CONCURRENCY }, async () => {
		while (next < N) {
			const i = next++;
			const body = pushBody({ projectId, path: projectPath, userName: "Jane", commits: [{ message: messageOf(i) }] });
			const res = await client(cluster.url).post("/internal/push", { body, headers });
			expect([i, res.status]).toEqual([i, 202]);
			accepted.push(i);
			await new Promise(r => setTimeout(r, PAUSE_MS));
		}
	});

	const mailsTo = (i: number, to: string) => smtp.messages.filter(m => m.subject?.endsWith(messageOf(i)) && (m.to as { text: string }).text === to).length;
	const completeTries = (i: number) => tracker.requests.filter(r => r.method === "PUT" && r.path === `/api/1.0/tasks/${100 + i}`).length;
	// The first third of the burst partly delivered and being retried.
	await waitFor(
		"partial deliveries being retried",
		() => accepted.length >= N / 3 && [...Array(N / 3).keys()].every(i => mailsTo(i, "dev@example.com") === 1 && completeTries(i) >= 2),
		30000,
		20,
	);
	await redis.stop("SIGKILL");
	await new Promise(r => setTimeout(r, 500));
	await redis.start();
	await Promise.all(loops);
	expect(accepted).toHaveLength(N);
	// Every event partly delivered before the peers recover.
	await waitFor(
		"every dev@ mail and comment",
		() => [...Array(N).keys()].every(i => mailsTo(i, "dev@example.com") >= 1 && tracker.comments.has(String(100 + i))),
		30000,
	);

	smtp.acceptRecipients();
	tracker.up();
	await waitFor(
		"every ops@ mail and completion",
		() => [...Array(N).keys()].every(i => mailsTo(i, "ops@example.com") >= 1 && tracker.tasks.get(String(100 + i)) === true),
		90000,
		250,
	);
	// Anything late or twice would show up now.
	await new Promise(r => setTimeout(r, 2000));
	for (let i = 0; i < N; i++)
		expect({ i, dev: mailsTo(i, "dev@example.com"), ops: mailsTo(i, "ops@example.com"), comments: tracker.comments.get(String(100 + i))?.length }).toEqual({
			i,
			dev: 1,
			ops: 1,
			comments: 1,
		});
	const dead = await client(cluster.url).get("/internal/dead-letters", { headers });
	expect([dead.status, dead.body]).toEqual([200, []]);
	for (const [name, node] of cluster.nodes) expect([name, node.child.exitCode]).toEqual([name, null]);
}, 180000);
