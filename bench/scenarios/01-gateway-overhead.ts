/**
 * 1. Gateway overhead: `GET /projects/:id/labels` (20 labels) through the whole stack, all-in-one
 * and split over NATS with the Redis cacher, each against three baselines measured in the same
 * run, one deployment at a time so the CPU is not shared between them:
 * - a bare Node http server in its own process returning the same bytes (the physical floor);
 * - a minimal moleculer-web gateway with one local action returning the same data (the all-in-one
 *   shape's framework limit);
 * - the same gateway calling that action in a second process over the same NATS (the split shape's
 *   framework limit).
 * Goals: all-in-one at ≥ 0.8 of its framework baseline's throughput, split at ≥ 1.0 of its own
 * (a cache hit does not even reach NATS), and the split's p99 no worse than three times its median.
 * The CPU each process used during a load (and the time no process ran) is kept with the rows, to
 * tell which one was the limit. The split's framework baseline also runs with a binary serializer
 * (Notepack, MessagePack) in place of the project's JSONExt: what the serializer weighs on a hop
 * over NATS, with the same data.
 */
import type { BenchContext, Goal, Row, Scenario } from "../scenario";
import { NATS_URL, type StackOptions } from "../support/stack";
import { single, round } from "../support/stats";
import type { LoadResult } from "../support/load";
import { cpuShares, deploymentCpuAccount } from "../support/cpu";

const LABELS = 20;

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
		stack: { nodes: { api: "api", accounts: "accounts", labels: "labels" }, nats: true, redis: true },
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

const scenario: Scenario = {
	name: "gateway overhead",
	description: `GET /projects/:id/labels (${LABELS} labels) vs bare node http and minimal moleculer-web, same data`,
	async run(ctx: BenchContext): Promise<Row[]> {
		const rows: Row[] = [];
		for (const c of CASES) {
			ctx.log(`starting ${c.name}`);
			const stack = await ctx.startStack(c.stack);
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
			const headers = { "PRIVATE-TOKEN": stack.rootToken };

			ctx.log(`load: ${c.name}`);
			const account = deploymentCpuAccount(stack.processes);
			const full = checked(c.name, await ctx.load({ url: stack.url + path, headers }));
			const cpu = cpuShares(account.stop());
			await stack.stop();

			const bare = await ctx.startBareServer(sample.bytes, { "Content-Type": sample.headers.get("content-type") ?? "application/json" });
			ctx.log(`load: bare server`);
			const bareLoad = checked("bare server", await ctx.load({ url: bare.url, headers }));
			bare.proc.child.kill("SIGKILL");

			const frameworkNats = c.framework.nats ? { url: NATS_URL, namespace: `${stack.namespace}-fw` } : undefined;
			const framework = await ctx.startFrameworkBaseline(sample.bytes, frameworkNats);
			ctx.log(`load: ${c.framework.name}`);
			const frameworkAccount = deploymentCpuAccount(framework.procs);
			const frameworkLoad = checked(c.framework.name, await ctx.load({ url: framework.url, headers }));
			const frameworkCpu = cpuShares(frameworkAccount.stop());
			for (const p of framework.procs) p.child.kill("SIGKILL");

			const extra = { requests: full.requests, responseBytes: sample.bytes.length, connections: ctx.connections, seconds: ctx.duration, ...cpu };
			rows.push(...compare(ctx, c.name, full, "bare node http, same bytes", bareLoad, extra));
			rows.push(...compare(ctx, c.name, full, c.framework.name, frameworkLoad, extra, c.framework.goal));
			if (c.tailGoal)
				rows.push({
					case: c.name,
					metric: `latency ms p99 @ c=${ctx.connections}`,
					value: single(full.latency.p99 ?? NaN),
					baseline: "its own median",
					baselineValue: single(full.latency.median ?? NaN),
					better: "lower",
					extra,
					goal: c.tailGoal,
				});
			const frameworkExtra = { requests: frameworkLoad.requests, ...frameworkCpu };
			rows.push(...compare(ctx, c.framework.name, frameworkLoad, "bare node http, same bytes", bareLoad, frameworkExtra));

			if (c.framework.binaryName && frameworkNats) {
				const binary = await ctx.startFrameworkBaseline(
					sample.bytes,
					{ ...frameworkNats, namespace: `${frameworkNats.namespace}-notepack` },
					"Notepack",
				);
				ctx.log(`load: ${c.framework.binaryName}`);
				const binaryLoad = checked(c.framework.binaryName, await ctx.load({ url: binary.url, headers }));
				for (const p of binary.procs) p.child.kill("SIGKILL");
				rows.push(...compare(ctx, c.framework.binaryName, binaryLoad, c.framework.name, frameworkLoad, { requests: binaryLoad.requests }));
			}
		}
		return rows;
	},
};

export default scenario;
