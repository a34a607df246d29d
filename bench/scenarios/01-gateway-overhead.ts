/**
 * 1. Gateway overhead: `GET /projects/:id/labels` (20 labels) through the whole stack, all-in-one
 * and split over NATS with the Redis cacher, each against three baselines measured in the same
 * run. The deployment and its baselines are all started first, then loaded in turns, one at a time
 * (an idle process costs nothing), three rounds: on a shared machine a slow minute falls on all of
 * them alike, and each one's latencies are every response of its three loads, its throughput the
 * median load's. V8 compiles a process's hot paths during its first seconds of load, in background
 * threads on the same two cores, which shows in the tail: so the deployment's first load after it
 * starts is measured apart and kept as its cold figure, then every subject (the deployment and its
 * baselines alike) runs WARM_SECONDS of the same load unmeasured before the rounds. The baselines:
 * - a bare Node http server in its own process returning the same bytes (the physical floor);
 * - a minimal moleculer-web gateway with one local action returning the same data (the all-in-one
 *   shape's framework limit);
 * - the same gateway calling that action in a second process over the same NATS (the split shape's
 *   framework limit).
 * Goals: all-in-one at ≥ 0.8 of its framework baseline's throughput, split at ≥ 1.0 of its own
 * (a cache hit does not even reach NATS), and the split's p99 no worse than three times its median.
 * The same deployment also runs with tracing on, its spans exported to a real collector at 100 %
 * and at 1 % sampling (bench/support/tracing.ts), loaded in the same turns: what tracing costs
 * (goal at 1 %: at most ×1.05 of tracing off).
 * API v4 beside v3, in the same deployments and the same rounds (docs/api.md#v4): its labels list
 * against v3's, and its jobs list (`GET /projects/:id/jobs`, 20 jobs) against v3's builds list, each
 * at a cost of at most ×1.05; and, once, what v4's labels answer weighs as bytes on a socket: bare
 * servers sending each version's answer, its body and headers, in the same turns.
 * The CPU each process used during a load (and the time no process ran) is kept with the rows, to
 * tell which one was the limit. The split's framework baseline also runs with a binary serializer
 * (Notepack, MessagePack) in place of the project's JSONExt: what the serializer weighs on a hop
 * over NATS, with the same data.
 */
import type { BenchContext, Goal, Row, Scenario } from "../scenario";
import { BENCH_INTERNAL_SECRET, NATS_URL, type StackOptions } from "../support/stack";
import { single, round } from "../support/stats";
import { mergeLoads, type LoadResult } from "../support/load";
import { addCpuSamples, cpuShares, type CpuSample } from "../../test/support/cpu";
import { deploymentCpuAccount } from "../support/deployment-cpu";
import { cpuMsPer, startCollector, TRACED_CASES, tracingEnv } from "../support/tracing";
import type { Stack } from "../support/stack";

const LABELS = 20;
const BUILDS = 20;
/** v4's cost against v3's for the same list, in the same run. */
const V4_GOAL = { max: 1.05 };
/** Measured loads of each deployment and baseline, taken in turns. */
const ROUNDS = 3;
/** Unmeasured load of each subject after the cold load, before the rounds (a quick run: 1 s). */
const WARM_SECONDS = 10;

interface Case {
	name: string;
	stack: StackOptions;
	/** The framework baseline of the same shape, and the throughput goal against it (a cost: ×1.25 = at least 0.8 of it). */
	framework: { name: string; nats: boolean; goal: Goal; binaryName?: string };
	/** The most the case's p99 may be, in multiples of its median. */
	tailGoal?: Goal;
}

const CASES: Case[] = [
	{ name: "all-in-one", stack: { nodes: { all: "" } }, framework: { name: "minimal moleculer-web + local action", nats: false, goal: { max: 1.25 } } },
	{
		name: "split: api + accounts + labels over NATS, Redis cacher",
		// builds too, idle but for v4's jobs list against v3's builds list.
		stack: { nodes: { api: "api", accounts: "accounts", labels: "labels", builds: "builds" }, nats: true, redis: true },
		framework: {
			name: "minimal moleculer-web + action over NATS",
			nats: true,
			goal: { max: 1.0 },
			binaryName: "minimal moleculer-web + action over NATS, Notepack serializer",
		},
		tailGoal: { max: 3 },
	},
];

function checked(what: string, result: LoadResult): LoadResult {
	if (result.errors || result.non2xx)
		throw new Error(`${what}: ${result.errors} errors and ${result.non2xx} non-2xx responses (${JSON.stringify(result.statusCodes)})`);
	return result;
}

