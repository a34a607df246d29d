/**
 * The workers scale on their backlog (docs/operations.md#scaling), checked against a real NATS: the
 * test's own server with its monitoring port, the split stack's events, integrations and workers as
 * separate processes with the ConfigMap's NAMESPACE, and a real SMTP server that can hold mails.
 * - The KEDA ScaledObjects of k8s/overlays/production-keda name the stream and the durable
 *   consumers the workers really create, read as KEDA's nats-jetstream scaler reads them
 *   (test/support/keda-scaler.ts: /jsz, where a wrong name makes the scaler fall back to the
 *   stream's last sequence; here it fails).
 * - While the SMTP server holds a burst back, the mailer's lag rises above its threshold (KEDA would
 *   add replicas) while its CPU stays under the CPU autoscaler's target (the HPA would not); its
 *   Prometheus gauge says the same; once the server answers again the lag falls to nothing.
 */
import { cpuMs } from "../../support/cpu";
import { startCluster, type Cluster } from "../../support/cluster";
import { appContainer, find, literalEnv, ofKind, renderOverlay, type K8sObject } from "../../support/deploy-manifests";
import { client, waitFor } from "../../support/http";
import { scalerLag, type NatsJetStreamTrigger } from "../../support/keda-scaler";
import { PrivateServer } from "../../support/private-servers";
import { metricValue } from "../../support/processes";
import { startSmtpSink, type SmtpSink } from "../../support/peers/smtp-sink";
import { pushBody } from "../../support/push-fixtures";

let nats: PrivateServer;
let smtp: SmtpSink;
let cluster: Cluster;
let objects: K8sObject[];
/** The production overlay without KEDA, rendered before any connection is held (kubectl runs synchronously). */
let production: K8sObject[];
let project: { id: number; path_with_namespace: string };

const NODES = { mailer: "workers/push-mailer", tracker: "workers/task-tracker-commenter", irc: "workers/irc-sender" } as const;
const configMap = () => find(objects, "ConfigMap", "gitlab-config").data as Record<string, string>;
const triggerOf = (so: K8sObject): NatsJetStreamTrigger => so.spec.triggers.find((t: { type: string }) => t.type === "nats-jetstream").metadata;
const scaledObjects = () => ofKind(objects, "ScaledObject");
/** The monitoring endpoint as the scaler reaches it: the test's server stands in for the Service `nats`. */
const endpoint = () => `127.0.0.1:${nats.monitorPort}`;
const lagOf = (consumer: string) => scalerLag(endpoint(), { ...triggerOf(find(objects, "ScaledObject", consumer)) });

/** The worker's own gauge of its backlog (mixins/push-backlog.mixin.ts), from its Prometheus endpoint. */
const gauge = (node: string, group: string) => metricValue(Number(cluster.nodes.get(node)!.env.METRICS_PORT), "push_consumer_backlog", { group });

beforeAll(async () => {
	objects = renderOverlay("production-keda");
	production = renderOverlay("production");
	[nats, smtp] = await Promise.all([PrivateServer.nats({ monitoring: true }), startSmtpSink()]);
	cluster = await startCluster({
		nodes: { api: "api", accounts: "accounts", integrations: "integrations", events: "events", ...NODES },
		redis: false,
		env: {
			TRANSPORTER: nats.url,
			// The names KEDA is given follow the ConfigMap's namespace; the stack runs with it.
			NAMESPACE: configMap().NAMESPACE,
			PUSH_MAX_IN_FLIGHT: configMap().PUSH_MAX_IN_FLIGHT,
			SMTP_URL: smtp.url,
			ALLOW_LOCAL_REQUESTS: "true",
			// A held mail waits for the server's answer, as on a slow server, rather than failing.
			OUTBOUND_TIMEOUT_MS: "120000",
		},
	});
	await cluster.waitForRoute("GET", "/projects/1/services/emails-on-push");
	project = (await cluster.api().post("/projects", { body: { name: "scaled" } })).body;
	expect((await cluster.api().put(`/projects/${project.id}/services/emails-on-push`, { form: { recipients: "dev@example.com" } })).status).toBe(200);
}, 180000);

afterAll(async () => {
	smtp?.release();
	await cluster?.stop();
	await Promise.all([smtp?.stop(), nats?.destroy()]);
}, 60000);

