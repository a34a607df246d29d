/**
 * The split stack over a three-node NATS JetStream cluster of the test's own, deployed as the
 * Kubernetes manifests deploy it: TRANSPORTER lists the three nodes, the push streams (and the
 * delivery records' bucket) have three replicas. The gateway, accounts, labels, integrations,
 * events and the three workers run as separate processes, the workers against real peers (the
 * HTTP task tracker, smtp-server, ngircd).
 *
 * - The push stream's leader is killed (SIGKILL) in the middle of a burst of pushes and started
 *   again later: every push is answered 202 (a publish waits for the new leader, within the
 *   request timeout), every event reaches every peer exactly once, with no manual action, and
 *   the API answers throughout.
 * - A node that does not lead the stream is killed and restarted under the same load: no client
 *   sees an error.
 * - With any one node down, the gateway and the services serve reads and writes and take push
 *   events, and a process started meanwhile (its first URL pointing at the dead node) joins.
 */
import type { Cluster } from "../../support/cluster";
import { client, waitFor } from "../../support/http";
import { NatsCluster } from "../../support/nats-cluster";
import { pushBody } from "../../support/push-fixtures";
import { PushPeers, startPushStack } from "../../support/push-stack";
import type { IrcListener } from "../../support/peers/irc-server";
import type { SmtpSink } from "../../support/peers/smtp-sink";
import type { TaskTracker } from "../../support/peers/task-tracker";

const REQUEST_TIMEOUT_MS = 15000;
/** An answer may take the request timeout plus scheduling slack, never more. */
const MAX_ANSWER_MS = REQUEST_TIMEOUT_MS + 3000;
const MAX_PUSHES = 600;

let nats: NatsCluster;
let peers: PushPeers;
let cluster: Cluster;
let tracker: TaskTracker;
let smtp: SmtpSink;
let dev: IrcListener;
let projectId: number;
let projectPath: string;
let nextPush = 0;

const stream = () => `${cluster.namespace}_push`;
const messageOf = (i: number) => `fix #${1000 + i} over the cluster ${i}`;
const secret = () => ({ "Gitlab-Shared-Secret": cluster.internalSecret });

beforeAll(async () => {
	[nats, peers] = await Promise.all([NatsCluster.start(3), PushPeers.start(Array.from({ length: MAX_PUSHES }, (_, i) => String(1000 + i)))]);
	({ tracker, smtp, dev } = peers);
	const stack = await startPushStack(peers, {
		name: "clustered",
		trackerKey: "tracker-token",
		recipients: "dev@example.com ops@example.com",
		env: {
			TRANSPORTER: nats.url,
			PUSH_STREAM_REPLICAS: "3",
			REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
			IRC_MESSAGE_INTERVAL_MS: "5",
			PUSH_RETRY_DELAY_MS: "200",
			PUSH_MAX_DELIVERIES: "20",
			PUSH_ACK_WAIT_MS: "5000",
			OUTBOUND_TIMEOUT_MS: "3000",
		},
	});
	cluster = stack.cluster;
	projectId = stack.project.id;
	projectPath = stack.project.path_with_namespace;
	await cluster.waitForRoute("GET", `/projects/${projectId}/labels`);
	expect((await cluster.api().post(`/projects/${projectId}/labels`, { body: { name: "steady", color: "#00ff00" } })).status).toBe(200);
	// Provisioned with three replicas, as PUSH_STREAM_REPLICAS asks.
	await nats.waitForReplicas(stream());
}, 180000);

afterAll(async () => {
	await cluster?.stop();
	await peers?.stop();
	await nats?.destroy();
}, 60000);

interface Outcome {
	what: string;
	status: number | string;
	ms: number;
	at: number;
}