/** Latency and throughput of `what` against `against`. */
function compare(ctx: BenchContext, what: string, result: LoadResult, against: string, base: LoadResult, extra: Row["extra"], goal?: Goal): Row[] {
	return [
		{
			case: what,
			metric: `latency ms @ c=${ctx.connections}`,
			value: result.latency,
			baseline: against,
			baselineValue: base.latency,
			better: "lower",
			extra,
		},
		{
			case: what,
			metric: `req/s @ c=${ctx.connections}`,
			value: single(round(result.rps, 0)),
			baseline: against,
			baselineValue: single(round(base.rps, 0)),
			better: "higher",
			extra,
			goal,
		},
	];
}

/** A load's p99 against its own median: how long its tail is. */
function tailRow(ctx: BenchContext, what: string, result: LoadResult, extra: Row["extra"], goal?: Goal): Row {
	return {
		case: what,
		metric: `latency ms p99 @ c=${ctx.connections}`,
		value: single(result.latency.p99 ?? NaN),
		baseline: "its own median",
		baselineValue: single(result.latency.median ?? NaN),
		better: "lower",
		extra,
		goal,
	};
}

/** What one case measures in turns: the deployment and its baselines, all started before the first load. */
interface Subject {
	name: string;
	url: string;
	/** Processes whose CPU is kept with the rows (none: not accounted). */
	procs: { name: string; child: { pid?: number } }[];
	/** Processes outside the deployment whose CPU is kept too (the trace collector). */
	others?: Record<string, number | undefined>;
	runs: LoadResult[];
	cpu: CpuSample[];
}

/** A project with LABELS labels in a fresh deployment: the project, the path of its labels and one answer of it. */
async function seedLabels(stack: Stack) {
	const project = (await stack.expect(201, "POST", "/projects", { json: { name: "bench-labels", visibility_level: 0 } })).body;
	await stack.waitForRoute(`/projects/${project.id}/labels`);
	for (let i = 0; i < LABELS; i++)
		await stack.expect(200, "POST", `/projects/${project.id}/labels`, {
			json: { name: `label-${String(i).padStart(2, "0")}`, color: "#428bca", description: `Label number ${i}` },
		});
	const path = `/projects/${project.id}/labels`;
	const sample = await stack.expect(200, "GET", path);
	if (!Array.isArray(sample.body) || sample.body.length !== LABELS)
		throw new Error(`expected ${LABELS} labels, got ${sample.bytes.toString().slice(0, 200)}`);
	return { project, path, sample };
}

/** `count` builds in the project, through the internal API a runner uses. */
async function makeBuilds(base: string, projectId: number, count: number): Promise<void> {
	for (let i = 0; i < count; i++) {
		const res = await fetch(`${base}/internal/builds`, {
			method: "POST",
			headers: { "Gitlab-Shared-Secret": BENCH_INTERNAL_SECRET, "Content-Type": "application/json" },
			body: JSON.stringify({
				project_id: projectId,
				name: `job-${i}`,
				ref: "master",
				commit: {
					id: "0ff3ae198f8601a285adcf5c0fff204ee6fba5fd",
					message: "Bench",
					author_name: "Ada",
					author_email: "ada@example.com",
					created_at: "2016-01-11T10:13:33+01:00",
				},
			}),
		});
		if (res.status !== 201) throw new Error(`POST /internal/builds: ${res.status} ${await res.text()}`);
	}
}

/** Headers a bare server's answer leaves to Node, as the gateway's does. */
const NODE_HEADERS = new Set(["date", "connection", "keep-alive", "content-length", "transfer-encoding"]);

