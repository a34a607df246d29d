/**
 * 7. Durable writes: labels created per second at c=16 on the all-in-one process (every write
 * answered once its store has it on the disk), against the physical limit measured in the same
 * run on the same file system (bench/support/disk-limit.ts): a plain file append with an
 * fdatasync per write, and the same appends from 16 writers sharing their flushes (group commit).
 * And what that burst costs reads: the p99 of another project's label list, cached and uncached
 * (every request a page or size not asked before), during the burst against the same reads
 * without it. Each round takes the reads alone, the writes alone, both at once, then the two
 * limits (a shared machine's disk moves by multiples within minutes, so they are measured beside
 * the writes, round by round); each figure merges its rounds (rates: the median round's).
 */
import type { BenchContext, Row, Scenario } from "../scenario";
import { appendEachSynced, appendGroupCommit } from "../support/disk-limit";
import { mergeLoads, type LoadResult } from "../support/load";
import { percentile, round, single } from "../support/stats";

const WRITERS = 16;
const ROUNDS = 3;
/** Labels in the project whose lists are read. */
const LABELS = 100;

const median = (xs: number[]) =>
	percentile(
		[...xs].sort((a, b) => a - b),
		50,
	);

function checked(what: string, result: LoadResult): LoadResult {
	if (result.errors || result.non2xx) throw new Error(`${what}: ${result.errors} errors, ${result.non2xx} non-2xx (${JSON.stringify(result.statusCodes)})`);
	return result;
}

const scenario: Scenario = {
	name: "durable writes",
	description: `labels created/s at c=${WRITERS} vs file append + fdatasync; read p99 during the burst vs without`,
	async run(ctx: BenchContext): Promise<Row[]> {
		const stack = await ctx.startStack({ nodes: { all: "" } });
		const written = (await stack.expect(201, "POST", "/projects", { json: { name: "bench-writes", visibility_level: 0 } })).body.id as number;
		const read = (await stack.expect(201, "POST", "/projects", { json: { name: "bench-reads", visibility_level: 0 } })).body.id as number;
		for (let i = 0; i < LABELS; i++) await stack.expect(200, "POST", `/projects/${read}/labels`, { json: { name: `read-${i}`, color: "#428bca" } });
		const headers = { "PRIVATE-TOKEN": stack.rootToken };
		const readUrl = `${stack.url}/projects/${read}/labels`;
		const readPath = new URL(readUrl).pathname;
		await stack.expect(200, "GET", `/projects/${read}/labels`);

		let created = 0;
		const writes = (duration: number) =>
			ctx.load({
				url: `${stack.url}/projects/${written}/labels`,
				method: "POST",
				headers: { ...headers, "Content-Type": "application/json" },
				connections: WRITERS,
				duration,
				warmup: 0,
				setupRequest: req => ({ ...req, body: JSON.stringify({ name: `w-${++created}`, color: "#428bca" }) }),
			});
		const cached = (duration: number) => ctx.load({ url: readUrl, headers, connections: 1, duration, warmup: 0 });
		// Each request a page and size not asked before: a cache miss that reads the store.
		let asked = 0;
		const uncached = (duration: number) =>
			ctx.load({
				url: readUrl,
				headers,
				connections: 1,
				duration,
				warmup: 0,
				setupRequest: req => {
					const n = asked++;
					return { ...req, path: `${readPath}?per_page=${1 + (n % 100)}&page=${1 + Math.floor(n / 100)}` };
				},
			});

		ctx.log("warm-up: writes and reads, unmeasured");
		await Promise.all([writes(2), cached(2), uncached(2)]);
		const runs = {
			writes: [] as LoadResult[],
			writesWithReads: [] as LoadResult[],
			cachedBusy: [] as LoadResult[],
			uncachedBusy: [] as LoadResult[],
			cachedIdle: [] as LoadResult[],
			uncachedIdle: [] as LoadResult[],
		};
		const limits = { each: [] as number[], group: [] as number[] };
		for (let r = 0; r < ROUNDS; r++) {
			ctx.log(`round ${r + 1}: reads alone, writes alone at c=${WRITERS}, both, then the file system's limits`);
			const [c, u] = await Promise.all([cached(ctx.duration), uncached(ctx.duration)]);
			runs.cachedIdle.push(checked("cached reads", c));
			runs.uncachedIdle.push(checked("uncached reads", u));
			runs.writes.push(checked("label creates", await writes(ctx.duration)));
			const [w, cb, ub] = await Promise.all([writes(ctx.duration), cached(ctx.duration), uncached(ctx.duration)]);
			runs.writesWithReads.push(checked("label creates with reads", w));
			runs.cachedBusy.push(checked("cached reads during writes", cb));
			runs.uncachedBusy.push(checked("uncached reads during writes", ub));
			limits.each.push(await appendEachSynced(ctx.tmpDir, ctx.duration));
			limits.group.push(await appendGroupCommit(ctx.tmpDir, WRITERS, ctx.duration));
		}
		const w = mergeLoads(runs.writes);
		const each = median(limits.each);
		const group = median(limits.group);

		const rate = `writes/s @ c=${WRITERS}`;
		const extra = { requests: w.requests, writeP99Ms: round(w.latency.p99 ?? NaN), withReadsPerSecond: round(mergeLoads(runs.writesWithReads).rps) };
		const rows: Row[] = [
			{
				case: "labels created, all-in-one",
				metric: rate,
				value: single(round(w.rps)),
				baseline: "file append + fdatasync per write",
				baselineValue: single(round(each)),
				better: "higher",
				extra,
			},
			{
				case: "labels created, all-in-one",
				metric: rate,
				value: single(round(w.rps)),
				baseline: `file append + fdatasync, group commit (${WRITERS} writers)`,
				baselineValue: single(round(group)),
				better: "higher",
				extra,
			},
		];
		for (const [name, busy, idle] of [
			["cached label list during the burst", runs.cachedBusy, runs.cachedIdle],
			["uncached label list during the burst", runs.uncachedBusy, runs.uncachedIdle],
		] as const) {
			const b = mergeLoads(busy);
			const i = mergeLoads(idle);
			rows.push({
				case: name,
				metric: "latency ms @ c=1",
				value: b.latency,
				baseline: "same reads without writes",
				baselineValue: i.latency,
				better: "lower",
				extra: { requests: b.requests, baselineRequests: i.requests },
			});
		}
		return rows;
	},
};

export default scenario;