/** Git servers pushing and users reading, each in a loop until stopped; every answer recorded. */
function startLoad() {
	const outcomes: Outcome[] = [];
	const accepted: number[] = [];
	let running = true;
	const record = async (what: string, call: () => Promise<{ status: number; body: any }>, ok: (r: { status: number; body: any }) => boolean) => {
		const t0 = Date.now();
		const res = await call().catch(err => ({ status: `no answer: ${(err as Error).message}`, body: null }) as unknown as { status: number; body: any });
		const status = typeof res.status === "number" && res.status < 300 && !ok(res) ? `${res.status} with a wrong body` : res.status;
		outcomes.push({ what, status, ms: Date.now() - t0, at: t0 });
		return res;
	};
	const pusher = async () => {
		while (running && nextPush < MAX_PUSHES) {
			const i = nextPush++;
			const body = pushBody({ projectId, path: projectPath, userName: "Jane", commits: [{ message: messageOf(i) }] });
			const res = await record(
				`push ${i}`,
				() => client(cluster.url).post("/internal/push", { body, headers: secret() }),
				r => typeof r.body?.id === "string",
			);
			if (res.status === 202) accepted.push(i);
			await new Promise(r => setTimeout(r, 40));
		}
	};
	const reader = async (n: number) => {
		const api = cluster.api();
		while (running) {
			if (n % 2)
				await record(
					"GET /user",
					() => api.get("/user"),
					r => r.body?.username === "root",
				);
			else
				await record(
					"GET labels",
					() => api.get(`/projects/${projectId}/labels`),
					r => Array.isArray(r.body) && r.body.some((l: { name: string }) => l.name === "steady"),
				);
			await new Promise(r => setTimeout(r, 20));
		}
	};
	const loops = [pusher(), pusher(), reader(0), reader(1)];
	return {
		outcomes,
		accepted,
		stop: async () => {
			running = false;
			await Promise.all(loops);
		},
	};
}

const mailsTo = (i: number, to: string) => smtp.messages.filter(m => m.subject?.endsWith(messageOf(i)) && (m.to as { text: string }).text === to).length;
const ircLines = (i: number) => dev.messages.filter(m => m.text.endsWith(`: ${messageOf(i)}`)).length;
const counts = (i: number) => ({
	i,
	dev: mailsTo(i, "dev@example.com"),
	ops: mailsTo(i, "ops@example.com"),
	comments: (tracker.comments.get(String(1000 + i)) ?? []).length,
	irc: ircLines(i),
});

/** The last warnings and errors a process logged. */
const warningsOf = (name: string) =>
	cluster
		.logs(name)
		.split("\n")
		.filter(line => /WARN|ERROR/.test(line))
		.slice(-40)
		.join("\n");

/** Every accepted event at every peer, then (after a pause for anything late) exactly once. */
async function expectDeliveredOnce(accepted: number[]) {
	const arrived = (i: number) => {
		const { dev, ops, comments, irc } = counts(i);
		return dev >= 1 && ops >= 1 && comments >= 1 && irc >= 1;
	};
	await waitFor("every accepted event at every peer", () => Promise.resolve(accepted.every(arrived)), 90000, 250).catch(err => {
		console.info("MISSING", JSON.stringify(accepted.filter(i => !arrived(i)).map(counts)));
		for (const n of ["events", "tracker", "mailer", "irc"]) console.info(n, cluster.logs(n).slice(-3000));
		throw err;
	});
	await new Promise(r => setTimeout(r, 2000));
	const repeated = accepted.map(counts).filter(c => c.dev !== 1 || c.ops !== 1 || c.comments !== 1 || c.irc !== 1);
	if (repeated.length) {
		// What the workers said about their retries: why a delivery was made again.
		console.info("DELIVERED MORE THAN ONCE", JSON.stringify(repeated));
		for (const n of ["tracker", "mailer", "irc"]) console.info(n, warningsOf(n));
	}
	for (const i of accepted) expect(counts(i)).toEqual({ i, dev: 1, ops: 1, comments: 1, irc: 1 });
	const asked = Date.now();
	const dead = await client(cluster.url).get("/internal/dead-letters", { headers: secret() });
	if (dead.status !== 200) {
		// Why the gateway could not reach `events`: how long it tried, and what each of them logged last.
		console.info(`GET /internal/dead-letters answered ${dead.status} after ${Date.now() - asked} ms, at ${new Date().toISOString()}`);
		for (const n of ["api", "events"]) console.info(n, cluster.logs(n).slice(-4000));
	}
	expect([dead.status, dead.body]).toEqual([200, []]);
}

const summary = (outcomes: Outcome[]) => {
	const by = new Map<string, number>();
	for (const o of outcomes) by.set(`${o.what.split(" ")[0]} ${o.status}`, (by.get(`${o.what.split(" ")[0]} ${o.status}`) ?? 0) + 1);
	return Object.fromEntries(by);
};

