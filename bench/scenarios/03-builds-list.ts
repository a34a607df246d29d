/**
 * 3. Builds list: the cost of a page of `GET /projects/:id/builds` in projects of 100,000 and
 * 1,000,000 builds against the same page in a project of 1,000, in one deployment (gateway,
 * accounts and builds as processes over NATS, Redis cacher). Goal: every page at most ×1.3 of the
 * same page at 1,000 (a page must not cost more in a bigger project). The projects are made over
 * the API and their builds written straight into the embedded store by `npm run seed`'s store
 * mode (scripts/seed-store.ts: the builds service's own BuildStore, beside the running service).
 *
 * Cases, each against the same case on 1,000 builds:
 *   - page 1, as clients see it (cached after the first request);
 *   - page 1 uncached: every request a different per_page (20…100), so each one reads the store;
 *   - deep pages uncached: pages spread over the whole project (page ~50,000 of 1,000,000 builds);
 *   - scope=running uncached: the (project, status) index walked in order, its X-Total counted
 *     as the builds are written (docs/architecture.md#data-rules);
 *   - API v4's keyset pages of jobs (`pagination=keyset`, docs/api.md#v4-keyset), uncached, at
 *     cursors spread over the whole project: each is one exact range of build numbers, as an offset
 *     page is;
 * and the builds process's memory at rest (restarted, a few pages read) with the largest project
 * in the store against the same with only the 1,000 builds.
 */
import type { BenchContext, Row, Scenario } from "../scenario";
import type { LoadResult } from "../support/load";
import { BENCH_INTERNAL_SECRET, type Stack } from "../support/stack";
import { single } from "../support/stats";
import { encodeCursor } from "../../lib/builds/job-listing";
import { rssBytes } from "../../test/support/processes";
import { seedBuilds } from "../../scripts/seed";

const PER_PAGE_VARIANTS = Array.from({ length: 81 }, (_, i) => 20 + i);
const PAGE_GOAL = { max: 1.3 };
/** At rest: long enough after the last request for its garbage and timers to settle. */
const SETTLE_MS = 2000;
const MB = 1024 * 1024;

function checked(what: string, result: LoadResult): LoadResult {
	if (result.errors || result.non2xx) throw new Error(`${what}: ${result.errors} errors, ${result.non2xx} non-2xx (${JSON.stringify(result.statusCodes)})`);
	return result;
}

const fmt = (n: number) => n.toLocaleString("en-US");

