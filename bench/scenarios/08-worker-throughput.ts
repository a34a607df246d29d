/**
 * 8. Worker throughput per replica: how fast one replica of each push worker drains a backlog,
 * the figure KEDA's lagThreshold is chosen from (docs/operations.md#choosing-the-lag-threshold).
 * The split stack's gateway, accounts, integrations and events take a burst of events while no
 * worker runs (each group's backlog waits in JetStream); then each worker in turn runs as one
 * replica, alone, against peers that answer at once (bench/support/peers-process.ts, as in
 * scenario 5), timed from the first event it acknowledges until its backlog (its consumer's
 * pending plus unacknowledged events, as its gauge and KEDA read it) is empty. A replica starts
 * cold, as one that KEDA has just added. Baseline: the rate the gateway accepted the burst at, in
 * the same run (one gateway's pushes take that many replicas of the worker to keep up with).
 */
import { performance } from "perf_hooks";
import { connect } from "nats";
import { readBacklog } from "../../lib/push/backlog";
import { PUSH_GROUPS, pushNames, type PushGroup } from "../../lib/push/channel";
import { deletePushChannel } from "../../lib/push/provisioning";
import { pushBody } from "../../test/support/push-fixtures";
import type { BenchContext, Row, Scenario } from "../scenario";
import { cpuShares } from "../../test/support/cpu";
import { deploymentCpuAccount } from "../support/deployment-cpu";
import { awaitDeliveries, marker, newRunId, startRemotePeers, type PeerKind, type RemotePeers } from "../support/remote-peers";
import { BENCH_INTERNAL_SECRET, NATS_URL, REDIS_URL, type Stack } from "../support/stack";
import { round, single } from "../support/stats";

/** POSTs in flight while the burst is accepted. */
const CONCURRENCY = 64;
/** Which peer each worker's deliveries reach. */
const PEER_OF: Record<PushGroup, PeerKind> = { "task-tracker-commenter": "tracker", "push-mailer": "mail", "irc-sender": "irc" };

const sleep = (ms: number) => new Promise(r => setTimeout(r, ms));

/** One push through the internal API; its status. */
async function postPush(stack: Stack, body: unknown): Promise<number> {
	const res = await fetch(`${stack.url}/internal/push`, {
		method: "POST",
		headers: { "Content-Type": "application/json", "Gitlab-Shared-Secret": BENCH_INTERNAL_SECRET },
		body: JSON.stringify(body),
	});
	await res.arrayBuffer();
	return res.status;
}

/** The burst posted at CONCURRENCY POSTs in flight; its rate of 202s. */
async function postBurst(stack: Stack, project: { id: number; path_with_namespace: string }, run: string, events: number): Promise<number> {
	let next = 0;
	const t0 = performance.now();
	await Promise.all(
		Array.from({ length: CONCURRENCY }, async () => {
			for (let i = next++; i < events; i = next++) {
				const body = pushBody({ projectId: project.id, path: project.path_with_namespace, commits: [{ message: `push ${marker(run, i)} for #1` }] });
				const status = await postPush(stack, body);
				if (status !== 202) throw new Error(`POST /internal/push answered ${status}`);
			}
		}),
	);
	return (events * 1000) / (performance.now() - t0);
}

const scenario: Scenario = {
	name: "worker throughput",
	description: "one replica of each push worker draining a backlog against peers that answer at once, vs the gateway's accept rate",
	async run(ctx: BenchContext): Promise<Row[]> {
		const events = ctx.quick ? 300 : 3000;
		const peers: RemotePeers = await startRemotePeers();
		ctx.defer(() => peers.stop());
		const env = {
			TASK_TRACKER_API_URL: peers.trackerUrl,
			SMTP_URL: peers.smtpUrl,
			ALLOW_LOCAL_REQUESTS: "true",
			GITLAB_URL: "http://gitlab.example.com",
			IRC_MESSAGE_INTERVAL_MS: "0",
		};
		ctx.log("split without workers: api, accounts, integrations, events");
		const stack = await ctx.startStack({
			nodes: { api: "api", accounts: "accounts", integrations: "integrations", events: "events" },
			nats: true,
			redis: true,
			env,
		});
		ctx.defer(() => deletePushChannel(NATS_URL, REDIS_URL, stack.namespace));
		const run = newRunId();
		const project = (await stack.expect(201, "POST", "/projects", { json: { name: run } })).body as { id: number; path_with_namespace: string };
		const services = `/projects/${project.id}/services`;
		// The gateway discovers integrations a moment after /ready: 503 until then.
		await stack.waitForRoute(`${services}/task-tracker-comments`);
		await stack.expect(200, "PUT", `${services}/task-tracker-comments`, { json: { api_key: "bench-token" } });
		await stack.expect(200, "PUT", `${services}/emails-on-push`, { json: { recipients: "bench@example.com" } });
		await stack.expect(200, "PUT", `${services}/irc-gateway`, { json: { recipients: `irc://127.0.0.1:${peers.ircPort}/${peers.ircChannel}` } });
		const deadline = Date.now() + 30000;
		// Served once an empty push is refused by `events` (the gateway discovers it a moment after /ready).
		while ((await postPush(stack, {})) !== 400 && Date.now() < deadline) await sleep(100);

		ctx.log(`a backlog of ${events} events for each worker`);
		const accepted = await postBurst(stack, project, run, events);
		const nc = await connect({ servers: new URL(NATS_URL).host });
		ctx.defer(() => nc.close());
		const jsm = await nc.jetstreamManager();
		const stream = pushNames(stack.namespace).stream;
		const rows: Row[] = [];
		for (const group of PUSH_GROUPS) {
			ctx.log(`${group}: one replica drains it`);
			const worker = await ctx.startStack({
				nodes: { [group]: `workers/${group}` },
				nats: true,
				redis: true,
				env: { ...env, NAMESPACE: stack.namespace },
			});
			const account = deploymentCpuAccount(worker.processes, { peers: peers.proc.child.pid });
			let first: { at: number; backlog: number } | null = null;
			let backlog = await readBacklog(jsm, stream, group);
			const limit = Date.now() + 120_000;
			while (backlog > 0 && Date.now() < limit) {
				await sleep(20);
				backlog = await readBacklog(jsm, stream, group);
				if (!first && backlog < events) first = { at: performance.now(), backlog };
			}
			const end = performance.now();
			const cpu = account.stop();
			if (backlog > 0 || !first) throw new Error(`${group} left ${backlog} of ${events} events after 120 s`);
			// Drained is acknowledged; each event's delivery reached its peer too (the peers count them by their marker).
			const delivered = (await awaitDeliveries(peers, run, events, 30_000, [PEER_OF[group]]))[PEER_OF[group]];
			if (delivered < events) throw new Error(`${group} acknowledged ${events} events, but its peer saw ${delivered} of them`);
			await worker.stop();
			rows.push({
				case: `${group}, one replica, cold`,
				metric: `events/s drained from a backlog of ${events} (peers answering at once)`,
				value: single(round((first.backlog * 1000) / (end - first.at), 1)),
				baseline: `events/s the gateway accepted the burst at (POST /internal/push @ c=${CONCURRENCY})`,
				baselineValue: single(round(accepted, 1)),
				better: "higher",
				extra: { events, delivered, ...cpuShares(cpu) },
			});
		}
		return rows;
	},
};

export default scenario;