it("delivers every event exactly once and keeps answering while the push stream's leader is killed and restarted", async () => {
	const leader = await nats.leaderOf(stream());
	const load = startLoad();
	try {
		await waitFor("pushes accepted", () => Promise.resolve(load.accepted.length >= 15), 30000, 20);
		await nats.stopNode(leader, "SIGKILL");
		const killedAt = Date.now();
		const before = load.accepted.length;
		await waitFor("pushes accepted under a new leader", () => Promise.resolve(load.accepted.length >= before + 15), 60000, 20);
		const newLeader = await nats.leaderOf(stream());
		expect(newLeader).not.toBe(leader);
		await nats.startNode(leader);
		await nats.waitForReplicas(stream());
		const back = load.accepted.length;
		await waitFor("pushes accepted with the node back", () => Promise.resolve(load.accepted.length >= back + 10), 30000, 20);
		await load.stop();
		const waited = load.outcomes.filter(o => o.at >= killedAt - 100 && o.ms > 1000).map(o => `${o.what} ${o.status} ${o.ms} ms`);
		console.info(
			`Stream leader ${leader} killed, ${newLeader} elected; answers: ${JSON.stringify(summary(load.outcomes))}; waited over 1 s: ${waited.join(", ")}`,
		);
	} finally {
		await load.stop();
	}
	const slow = load.outcomes.filter(o => o.ms > MAX_ANSWER_MS);
	expect(slow).toEqual([]);
	expect(load.outcomes.filter(o => o.what.startsWith("push") && o.status !== 202)).toEqual([]);
	await expectDeliveredOnce(load.accepted);
}, 240000);

it("shows no client an error when a node that does not lead the stream is killed and restarted under load", async () => {
	const leader = await nats.leaderOf(stream());
	const victim = nats.nodes.find(n => n.name !== leader)!.name;
	const load = startLoad();
	try {
		await waitFor("pushes accepted", () => Promise.resolve(load.accepted.length >= 15), 30000, 20);
		await nats.stopNode(victim, "SIGKILL");
		const before = load.accepted.length;
		await waitFor("pushes accepted with the node down", () => Promise.resolve(load.accepted.length >= before + 15), 60000, 20);
		await nats.startNode(victim);
		await nats.waitForReplicas(stream());
		const back = load.accepted.length;
		await waitFor("pushes accepted with the node back", () => Promise.resolve(load.accepted.length >= back + 10), 30000, 20);
		await load.stop();
		console.info(`Node ${victim} (not the stream leader ${leader}) killed and restarted; answers: ${JSON.stringify(summary(load.outcomes))}`);
	} finally {
		await load.stop();
	}
	expect(load.outcomes.filter(o => o.status !== 200 && o.status !== 202)).toEqual([]);
	expect(load.outcomes.filter(o => o.ms > MAX_ANSWER_MS)).toEqual([]);
	await expectDeliveredOnce(load.accepted);
}, 240000);

it("keeps serving reads, writes and pushes with any one node down, and a process started meanwhile joins", async () => {
	const api = cluster.api();
	const accepted: number[] = [];
	for (const node of nats.nodes) {
		await nats.stopNode(node.name, "SIGKILL");
		await nats.waitForMetaLeader();
		expect((await api.get("/user")).status).toBe(200);
		const label = `down-${node.name}`;
		expect((await api.post(`/projects/${projectId}/labels`, { body: { name: label, color: "#123456" } })).status).toBe(200);
		expect((await api.get(`/projects/${projectId}/labels`)).body.map((l: { name: string }) => l.name)).toContain(label);
		for (let k = 0; k < 3; k++) {
			const i = nextPush++;
			const body = pushBody({ projectId, path: projectPath, userName: "Jane", commits: [{ message: messageOf(i) }] });
			const res = await client(cluster.url).post("/internal/push", { body, headers: secret() });
			expect([i, res.status]).toEqual([i, 202]);
			accepted.push(i);
		}
		// TRANSPORTER lists the dead node too: the transporter, the channel adapter, the provisioning
		// and the delivery records all connect to one of the others.
		const extra = `events-while-${node.name}-down`;
		await cluster.spawnNode(extra, "events");
		const proc = cluster.nodes.get(extra)!;
		const code = await cluster.kill(extra, "SIGTERM");
		expect([code, code === 0 ? "" : proc.output.join("")]).toEqual([0, ""]);
		await nats.startNode(node.name);
		await nats.waitForReplicas(stream());
	}
	await expectDeliveredOnce(accepted);
	for (const [name, node] of cluster.nodes) expect([name, node.child.exitCode]).toEqual([name, null]);
}, 240000);