/** A list that answers 200 with `count` rows, before it is loaded: its answer's bytes and headers (but Node's own). */
async function expectList(what: string, url: string, headers: Record<string, string>, count: number) {
	const res = await fetch(url, { headers });
	const bytes = Buffer.from(await res.arrayBuffer());
	const body: unknown = JSON.parse(bytes.toString("utf8"));
	if (res.status !== 200 || !Array.isArray(body) || body.length !== count)
		throw new Error(`${what}: expected ${count} rows, got ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
	return { bytes, headers: Object.fromEntries([...res.headers].filter(([name]) => !NODE_HEADERS.has(name))) };
}

const scenario: Scenario = {
	name: "gateway overhead",
	description: `GET /projects/:id/labels (${LABELS} labels) vs bare node http and minimal moleculer-web, same data`,
	async run(ctx: BenchContext): Promise<Row[]> {
		const rows: Row[] = [];
		// Each load runs ROUNDS times, in turns with its baselines', so that a slower minute of a shared
		// machine falls on all of them alike; a quick run checks the harness with one round.
		const rounds = ctx.quick ? 1 : ROUNDS;
		const jaeger = await startCollector(ctx);
		for (const c of CASES) {
			ctx.log(`starting ${c.name}`);
			const stack = await ctx.startStack(c.stack);
			const { project, path, sample } = await seedLabels(stack);
			const headers = { "PRIVATE-TOKEN": stack.rootToken };
			await stack.waitForRoute(`/projects/${project.id}/builds`);
			await makeBuilds(stack.url, project.id, BUILDS);
			const v4 = stack.url.replace(/\/api\/v3$/, "/api/v4");
			const lists = {
				v4Labels: `${v4}${path}`,
				v3Builds: `${stack.url}/projects/${project.id}/builds`,
				v4Jobs: `${v4}/projects/${project.id}/jobs`,
			};
			const answers: Record<string, Awaited<ReturnType<typeof expectList>>> = {};
			for (const [what, url] of Object.entries({ v3Labels: stack.url + path, ...lists }))
				answers[what] = await expectList(what, url, headers, what.endsWith("Labels") ? LABELS : BUILDS);
			const traced: { stack: Stack; path: string }[] = [];
			for (const t of TRACED_CASES) {
				ctx.log(`starting ${c.name}, ${t.label}`);
				const tracedStack = await ctx.startStack({ ...c.stack, env: { ...c.stack.env, ...tracingEnv(jaeger, t.ratio) }, rootToken: stack.rootToken });
				traced.push({ stack: tracedStack, path: (await seedLabels(tracedStack)).path });
			}

			const bare = await ctx.startBareServer(sample.bytes, { "Content-Type": sample.headers.get("content-type") ?? "application/json" });
			// What v4's labels answer weighs as such, once: its bytes and headers against v3's, from bare servers.
			const bareAnswers = c === CASES[0] ? await Promise.all([answers.v3Labels, answers.v4Labels].map(a => ctx.startBareServer(a.bytes, a.headers))) : [];
			const frameworkNats = c.framework.nats ? { url: NATS_URL, namespace: `${stack.namespace}-fw` } : undefined;
			const framework = await ctx.startFrameworkBaseline(sample.bytes, frameworkNats);
			const binaryName = frameworkNats ? c.framework.binaryName : undefined;
			const binary = binaryName
				? await ctx.startFrameworkBaseline(sample.bytes, { ...frameworkNats!, namespace: `${frameworkNats!.namespace}-notepack` }, "Notepack")
				: null;
			const subject = (name: string, url: string, procs: Subject["procs"]): Subject => ({ name, url, procs, runs: [], cpu: [] });
			const full = subject(c.name, stack.url + path, stack.processes);
			const bareServer = subject("bare server", bare.url, []);
			const minimal = subject(c.framework.name, framework.url, framework.procs);
			const notepack = binary && binaryName ? subject(binaryName, binary.url, []) : null;
			const tracedSubjects = traced.map((t, i) => ({
				...subject(`${c.name}, ${TRACED_CASES[i].label}`, t.stack.url + t.path, t.stack.processes),
				others: { jaeger: jaeger.proc.child.pid },
			}));
			const v4Labels = subject(`${c.name}: v4 labels list`, lists.v4Labels, stack.processes);
			const v3Builds = subject(`${c.name}: v3 builds list`, lists.v3Builds, stack.processes);
			const v4Jobs = subject(`${c.name}: v4 jobs list`, lists.v4Jobs, stack.processes);
			const [bareV3Answer, bareV4Answer] = bareAnswers.map((b, i) =>
				subject(`bare node http: ${i ? "v4" : "v3"} labels answer, its bytes and headers`, b.url, []),
			);
			const subjects = [
				full,
				...tracedSubjects,
				bareServer,
				minimal,
				...(notepack ? [notepack] : []),
				v4Labels,
				v3Builds,
				v4Jobs,
				...(bareV4Answer ? [bareV3Answer, bareV4Answer] : []),
			];
			ctx.log(`first load after start: ${full.name}`);
			const cold = checked(full.name, await ctx.load({ url: full.url, headers, warmup: 0 }));
			for (const s of subjects) {
				ctx.log(`warm-up: ${s.name}`);
				checked(s.name, await ctx.load({ url: s.url, headers, warmup: 0, duration: ctx.quick ? 1 : WARM_SECONDS }));
			}
			for (let round = 1; round <= rounds; round++)
				for (const s of subjects) {
					ctx.log(`load ${round}/${rounds}: ${s.name}`);
					const account = s.procs.length ? deploymentCpuAccount(s.procs, s.others) : null;
					s.runs.push(checked(s.name, await ctx.load({ url: s.url, headers })));
					if (account) s.cpu.push(account.stop());
				}
			await stack.stop();
			for (const t of traced) await t.stack.stop();
			for (const b of [bare, ...bareAnswers]) b.proc.child.kill("SIGKILL");
			for (const p of [...framework.procs, ...(binary?.procs ?? [])]) p.child.kill("SIGKILL");

			const [fullLoad, bareLoad, frameworkLoad] = [full, bareServer, minimal].map(s => mergeLoads(s.runs));
			const extra = {
				requests: fullLoad.requests,
				responseBytes: sample.bytes.length,
				connections: ctx.connections,
				seconds: ctx.duration,
				rounds,
				...cpuShares(addCpuSamples(full.cpu)),
			};
			rows.push(...compare(ctx, c.name, fullLoad, "bare node http, same bytes", bareLoad, extra));
			rows.push(...compare(ctx, c.name, fullLoad, c.framework.name, frameworkLoad, extra, c.framework.goal));
			if (c.tailGoal) rows.push(tailRow(ctx, c.name, fullLoad, extra, c.tailGoal));
			for (const [i, t] of tracedSubjects.entries()) {
				const tracedLoad = mergeLoads(t.runs);
				const tracedExtra = { requests: tracedLoad.requests, rounds, sampled: TRACED_CASES[i].ratio, ...cpuShares(addCpuSamples(t.cpu)) };
				rows.push(...compare(ctx, t.name, tracedLoad, `${c.name}, tracing off`, fullLoad, tracedExtra, TRACED_CASES[i].goal));
				const cpuPerRequest = (cpu: CpuSample[], requests: number) => single(round(1000 * cpuMsPer(addCpuSamples(cpu), requests), 1));
				rows.push({
					case: t.name,
					metric: "CPU µs per request, the deployment's processes (NATS and Redis too; not the load generator nor the collector)",
					value: cpuPerRequest(t.cpu, tracedLoad.requests),
					baseline: `${c.name}, tracing off`,
					baselineValue: cpuPerRequest(full.cpu, fullLoad.requests),
					better: "lower",
					goal: TRACED_CASES[i].goal,
				});
			}
			rows.push(tailRow(ctx, `${c.name}, first load after start (cold)`, cold, { requests: cold.requests, seconds: ctx.duration }));
			const frameworkExtra = { requests: frameworkLoad.requests, rounds, ...cpuShares(addCpuSamples(minimal.cpu)) };
			rows.push(...compare(ctx, c.framework.name, frameworkLoad, "bare node http, same bytes", bareLoad, frameworkExtra));
			if (notepack) {
				const binaryLoad = mergeLoads(notepack.runs);
				rows.push(...compare(ctx, notepack.name, binaryLoad, c.framework.name, frameworkLoad, { requests: binaryLoad.requests, rounds }));
			}
			// v4 beside v3: the same lists, the same deployment, the same rounds.
			const [v4LabelsLoad, v3BuildsLoad, v4JobsLoad] = [v4Labels, v3Builds, v4Jobs].map(s => mergeLoads(s.runs));
			const v4Extra = (load: LoadResult, s: Subject) => ({ requests: load.requests, rounds, ...cpuShares(addCpuSamples(s.cpu)) });
			rows.push(...compare(ctx, v4Labels.name, v4LabelsLoad, `v3 labels list (${c.name}), same run`, fullLoad, v4Extra(v4LabelsLoad, v4Labels), V4_GOAL));
			rows.push(...compare(ctx, v4Jobs.name, v4JobsLoad, `v3 builds list (${c.name}), same run`, v3BuildsLoad, v4Extra(v4JobsLoad, v4Jobs), V4_GOAL));
			if (bareV4Answer) {
				const [v3AnswerLoad, v4AnswerLoad] = [bareV3Answer, bareV4Answer].map(b => mergeLoads(b.runs));
				// The body and the header lines it is sent with (Node adds the same few to both).
				const bytes = (a: { bytes: Buffer; headers: Record<string, string> }) =>
					a.bytes.length + Object.entries(a.headers).reduce((n, [name, value]) => n + `${name}: ${value}\r\n`.length, 0);
				const answerExtra = { requests: v4AnswerLoad.requests, rounds, v3AnswerBytes: bytes(answers.v3Labels), v4AnswerBytes: bytes(answers.v4Labels) };
				rows.push(...compare(ctx, bareV4Answer.name, v4AnswerLoad, bareV3Answer.name, v3AnswerLoad, answerExtra));
			}
		}
		return rows;
	},
};

export default scenario;
