/**
 * 5. Push fan-out: push events posted to `POST /internal/push`, each delivered by all three
 * workers to real peers that run in a process of their own (bench/support/peers-process.ts: an
 * HTTP task tracker, GET + POST comment; smtp-server, one mail; ngircd, two IRC lines). The
 * deployments are all started first and loaded in turns, burst by burst, so that a slower minute
 * of a shared machine falls on all of them alike:
 * - throughput: bursts of events posted at concurrency CONCURRENCY, events per second from a
 *   burst's first POST to its last event's third delivery; WARM_BURSTS unmeasured bursts first
 *   (the first one's rate is kept as the cold figure), then the median of MEASURED_BURSTS;
 * - latency: events posted at a steady RATE per second (open loop: each POST leaves on time
 *   whatever the previous ones do), end-to-end per delivery (POST sent → peer received it);
 * - loss and duplicates over every event of the run (each delivery must arrive exactly once).
 * The CPU each process used during the burst is kept with the rows (which one was the limit), and
 * the deployment's CPU and read/write syscalls per event are rows of their own: unlike events/s,
 * the syscalls do not move with the machine's speed or its neighbours.
 *
 * Deployments: the split one (gateway, accounts, integrations, events and the three workers as
 * seven processes, JetStream on the shared NATS, Redis cacher) and the all-in-one process with
 * the in-process channel, each the other's baseline; and the framework's floor for the split
 * shape (bench/support/push-baseline.ts: moleculer-web, a publishing action and three
 * @moleculer/channels consumer groups on the same JetStream, making the same deliveries with none
 * of the project's rules or delivery records). Goals (issue 11): the split at ≥ 1,000
 * events/s, 0 lost, 0 duplicated, p99 under 250 ms at 200 events/s; the all-in-one no slower than
 * the split. IRC pacing is off (IRC_MESSAGE_INTERVAL_MS=0; ngircd runs without flood
 * penalties), so the figures show the pipeline, not production's deliberate line a second.
 * The split deployment also runs with tracing on (spans to a real collector at 100 % and at 1 %
 * sampling, bench/support/tracing.ts), taking its bursts in the same turns: what tracing costs
 * a push (goal at 1 %: at most ×1.05 of tracing off).
 */
import crypto from "crypto";
import http from "http";
import { performance } from "perf_hooks";
import { deletePushChannel } from "../../lib/push/provisioning";
import type { BenchContext, Row, Scenario } from "../scenario";
import { addCpuSamples, cpuShares, deploymentCost, syscallsPerEvent, type CpuSample } from "../../test/support/cpu";
import { deploymentCpuAccount } from "../support/deployment-cpu";
import { startPushBaseline, type PushBaseline } from "../support/push-baseline";
import { awaitDeliveries, marker, newRunId, PEER_KINDS, startRemotePeers, type RemotePeers } from "../support/remote-peers";
import { BENCH_INTERNAL_SECRET, NATS_URL, REDIS_URL, type Stack, type StackOptions } from "../support/stack";
import { round, single, summarize, type Summary } from "../support/stats";
import { startCollector, TRACED_CASES, tracingEnv } from "../support/tracing";

/** POSTs in flight during the burst: at 32 the gateway accepted half as many a second as at 128 (each POST waits on four processes). */
const CONCURRENCY = 128;
const RATE = 200;
/** What the integrations are set to, for the project's workers and the framework floor's alike. */
const TRACKER_API_KEY = "bench-token";
const MAIL_TO = "bench@example.com";
const ircUri = (peers: RemotePeers) => `irc://127.0.0.1:${peers.ircPort}/${peers.ircChannel}`;
/** Events a consumer group holds at once, the same for the project (its default PUSH_MAX_IN_FLIGHT) and the framework floor. */
const PUSH_WINDOW = 32;
/** Events that open the connections to the peers and fill the settings caches before anything else. */
const WARM = 40;
/**
 * Bursts before the measured ones. A fresh process runs its first thousands of events before its
 * compiler and heap have settled: in a fresh split stack the CPU per event of every process fell by
 * a third to a half over the first four bursts of 3,000, and events/s rose from about 700 to 1,100
 * (then flat). Production runs warm; the first burst's rate is reported beside the warm figure.
 */
