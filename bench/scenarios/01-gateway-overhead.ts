/**
 * 1. Gateway overhead: `GET /projects/:id/labels` (20 labels) through the whole stack, all-in-one
 * and split over NATS with the Redis cacher, against a bare Node http server in its own process
 * returning the same bytes and content type. autocannon at a fixed concurrency, one deployment
 * at a time so the CPU is not shared between them.
 */
import type { BenchContext, Row, Scenario } from "../scenario";
import type { StackOptions } from "../support/stack";
import { single, round } from "../support/stats";
import type { LoadResult } from "../support/load";

const LABELS = 20;

const CASES: [string, StackOptions][] = [
	["all-in-one", { nodes: { all: "" } }],
	["split: api + accounts + labels over NATS, Redis cacher", { nodes: { api: "api", accounts: "accounts", labels: "labels" }, nats: true, redis: true }],
];

function checked(what: string, result: LoadResult): LoadResult {
	if (result.errors || result.non2xx)
		throw new Error(`${what}: ${result.errors} errors and ${result.non2xx} non-2xx responses (${JSON.stringify(result.statusCodes)})`);
	return result;
}

const scenario: Scenario = {
	name: "gateway overhead",
	description: `GET /projects/:id/labels (${LABELS} labels) vs a bare node http server sending the same bytes`,
	async run(ctx: BenchContext): Promise<Row[]> {
		const rows: Row[] = [];
		for (const [name, options] of CASES) {
			ctx.log(`starting ${name}`);
			const stack = await ctx.startStack(options);
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
			const bare = await ctx.startBareServer(sample.bytes, { "Content-Type": sample.headers.get("content-type") ?? "application/json" });

			const headers = { "PRIVATE-TOKEN": stack.rootToken };
			ctx.log(`load: bare server`);
			const base = checked("bare server", await ctx.load({ url: bare.url, headers }));
			bare.proc.child.kill("SIGKILL");
			ctx.log(`load: ${name}`);
			const full = checked(name, await ctx.load({ url: stack.url + path, headers }));
			await stack.stop();

			const extra = {
				requests: full.requests,
				baselineRequests: base.requests,
				responseBytes: sample.bytes.length,
				connections: ctx.connections,
				seconds: ctx.duration,
			};
			rows.push({
				case: name,
				metric: `latency ms @ c=${ctx.connections}`,
				value: full.latency,
				baseline: "bare node http, same bytes",
				baselineValue: base.latency,
				better: "lower",
				extra,
			});
			rows.push({
				case: name,
				metric: `req/s @ c=${ctx.connections}`,
				value: single(round(full.rps, 0)),
				baseline: "bare node http, same bytes",
				baselineValue: single(round(base.rps, 0)),
				better: "higher",
				extra,
			});
		}
		return rows;
	},
};

export default scenario;
