/**
 * Traces and correlation ids end to end (docs/operations.md#traces), against a real collector:
 * Jaeger v2 started here (OTLP/HTTP in, its query API read back), the split stack as separate
 * processes over the real NATS JetStream and Redis, and the workers' real peers (an HTTP task
 * tracker, smtp-server, ngircd with a listening client).
 * - One push is one trace: the gateway's request, `events.push`, its publish on the channel, the
 *   three workers' handling of the message and their outbound calls, all connected.
 * - A label request is the gateway's span with `labels.create` as its child.
 * - Every log line written for a push, in every process it crossed, names its correlation id: the
 *   X-Request-Id its answer carries.
 */
import type { Cluster } from "../../support/cluster";
import { client, waitFor } from "../../support/http";
import { Jaeger, parentOf, spanTree, tag, type JaegerSpan, type JaegerTrace } from "../../support/jaeger";
import type { IrcListener, IrcServer } from "../../support/peers/irc-server";
import type { SmtpSink } from "../../support/peers/smtp-sink";
import type { TaskTracker } from "../../support/peers/task-tracker";
import { pushBody } from "../../support/push-fixtures";
import { PushPeers, startPushStack } from "../../support/push-stack";

let jaeger: Jaeger;
let peers: PushPeers;
let cluster: Cluster;
let tracker: TaskTracker;
let smtp: SmtpSink;
let irc: IrcServer;
let dev: IrcListener;
let project: { id: number; path_with_namespace: string };

const TRACKER_KEY = "tracker-secret-key";
const WORKERS = ["task-tracker-commenter", "push-mailer", "irc-sender"] as const;

const secret = () => ({ "Gitlab-Shared-Secret": cluster.internalSecret });
const mails = (text: string) => smtp.messages.filter(m => m.subject?.includes(text));

/** The one trace whose gateway span carries this correlation id, once `complete` says every span has arrived. */
async function traceOf(correlationId: string, complete: (t: JaegerTrace) => boolean): Promise<JaegerTrace> {
	return waitFor(
		`the trace of ${correlationId} in Jaeger`,
		async () => {
			const found = await jaeger.find("api", { correlation_id: correlationId });
			if (found.length > 1) throw new Error(`${found.length} traces for one request`);
			const t = found.length ? await jaeger.trace(found[0].traceID) : null;
			return t && complete(t.trace) ? t.trace : undefined;
		},
		60000,
		500,
	);
}

const only = (spans: JaegerSpan[], what: string) => {
	expect([what, spans.length]).toEqual([what, 1]);
	return spans[0];
};
const ancestors = (span: JaegerSpan, all: JaegerSpan[]) => {
	const chain: JaegerSpan[] = [];
	for (let p = parentOf(span, all); p; p = parentOf(p, all)) chain.push(p);
	return chain;
};

beforeAll(async () => {
	jaeger = await Jaeger.start();
	peers = await PushPeers.start(["7"]);
	({ tracker, smtp, irc, dev } = peers);
	({ cluster, project } = await startPushStack(peers, {
		name: "traced",
		trackerKey: TRACKER_KEY,
		recipients: "dev@example.com not-an-address",
		keepAllOutput: true,
		env: {
			OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpEndpoint,
			LOG_FORMAT: "json",
			LOG_LEVEL: "info",
			IRC_MESSAGE_INTERVAL_MS: "20",
			PUSH_RETRY_DELAY_MS: "200",
		},
	}));
}, 180000);

afterAll(async () => {
	await cluster?.stop();
	await Promise.all([peers?.stop(), jaeger?.stop()]);
}, 60000);