const WARM_BURSTS = 4;
/** Measured bursts, one after the other (each once the previous one is delivered): the median is reported. */
const MEASURED_BURSTS = 3;

interface Measured {
	/** The median measured burst's. */
	eventsPerSecond: number;
	/** Each measured burst's, in order. */
	bursts: number[];
	/** The first burst after start-up (the first warm-up burst). */
	coldEventsPerSecond: number;
	/** POSTs answered 202 per second during the median burst (the gateway and `events` alone). */
	acceptedPerSecond: number;
	/** End-to-end ms of each delivery at RATE events/s. */
	latencies: number[];
	perWorker: Record<string, number>;
	events: number;
	lost: number;
	duplicates: number;
	/** What every process used during the measured bursts. */
	cpu: CpuSample;
	/** Events of the measured bursts. */
	measuredEvents: number;
}

const sha = (s: string) => crypto.createHash("sha1").update(s).digest("hex");
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise(r => setTimeout(r, ms));

interface PushProject {
	id: number;
	path_with_namespace: string;
}

/** A GitLab-shaped push of one commit whose message carries the run's marker for event `i` and mentions task #1. */
function payload(project: PushProject, run: string, i: number) {
	const id = sha(`${run}:${i}`);
	const path = project.path_with_namespace;
	const [namespace, name] = path.split("/");
	return {
		object_kind: "push",
		before: sha(`${run}:${i}:before`),
		after: id,
		ref: "refs/heads/master",
		user_id: 1,
		user_name: "Bench",
		user_email: "bench@example.com",
		project_id: project.id,
		project: { name, namespace, path_with_namespace: path, web_url: `http://gitlab.example.com/${path}` },
		commits: [
			{
				id,
				message: `push ${marker(run, i)} for #1`,
				timestamp: "2017-01-01T10:00:00+00:00",
				url: `http://gitlab.example.com/${path}/commit/${id}`,
				author: { name: "Bench", email: "bench@example.com" },
				added: [],
				modified: ["README.md"],
				removed: [],
			},
		],
		total_commits_count: 1,
	};
}

/**
 * Kept-alive connections for the POSTs (fetch costs the load generator several times the CPU). Node's
 * agent heeds a server's `Keep-Alive: timeout=N` (dropping an idle socket a second before the server
 * does) only when it has a timeout of its own: without one, a connection to the floor's gateway (5 s,
 * Node's default) left idle while the other deployments take their bursts could be reused just as
 * that server closed it ("socket hang up", seen once in a full run).
 */
const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY, timeout: 60_000 });

function post(url: string, body: unknown): Promise<number> {
	const data = Buffer.from(JSON.stringify(body));
	return new Promise((resolve, reject) => {
		const req = http.request(
			url,
			{
				method: "POST",
				agent,
				headers: { "Content-Type": "application/json", "Content-Length": data.length, "Gitlab-Shared-Secret": BENCH_INTERNAL_SECRET },
			},
			res => {
				res.resume();
				res.on("end", () => resolve(res.statusCode ?? 0));
				res.on("error", reject);
			},
		);
		req.on("error", reject);
		req.end(data);
	});
}

/** Whether every kind of peer has seen `count` distinct events of the run within `timeoutMs`. */
async function delivered(peers: RemotePeers, run: string, count: number, timeoutMs: number): Promise<boolean> {
	const counts = await awaitDeliveries(peers, run, count, timeoutMs);
	return PEER_KINDS.every(k => counts[k] >= count);
}

/** A deployment that takes the pushes: the project's (a stack), or the framework's floor. */
interface Subject {
	name: string;
	/** Where the pushes are POSTed. */
	url: string;
	processes: { name: string; child: { pid?: number } }[];
	/** The project the events are for, its three integrations pointed at the peers, once the push endpoint is served. */
	project(peers: RemotePeers, run: string): Promise<PushProject>;
}

