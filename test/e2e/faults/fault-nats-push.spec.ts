/**
 * Push events after a long NATS outage: the gateway, accounts, integrations, events and the push
 * mailer as separate processes over a NATS of this test's own (never the machine's shared one),
 * which is killed for longer than a NATS client's default reconnect attempts (10 tries, 2 s apart)
 * and started again. The push channel's own connections (the publisher's and the worker's) give up
 * no more than the transporter does: once NATS is back, pushes are accepted and mailed again
 * without restarting anything.
 */
import { startCluster, type Cluster } from "../../support/cluster";
import { client, waitFor } from "../../support/http";
import { startSmtpSink, type SmtpSink } from "../../support/peers/smtp-sink";
import { PrivateServer } from "../../support/private-servers";
import { pushBody } from "../../support/push-fixtures";

/** Longer than nats.js's default reconnect attempts last (about 20 s). */
const OUTAGE_MS = 26_000;

let nats: PrivateServer;
let smtp: SmtpSink;
let cluster: Cluster;
let projectId: number;
let projectPath: string;

const postPush = (message: string) =>
	client(cluster.url).post("/internal/push", {
		body: pushBody({ projectId, path: projectPath, userName: "Jane", commits: [{ message }] }),
		headers: { "Gitlab-Shared-Secret": cluster.internalSecret },
	});
const mailed = (text: string) => smtp.messages.some(m => m.text?.includes(text));

beforeAll(async () => {
	[nats, smtp] = await Promise.all([PrivateServer.nats(), startSmtpSink()]);
	cluster = await startCluster({
		nodes: { api: "api", accounts: "accounts", integrations: "integrations", events: "events", mailer: "workers/push-mailer" },
		env: { TRANSPORTER: nats.url, SMTP_URL: smtp.url, ALLOW_LOCAL_REQUESTS: "true", PUSH_RETRY_DELAY_MS: "200", RATE_LIMIT_PER_MINUTE: "0" },
	});
	await cluster.waitForRoute("GET", "/projects/1/services/emails-on-push");
	const project = (await cluster.api().post("/projects", { body: { name: "outage" } })).body;
	[projectId, projectPath] = [project.id, project.path_with_namespace];
	expect((await cluster.api().put(`/projects/${projectId}/services/emails-on-push`, { form: { recipients: "dev@example.com" } })).status).toBe(200);
	await waitFor("a push to be mailed", async () => (await postPush("before the outage")).status === 202 && mailed("before the outage"), 30000, 250);
}, 120000);

afterAll(async () => {
	await cluster?.stop();
	await nats?.destroy();
	await smtp?.stop();
});

it("accepts and delivers pushes again once NATS is back from an outage longer than a client's default reconnect attempts", async () => {
	await nats.stop("SIGKILL");
	await new Promise(resolve => setTimeout(resolve, OUTAGE_MS));
	await nats.start();
	// The processes rediscover each other, then the push is published and consumed again.
	await waitFor("a push to be accepted", async () => (await postPush("after the outage")).status === 202, 60000, 500);
	await waitFor("the push to be mailed", () => mailed("after the outage"), 60000, 250);
	for (const [name, node] of cluster.nodes) expect([name, node.child.exitCode]).toEqual([name, null]);
}, 180000);