it("one push is one trace: gateway, events, the publish, the three workers and their outbound calls, connected", async () => {
	const requestId = `push-${Date.now()}`;
	const body = pushBody({ projectId: project.id, path: project.path_with_namespace, commits: [{ message: "fixes #7 traced push" }] });
	const res = await client(cluster.url).post("/internal/push", { body, headers: { ...secret(), "X-Request-ID": requestId } });
	expect([res.status, res.headers.get("x-request-id")]).toEqual([202, requestId]);
	await waitFor("every delivery", () => tracker.tasks.get("7") === true && mails("traced push").length === 1 && dev.messages.length >= 2, 30000);

	const clientSpans = (t: JaegerTrace, service: string) =>
		t.spans.filter(s => s.service === service && s.kind === "client").sort((a, b) => a.startTime - b.startTime);
	// The tracker's three calls (GET, comment, completion), one mail, one IRC send.
	// Each process exports its spans in batches of its own: the trace is read once every span the
	// push makes has reached Jaeger (a child may arrive before its parent from another process).
	const t = await traceOf(
		requestId,
		x =>
			x.spans.some(s => s.service === "events" && s.operationName === "events.push") &&
			x.spans.some(s => s.kind === "producer") &&
			WORKERS.every(w => x.spans.some(s => s.service === w && s.kind === "consumer")) &&
			clientSpans(x, "task-tracker-commenter").length === 3 &&
			WORKERS.every(w => clientSpans(x, w).length >= 1),
	);
	console.info(`The push's trace (${t.traceID}), as Jaeger's query API returned it:\n${spanTree(t).join("\n")}`);

	// Connected: one root, every other span's parent in the trace.
	const roots = t.spans.filter(s => !parentOf(s, t.spans));
	const root = only(roots, "root spans");
	expect([root.service, root.kind, root.operationName, tag(root, "http.route"), tag(root, "http.response.status_code"), tag(root, "correlation_id")]).toEqual(
		["api", "server", "POST /api/v3/internal/push", "/api/v3/internal/push", 202, requestId],
	);
	const push = only(
		t.spans.filter(s => s.service === "events" && s.operationName === "events.push"),
		"events.push",
	);
	expect([push.kind, parentOf(push, t.spans)]).toEqual(["server", root]);
	const publish = only(
		t.spans.filter(s => s.kind === "producer"),
		"publish",
	);
	expect([publish.service, publish.operationName, tag(publish, "messaging.system"), tag(publish, "gitlab.project.id")]).toEqual([
		"events",
		`publish ${cluster.namespace}.push`,
		"nats",
		project.id,
	]);
	expect(ancestors(publish, t.spans)).toContain(push);

	for (const worker of WORKERS) {
		const consumed = only(
			t.spans.filter(s => s.service === worker && s.kind === "consumer"),
			`${worker} consumer`,
		);
		expect([
			consumed.operationName,
			parentOf(consumed, t.spans),
			tag(consumed, "messaging.consumer.group.name"),
			tag(consumed, "gitlab.push.event_id"),
		]).toEqual([`process ${cluster.namespace}.push`, publish, worker, res.body.id]);
		for (const call of clientSpans(t, worker)) {
			expect(ancestors(call, t.spans)).toContain(consumed);
			expect([worker, call.operationName, tag(call, "gitlab.delivery.outcome")]).toEqual([worker, call.operationName, "delivered"]);
		}
	}
	const ports = (worker: string) => clientSpans(t, worker).map(s => [s.operationName, tag(s, "server.port")]);
	expect(ports("task-tracker-commenter")).toEqual([
		["HTTP GET", tracker.port],
		["HTTP POST", tracker.port],
		["HTTP PUT", tracker.port],
	]);
	expect(ports("push-mailer")).toEqual([["SMTP send", smtp.port]]);
	expect(ports("irc-sender")).toEqual([["IRC send", irc.port]]);
	expect(tag(clientSpans(t, "irc-sender")[0], "irc.target")).toBe("#dev");

	// Every span of the push names its correlation id, the worker's own calls of integrations too.
	const named = t.spans.filter(s => s.kind !== "client");
	expect(new Set(named.map(s => tag(s, "correlation_id")))).toEqual(new Set([requestId]));

	// Never a credential: not the tracker's key, the internal secret, root's token.
	const everything = JSON.stringify(t);
	for (const secretValue of [TRACKER_KEY, cluster.internalSecret, cluster.rootToken]) expect(everything).not.toContain(secretValue);
}, 120000);

it("a label request is the gateway's span with labels.create as its child", async () => {
	const requestId = `label-${Date.now()}`;
	const res = await cluster
		.api()
		.post(`/projects/${project.id}/labels`, { body: { name: "traced", color: "#428bca" }, headers: { "X-Request-ID": requestId } });
	// GitLab 8.16 answers a new label with 200.
	expect([res.status, res.headers.get("x-request-id")]).toEqual([200, requestId]);
	const t = await traceOf(requestId, x => x.spans.some(s => s.service === "labels"));
	console.info(`The label request's trace (${t.traceID}):\n${spanTree(t).join("\n")}`);
	const root = only(
		t.spans.filter(s => !parentOf(s, t.spans)),
		"root spans",
	);
	expect([root.service, root.operationName, tag(root, "http.response.status_code"), tag(root, "gitlab.project.id")]).toEqual([
		"api",
		"POST /api/v3/projects/:id/labels",
		200,
		String(project.id),
	]);
	const create = only(
		t.spans.filter(s => s.service === "labels"),
		"labels spans",
	);
	expect([create.operationName, create.kind, parentOf(create, t.spans), tag(create, "gitlab.project.id")]).toEqual([
		"labels.create",
		"server",
		root,
		String(project.id),
	]);
});

it("every log line written for a push names its correlation id, in every process it crossed", async () => {
	// No X-Request-ID sent: the gateway names the request and answers with that name.
	const body = pushBody({ projectId: project.id, path: project.path_with_namespace, commits: [{ message: "touches #404 logged push" }] });
	const res = await client(cluster.url).post("/internal/push", { body, headers: secret() });
	expect(res.status).toBe(202);
	const requestId = res.headers.get("x-request-id")!;
	expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
	const eventId: string = res.body.id;
	// The tracker has no task 404 (logged, not retried); one recipient is not an address (logged, skipped).
	const lines = (node: string) =>
		cluster
			.logs(node)
			.split("\n")
			.filter(line => line.includes(eventId));
	await waitFor("the workers' log lines of the push", () => lines("tracker").length >= 1 && lines("mailer").length >= 1, 30000);
	for (const node of ["tracker", "mailer"]) for (const line of lines(node)) expect([node, JSON.parse(line).correlation_id]).toEqual([node, requestId]);
	expect(lines("tracker").map(line => JSON.parse(line).msg)).toEqual([expect.stringContaining("not delivered (GET /tasks/404: HTTP 404); not retried")]);
	expect(lines("mailer").map(line => JSON.parse(line).msg)).toEqual([expect.stringContaining("skipped 1 invalid recipient(s)")]);
	// The trace the same request left has its log lines' id.
	const t = await traceOf(requestId, x => x.spans.some(s => s.service === "task-tracker-commenter" && s.kind === "client"));
	expect(
		tag(
			t.spans.find(s => s.service === "task-tracker-commenter" && s.kind === "client")!,
			"gitlab.delivery.outcome",
		),
	).toBe("refused");
});