function stackSubject(name: string, stack: Stack): Subject {
	return {
		name,
		url: `${stack.url}/internal/push`,
		processes: stack.processes,
		async project(peers, run) {
			const project = (await stack.expect(201, "POST", "/projects", { json: { name: run } })).body as PushProject;
			const services = `/projects/${project.id}/services`;
			await stack.expect(200, "PUT", `${services}/task-tracker-comments`, { json: { api_key: TRACKER_API_KEY } });
			await stack.expect(200, "PUT", `${services}/emails-on-push`, { json: { recipients: MAIL_TO } });
			await stack.expect(200, "PUT", `${services}/irc-gateway`, { json: { recipients: ircUri(peers) } });
			// Served once an empty push is refused by `events` (the gateway discovers it a moment after /ready).
			const deadline = Date.now() + 30000;
			while ((await post(this.url, {})) !== 400) {
				if (Date.now() > deadline) throw new Error("POST /internal/push is not served");
				await sleep(100);
			}
			return project;
		},
	};
}

function floorSubject(name: string, floor: PushBaseline): Subject {
	// It keeps no projects: the events name one, as the project's would.
	return { name, url: floor.url, processes: floor.procs, project: () => Promise.resolve({ id: 1, path_with_namespace: "bench/push" }) };
}

/** One subject's run: its events, bursts and CPU. */
class SubjectRun {
	readonly run = newRunId();
	project: PushProject = { id: 0, path_with_namespace: "" };
	/** Bursts in order: events [from, from + burst), when the first POST left and when the last was answered; `timedOutAt`: given up on. */
	readonly bursts: { from: number; t0: number; postedAt: number; timedOutAt?: number }[] = [];
	readonly cpu: CpuSample[] = [];
	/** Paced events: index → when its POST left. */
	readonly sent = new Map<number, number>();
	/** The next event index. */
	next = 0;

	constructor(
		readonly subject: Subject,
		private readonly peers: RemotePeers,
	) {}

	private push = async (i: number) => {
		const status = await post(this.subject.url, payload(this.project, this.run, i));
		if (status !== 202) throw new Error(`${this.subject.name}: POST /internal/push answered ${status}`);
	};

	/** Events [from, to) at CONCURRENCY POSTs in flight. */
	private async postAll(from: number, to: number): Promise<void> {
		let next = from;
		await Promise.all(
			Array.from({ length: CONCURRENCY }, async () => {
				while (next < to) await this.push(next++);
			}),
		);
	}

	/** The project, then WARM events: connections to the peers opened, code paths compiled, settings cached. */
	async prepare(): Promise<void> {
		this.project = await this.subject.project(this.peers, this.run);
		await this.postAll(0, WARM);
		this.next = WARM;
		if (!(await delivered(this.peers, this.run, WARM, 60000))) throw new Error(`${this.subject.name}: warm-up events were not delivered within 60 s`);
	}

	/** One burst, timed from its first POST to its last event's third delivery; its CPU kept when `measured`. */
	async burst(size: number, measured: boolean, log: (message: string) => void): Promise<void> {
		const account = measured ? deploymentCpuAccount(this.subject.processes, { peers: this.peers.proc.child.pid }) : null;
		const from = this.next;
		this.next += size;
		const t0 = now();
		await this.postAll(from, from + size);
		const sent: SubjectRun["bursts"][number] = { from, t0, postedAt: now() };
		this.bursts.push(sent);
		if (!(await delivered(this.peers, this.run, from + size, 120000))) {
			log(`  ${this.subject.name}: some deliveries of burst ${this.bursts.length} did not arrive within 120 s`);
			Object.assign(sent, { timedOutAt: now() });
		}
		if (account) this.cpu.push(account.stop());
	}

	/** `count` events at RATE a second, open loop: each POST leaves on time whatever the previous ones do. */
	async paced(count: number): Promise<void> {
		const first = this.next;
		this.next += count;
		const posts: Promise<void>[] = [];
		const start = performance.now();
		for (let k = 0; k < count; k++) {
			const due = start + (k * 1000) / RATE;
			const wait = due - performance.now();
			if (wait > 1) await sleep(wait);
			this.sent.set(first + k, now());
			posts.push(this.push(first + k));
		}
		await Promise.all(posts);
		await delivered(this.peers, this.run, this.next, 60000);
	}

