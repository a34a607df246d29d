/**
 * The `push` channel on Redis Streams (CHANNELS=redis://…) with NATS as transporter: an event
 * posted before the mailer ever started is delivered when it starts; a refusing SMTP server is
 * retried, then the event is dead-lettered and can be replayed.
 */
import { startCluster, type Cluster } from "../../support/cluster";
import { client, waitFor } from "../../support/http";
import { pushBody } from "../../support/push-fixtures";
import { REDIS_URL } from "../../support/servers";
import { startSmtpSink, type SmtpSink } from "../../support/peers/smtp-sink";

let cluster: Cluster;
let smtp: SmtpSink;
let projectId: number;
let projectPath: string;

const secret = () => ({ "Gitlab-Shared-Secret": cluster.internalSecret });
const deadLetters = async () => (await client(cluster.url).get("/internal/dead-letters", { headers: secret() })).body as any[];
const mails = (text: string) => smtp.messages.filter(m => m.subject?.includes(text));

async function push(message: string) {
	const body = pushBody({ projectId, path: projectPath, commits: [{ message }] });
	const res = await client(cluster.url).post("/internal/push", { body, headers: secret() });
	expect(res.status).toBe(202);
	return res.body.id as string;
}

beforeAll(async () => {
	smtp = await startSmtpSink();
	cluster = await startCluster({
		nodes: { api: "api", accounts: "accounts", integrations: "integrations", events: "events" },
		env: { CHANNELS: REDIS_URL, SMTP_URL: smtp.url, PUSH_RETRY_DELAY_MS: "200", PUSH_MAX_DELIVERIES: "3", OUTBOUND_TIMEOUT_MS: "1000" },
	});
	await cluster.waitForRoute("GET", "/projects/1/services/emails-on-push");
	const project = (await cluster.api().post("/projects", { body: { name: "redis-pushed" } })).body;
	projectId = project.id;
	projectPath = project.path_with_namespace;
	expect((await cluster.api().put(`/projects/${projectId}/services/emails-on-push`, { form: { recipients: "dev@example.com" } })).status).toBe(200);
	await waitFor("events to be served", async () => (await client(cluster.url).post("/internal/push", { body: {}, headers: secret() })).status === 400, 30000);
}, 120000);

afterAll(async () => {
	// Cluster.stop() also deletes the namespace's push streams and delivery records.
	await cluster?.stop();
	await smtp?.stop();
}, 60000);

it("keeps an event for a consumer group that has not started yet", async () => {
	await push("before the mailer");
	await new Promise(r => setTimeout(r, 500));
	expect(smtp.messages).toHaveLength(0);
	await cluster.spawnNode("mailer", "workers/push-mailer");
	await waitFor("the mail", () => mails("before the mailer").length === 1, 30000);
	expect(mails("before the mailer")[0].subject).toBe(`[Git][${projectPath}][master] before the mailer`);
}, 60000);

it("retries a refusing SMTP server, dead-letters the event, and replays it", async () => {
	smtp.refuse(451);
	const id = await push("refused for now");
	const dead = await waitFor("the dead letter", async () => (await deadLetters()).find(d => d.event_id === id), 60000);
	expect(dead).toMatchObject({ group: "push-mailer", channel: `${cluster.namespace}.push`, project_id: projectId });
	expect(smtp.refused).toBe(3);
	smtp.accept();
	const replay = await client(cluster.url).post(`/internal/dead-letters/${encodeURIComponent(dead.id)}/replay`, { headers: secret() });
	expect(replay.status).toBe(200);
	await waitFor("the replayed mail", () => mails("refused for now").length === 1, 30000);
	expect((await deadLetters()).find(d => d.event_id === id)).toBeUndefined();
}, 90000);