it("each ScaledObject names a stream and a durable consumer the workers created, and scales the worker that consumes it", async () => {
	expect(
		scaledObjects()
			.map(so => so.metadata.name)
			.sort(),
	).toEqual(["irc-sender", "push-mailer", "task-tracker-commenter"]);
	for (const so of scaledObjects()) {
		const trigger = triggerOf(so);
		// The Deployment it scales runs the worker whose group is the trigger's consumer.
		const deployment = find(objects, "Deployment", so.spec.scaleTargetRef.name);
		expect(literalEnv(appContainer(deployment), "SERVICES")).toBe(`workers/${trigger.consumer}`);
		expect([trigger.consumer, await lagOf(trigger.consumer)]).toEqual([trigger.consumer, 0]);
		// A name one letter off is not found: the scaler would scale on the stream's last sequence.
		await expect(scalerLag(endpoint(), { ...trigger, consumer: `${trigger.consumer}s` })).rejects.toThrow(/no consumer/);
		await expect(scalerLag(endpoint(), { ...trigger, stream: `${trigger.stream}s` })).rejects.toThrow(/no stream/);
	}
});

it("a mailer held back by its SMTP server: its lag rises above the threshold while its CPU stays under the HPA's target, then falls", async () => {
	const trigger = triggerOf(find(objects, "ScaledObject", "push-mailer"));
	const threshold = Number(trigger.lagThreshold);
	// The CPU autoscaler the ScaledObject stands beside: what utilisation of the pod's request it scales at.
	const hpa = find(production, "HorizontalPodAutoscaler", "push-mailer");
	const target = hpa.spec.metrics[0].resource.target.averageUtilization / 100;
	const requestCores = Number(/^(\d+)m$/.exec(appContainer(find(objects, "Deployment", "push-mailer")).resources.requests.cpu)![1]) / 1000;

	smtp.hold();
	const burst = threshold + 2 * Number(configMap().PUSH_MAX_IN_FLIGHT);
	const subject = `held burst ${Date.now()}`;
	let next = 0;
	await Promise.all(
		Array.from({ length: 16 }, async () => {
			for (let i = next++; i < burst; i = next++) {
				const body = pushBody({ projectId: project.id, path: project.path_with_namespace, commits: [{ message: `${subject} ${i}` }] });
				const res = await client(cluster.url).post("/internal/push", { body, headers: { "Gitlab-Shared-Secret": cluster.internalSecret } });
				expect(res.status).toBe(202);
			}
		}),
	);
	// Every event is in the mailer's backlog; the other workers have nothing to send and keep up.
	await waitFor("the mailer's lag at the whole burst", async () => (await lagOf("push-mailer")) === burst, 30000);
	await waitFor("the other workers' lag at 0", async () => (await lagOf("task-tracker-commenter")) === 0 && (await lagOf("irc-sender")) === 0, 30000);
	// The mailer is at its SMTP server, which holds what it sends (it may get there after the lag was read).
	await waitFor("the SMTP server to hold the mailer's first mails", () => smtp.held > 0, 30000);

	// The CPU the mailer uses while it waits, over a window that ends once its own gauge shows the backlog.
	const pid = cluster.nodes.get("mailer")!.child.pid;
	const [cpu0, t0] = [cpuMs(pid)!, performance.now()];
	await waitFor("the mailer's gauge at the burst", async () => (await gauge("mailer", "push-mailer")) === burst, 30000);
	await new Promise(r => setTimeout(r, 5000));
	const [cpu1, t1] = [cpuMs(pid)!, performance.now()];
	const utilisation = (cpu1 - cpu0) / (t1 - t0) / requestCores;
	const lag = await lagOf("push-mailer");
	console.info(
		`Mailer held: lag ${lag} (threshold ${threshold}: KEDA wants ${Math.ceil(lag / threshold)} replicas); ` +
			`CPU ${((cpu1 - cpu0) / (t1 - t0)).toFixed(4)} cores = ${(100 * utilisation).toFixed(1)} % of its request (HPA target ${100 * target} %)`,
	);
	expect(lag).toBe(burst);
	expect(Math.ceil(lag / threshold)).toBeGreaterThan(1);
	expect(utilisation).toBeLessThan(target);
	expect(await gauge("mailer", "push-mailer")).toBe(lag);

	smtp.release();
	await waitFor("the burst mailed", () => smtp.messages.filter(m => m.subject?.includes(subject)).length >= burst, 60000);
	await waitFor("the mailer's lag back at 0", async () => (await lagOf("push-mailer")) === 0, 30000);
	await waitFor("the mailer's gauge back at 0", async () => (await gauge("mailer", "push-mailer")) === 0, 30000);
	expect(smtp.messages.filter(m => m.subject?.includes(subject))).toHaveLength(burst);
}, 180000);