	/** What the run measured, from the peers' receipts: `warmBursts` bursts first, unmeasured. */
	async result(burst: number, warmBursts: number): Promise<Measured> {
		const receipts = await this.peers.receipts(this.run);
		const total = this.next;
		const measuredFrom = WARM + warmBursts * burst;
		const burstsEnd = WARM + this.bursts.length * burst;
		let lost = 0;
		let duplicates = 0;
		const lastArrival = this.bursts.map(b => b.t0);
		/** Events of each burst that reached all three peers. */
		const arrived = this.bursts.map(() => 0);
		for (const kind of PEER_KINDS)
			for (let i = 0; i < total; i++) {
				const times = receipts[kind][i];
				if (!times) lost++;
				else {
					duplicates += times.length - 1;
					const b = Math.floor((i - WARM) / burst);
					if (i >= WARM && i < burstsEnd) lastArrival[b] = Math.max(lastArrival[b], times[0]);
				}
			}
		for (let i = WARM; i < burstsEnd; i++) if (PEER_KINDS.every(kind => receipts[kind][i])) arrived[Math.floor((i - WARM) / burst)]++;
		// A burst given up on counts what arrived in the time it was given, not its fastest part.
		const rates = this.bursts.map((b, k) => ({
			events: b.timedOutAt ? (arrived[k] * 1000) / (b.timedOutAt - b.t0) : (burst * 1000) / (lastArrival[k] - b.t0),
			accepted: (burst * 1000) / (b.postedAt - b.t0),
		}));
		const measured = rates.slice(warmBursts);
		const median = [...measured].sort((x, y) => x.events - y.events)[Math.floor(measured.length / 2)];
		const latencies: number[] = [];
		const perWorker: Record<string, number> = {};
		for (const kind of PEER_KINDS) {
			const own: number[] = [];
			for (const [i, at] of this.sent) {
				const arrivedAt = receipts[kind][i]?.[0];
				if (arrivedAt !== undefined) own.push(arrivedAt - at);
			}
			latencies.push(...own);
			const s = summarize(own);
			perWorker[`${kind}MedianMs`] = round(s.median, 1);
			perWorker[`${kind}P99Ms`] = round(s.p99 ?? NaN, 1);
		}
		return {
			eventsPerSecond: median.events,
			bursts: measured.map(r => round(r.events, 1)),
			coldEventsPerSecond: rates[0].events,
			acceptedPerSecond: median.accepted,
			latencies,
			perWorker,
			events: total,
			lost,
			duplicates,
			cpu: addCpuSamples(this.cpu),
			measuredEvents: burstsEnd - measuredFrom,
		};
	}
}

const SPLIT: StackOptions = {
	nodes: {
		api: "api",
		accounts: "accounts",
		integrations: "integrations",
		events: "events",
		tracker: "workers/task-tracker-commenter",
		mailer: "workers/push-mailer",
		irc: "workers/irc-sender",
	},
	nats: true,
	redis: true,
};