const scenario: Scenario = {
	name: "builds list",
	description: "a page of builds (and of v4 keyset jobs) in projects of 100,000 and 1,000,000 against the same page with 1,000",
	async run(ctx: BenchContext): Promise<Row[]> {
		const small = 1000;
		const large = ctx.quick ? [10000] : [100000, 1000000];
		const stack = await ctx.startStack({ nodes: { api: "api", accounts: "accounts", builds: "builds" }, nats: true, redis: true });
		await stack.waitForRoute("/projects/1/builds");
		const seed = async (builds: number) => {
			let lastLog = 0;
			const result = await seedBuilds({
				builds,
				via: "store",
				dataDir: stack.dataDir,
				url: stack.url,
				token: stack.rootToken,
				secret: BENCH_INTERNAL_SECRET,
				traceEvery: 0,
				artifactsEvery: 0,
				onProgress: done => {
					if (done - lastLog >= 100000 || done === builds) {
						lastLog = done;
						ctx.log(`  seeded ${fmt(done)}/${fmt(builds)}`);
					}
				},
			});
			ctx.log(`seeded ${fmt(builds)} builds in ${result.seconds.toFixed(1)} s (project ${result.projectId})`);
			return result.projectId;
		};
		const headers = { "PRIVATE-TOKEN": stack.rootToken };
		const buildsUrl = (project: number) => `${stack.url}/projects/${project}/builds`;
		const jobsUrl = (project: number) => `${stack.url.replace(/\/api\/v3$/, "/api/v4")}/projects/${project}/jobs`;

		/** Requests that each miss the cache: one per distinct query, at concurrency 1 (latency, not queueing). */
		const uncached = async (what: string, project: number, queries: string[], listUrl = buildsUrl) => {
			let next = 0;
			const path = (query: string) => new URL(`${listUrl(project)}?${query}`).pathname + `?${query}`;
			return checked(
				what,
				await ctx.load({
					url: listUrl(project),
					headers,
					connections: 1,
					amount: queries.length,
					warmup: 0,
					setupRequest: req => ({ ...req, path: path(queries[next++ % queries.length]) }),
				}),
			);
		};
		const pagesOf = (total: number, n: number) => Array.from({ length: n }, (_, i) => 2 + Math.floor(((total / 20 - 2) * i) / (n - 1)));
		// A cursor names where a page ends by the build's number in its project (the id beside it is not read).
		const keyset = (total: number) =>
			pagesOf(total, 60).map(page => {
				const seq = total - (page - 1) * 20 + 1;
				return `pagination=keyset&order_by=id&sort=desc&per_page=20&cursor=${encodeCursor({ id: seq, seq })}`;
			});
		/** Every case on one project, each query string distinct per project (none found in the cache). */
		const measure = async (project: number, builds: number) => ({
			cached: checked("page 1 cached", await ctx.load({ url: buildsUrl(project), headers })),
			page1: await uncached(
				"page 1",
				project,
				PER_PAGE_VARIANTS.map(n => `per_page=${n}`),
			),
			deep: await uncached(
				"deep pages",
				project,
				pagesOf(builds, 60).map(p => `page=${p}`),
			),
			scope: await uncached(
				"scope=running",
				project,
				PER_PAGE_VARIANTS.slice(0, 40).map(n => `scope=running&per_page=${n}`),
			),
			keyset: await uncached("v4 keyset pages", project, keyset(builds), jobsUrl),
		});
		/** The builds process's RSS at rest: restarted, a few uncached pages of `project` read, then left alone. */
		const restingRss = async (s: Stack, project: number) => {
			const proc = await s.restart("builds");
			await s.waitForRoute(`/projects/${project}/builds`);
			await uncached(
				"pages after the restart",
				project,
				[10, 11, 12, 13, 14].map(n => `per_page=${n}&page=2`),
			);
			await new Promise(r => setTimeout(r, SETTLE_MS));
			return (rssBytes(proc.child.pid) ?? NaN) / MB;
		};

		ctx.log(`seeding ${fmt(small)} builds into the store`);
		const smallProject = await seed(small);
		const smallRss = await restingRss(stack, smallProject);
		ctx.log(`${fmt(small)} builds: every case`);
		const base = await measure(smallProject, small);

		const rows: Row[] = [];
		let largest = { builds: 0, project: 0 };
		for (const builds of large) {
			ctx.log(`seeding ${fmt(builds)} builds into the store`);
			const project = await seed(builds);
			largest = { builds, project };
			ctx.log(`${fmt(builds)} builds: every case`);
			const at = await measure(project, builds);
			const compare = (name: string, metric: string, value: LoadResult, baseline: LoadResult) =>
				rows.push({
					case: `${fmt(builds)} builds: ${name}`,
					metric,
					value: value.latency,
					baseline: `${fmt(small)} builds, same`,
					baselineValue: baseline.latency,
					better: "lower",
					extra: { requests: value.requests, baselineRequests: baseline.requests, rps: Math.round(value.rps), baselineRps: Math.round(baseline.rps) },
					goal: PAGE_GOAL,
				});
			compare("page 1 (cached)", `latency ms @ c=${ctx.connections}`, at.cached, base.cached);
			compare("page 1 (uncached)", "latency ms @ c=1", at.page1, base.page1);
			compare(`deep pages (2…${fmt(builds / 20)}, uncached)`, "latency ms @ c=1", at.deep, base.deep);
			compare("scope=running page 1 (uncached)", "latency ms @ c=1", at.scope, base.scope);
			compare(`v4 keyset pages of jobs (cursors over 2…${fmt(builds / 20)}, uncached)`, "latency ms @ c=1", at.keyset, base.keyset);
		}
		const largeRss = await restingRss(stack, largest.project);
		rows.push({
			case: `builds process at rest, ${fmt(largest.builds)} + ${fmt(small)} builds stored`,
			metric: "RSS MB",
			value: single(Math.round(largeRss * 10) / 10),
			baseline: `${fmt(small)} builds stored`,
			baselineValue: single(Math.round(smallRss * 10) / 10),
			better: "lower",
			goal: PAGE_GOAL,
		});
		return rows;
	},
};

export default scenario;