const scenario: Scenario = {
	name: "push fan-out",
	description: "push events through three workers to peers in a process apart: events/s, loss, duplicates, p99 at 200/s; split, all-in-one, framework floor",
	// Five deployments take their bursts in turns (two of them traced): on a busy 2-core machine, over ten minutes.
	timeLimitMinutes: 20,
	async run(ctx: BenchContext): Promise<Row[]> {
		const burst = ctx.quick ? 300 : 3000;
		const paced = ctx.quick ? 200 : 1000;
		const warmBursts = ctx.quick ? 1 : WARM_BURSTS;
		const peers = await startRemotePeers();
		ctx.defer(() => peers.stop());
		const env = {
			TASK_TRACKER_API_URL: peers.trackerUrl,
			SMTP_URL: peers.smtpUrl,
			ALLOW_LOCAL_REQUESTS: "true",
			GITLAB_URL: "http://gitlab.example.com",
			IRC_MESSAGE_INTERVAL_MS: "0",
			PUSH_MAX_IN_FLIGHT: String(PUSH_WINDOW),
		};

		const splitCase = "split over NATS JetStream + Redis (7 processes)";
		const aioCase = "all-in-one process, in-process channel";
		const floorCase = "framework floor: minimal moleculer-web + @moleculer/channels on the same JetStream (5 processes), same deliveries";

		// All three are started first and loaded in turns, burst by burst (an idle deployment costs
		// next to nothing): a slower minute of a shared machine falls on all of them alike.
		ctx.log("split: 7 processes over NATS JetStream, Redis");
		const splitStack = await ctx.startStack({ ...SPLIT, env });
		ctx.defer(() => deletePushChannel(NATS_URL, REDIS_URL, splitStack.namespace));
		ctx.log("framework floor: 5 processes over the same NATS");
		const floorNamespace = `${splitStack.namespace}-floor`;
		ctx.defer(() => deletePushChannel(NATS_URL, REDIS_URL, floorNamespace));
		const floor = await startPushBaseline(
			{ url: NATS_URL, namespace: floorNamespace },
			{
				trackerUrl: peers.trackerUrl,
				smtpUrl: peers.smtpUrl,
				ircUri: ircUri(peers),
				gitlabUrl: env.GITLAB_URL,
				trackerApiKey: TRACKER_API_KEY,
				mailTo: MAIL_TO,
				maxInFlight: PUSH_WINDOW,
			},
		);
		ctx.defer(() => floor.stop());
		ctx.log("all-in-one process (in-process channel)");
		const allInOneStack = await ctx.startStack({ nodes: { all: "" }, env });
		const jaeger = await startCollector(ctx);
		const tracedStacks: Stack[] = [];
		for (const t of TRACED_CASES) {
			ctx.log(`split, ${t.label}`);
			const traced = await ctx.startStack({ ...SPLIT, env: { ...env, ...tracingEnv(jaeger, t.ratio) } });
			ctx.defer(() => deletePushChannel(NATS_URL, REDIS_URL, traced.namespace));
			tracedStacks.push(traced);
		}
		const tracedCase = (i: number) => `${splitCase}, ${TRACED_CASES[i].label}`;

		const subjects = [
			stackSubject(splitCase, splitStack),
			floorSubject(floorCase, floor),
			stackSubject(aioCase, allInOneStack),
			...tracedStacks.map((t, i) => stackSubject(tracedCase(i), t)),
		];
		const runs = subjects.map(s => new SubjectRun(s, peers));
		for (const r of runs) await r.prepare();
		ctx.log(`  ${warmBursts} warm-up bursts, then ${MEASURED_BURSTS} measured, each taken in turns: ${burst} events each at concurrency ${CONCURRENCY}`);
		for (let b = 0; b < warmBursts + MEASURED_BURSTS; b++) for (const r of runs) await r.burst(burst, b >= warmBursts, message => ctx.log(message));
		ctx.log(`  paced: ${paced} events at ${RATE}/s, each in turn`);
		for (const r of runs) await r.paced(paced);
		await sleep(1000); // late duplicates would show up now
		const [split, framework, allInOne, ...traced] = await Promise.all(runs.map(r => r.result(burst, warmBursts)));
		// Idle kept-alive connections would hold the gateways' shutdown.
		agent.destroy();
		await splitStack.stop();
		await allInOneStack.stop();
		for (const t of tracedStacks) await t.stop();

		const extra = (m: Measured) => ({
			events: m.events,
			deliveries: 3 * m.events,
			burst,
			warmUpBursts: warmBursts,
			coldEventsPerSecond: round(m.coldEventsPerSecond, 1),
			measuredBursts: m.bursts.join(", "),
			concurrency: CONCURRENCY,
			paced,
			rate: RATE,
			acceptedPerSecond: round(m.acceptedPerSecond, 1),
			lost: m.lost,
			duplicates: m.duplicates,
			...m.perWorker,
			...cpuShares(m.cpu),
			...syscallsPerEvent(m.cpu, m.measuredEvents),
		});
		const throughput = `events/s through 3 workers, median of ${MEASURED_BURSTS} bursts of ${burst} @ c=${CONCURRENCY} after ${warmBursts} warm-up`;
		const eps = (m: Measured) => single(round(m.eventsPerSecond, 1));
		/** The deployment's cost per event of the measured bursts: it does not move with the machine's speed as events/s does. */
		const perEvent = (m: Measured, what: "cpuMs" | "syscalls", digits: number) => single(round(deploymentCost(m.cpu)[what] / m.measuredEvents, digits));
		const latency = (m: Measured): Summary => {
			const s = summarize(m.latencies);
			return { median: round(s.median, 1), p99: s.p99 === null ? null : round(s.p99, 1) };
		};
		const tracingOff = `${splitCase}, tracing off`;
		const tracingRows = traced.flatMap((m, i): Row[] => [
			{
				case: tracedCase(i),
				metric: throughput,
				value: eps(m),
				baseline: tracingOff,
				baselineValue: eps(split),
				better: "higher",
				extra: extra(m),
				goal: TRACED_CASES[i].goal,
			},
			{
				case: tracedCase(i),
				metric: "CPU ms per event, every process of the deployment (NATS and Redis too; not the load generator nor the peers), measured bursts",
				value: perEvent(m, "cpuMs", 2),
				baseline: tracingOff,
				baselineValue: perEvent(split, "cpuMs", 2),
				better: "lower",
				goal: TRACED_CASES[i].goal,
			},
			{
				case: tracedCase(i),
				metric: `end-to-end ms, POST → peer received, ${paced} events @ ${RATE}/s (each delivery)`,
				value: latency(m),
				baseline: tracingOff,
				baselineValue: latency(split),
				better: "lower",
			},
		]);
		return [
			{
				case: splitCase,
				metric: throughput,
				value: eps(split),
				baseline: aioCase,
				baselineValue: eps(allInOne),
				better: "higher",
				extra: extra(split),
				goal: { atLeast: 1000 },
			},
			{
				case: splitCase,
				metric: throughput,
				value: eps(split),
				baseline: floorCase,
				baselineValue: eps(framework),
				better: "higher",
				extra: extra(framework),
			},
			{
				case: aioCase,
				metric: throughput,
				value: eps(allInOne),
				baseline: splitCase,
				baselineValue: eps(split),
				better: "higher",
				extra: extra(allInOne),
				goal: { max: 1.0 },
			},
			{
				case: splitCase,
				metric: "CPU ms per event, every process of the deployment (NATS and Redis too; not the load generator nor the peers), measured bursts",
				value: perEvent(split, "cpuMs", 2),
				baseline: aioCase,
				baselineValue: perEvent(allInOne, "cpuMs", 2),
				better: "lower",
			},
			{
				case: splitCase,
				metric: "CPU ms per event, every process of the deployment (NATS and Redis too; not the load generator nor the peers), measured bursts",
				value: perEvent(split, "cpuMs", 2),
				baseline: floorCase,
				baselineValue: perEvent(framework, "cpuMs", 2),
				better: "lower",
			},
			{
				case: splitCase,
				metric: "read and write syscalls per event, the same processes (/proc/<pid>/io)",
				value: perEvent(split, "syscalls", 1),
				baseline: aioCase,
				baselineValue: perEvent(allInOne, "syscalls", 1),
				better: "lower",
			},
			{
				case: splitCase,
				metric: "read and write syscalls per event, the same processes (/proc/<pid>/io)",
				value: perEvent(split, "syscalls", 1),
				baseline: floorCase,
				baselineValue: perEvent(framework, "syscalls", 1),
				better: "lower",
			},
			{
				case: splitCase,
				metric: `end-to-end ms, POST → peer received, ${paced} events @ ${RATE}/s (each delivery)`,
				value: latency(split),
				baseline: aioCase,
				baselineValue: latency(allInOne),
				better: "lower",
				extra: extra(split),
				goal: { atMost: 250, on: "p99" },
			},
			{
				case: splitCase,
				metric: `deliveries lost, of ${3 * split.events}`,
				value: single(split.lost),
				baseline: aioCase,
				baselineValue: single(allInOne.lost),
				better: "lower",
				goal: { atMost: 0 },
			},
			{
				case: splitCase,
				metric: `deliveries duplicated, of ${3 * split.events}`,
				value: single(split.duplicates),
				baseline: aioCase,
				baselineValue: single(allInOne.duplicates),
				better: "lower",
				goal: { atMost: 0 },
			},
			...tracingRows,
		];
	},
};

export default scenario;
