/**
 * Build numbers survive a crash: the builds process, on the embedded store (SQLite), is killed with
 * SIGKILL in the middle of bursts of build creations (`POST /internal/builds`) and started again
 * on the same data, seven times. After every restart the project's list is exact: `X-Total` is
 * the number of builds there are, every page but the last is full, the pages hold every build
 * once, newest first, and every build a client was answered 201 for is there.
 */
import { internalApi } from "../../support/builds";
import { startCluster, type Cluster } from "../../support/cluster";
import { createProject } from "../../support/fixtures";
import { waitFor } from "../../support/http";

const CYCLES = 7;
const CONCURRENCY = 8;
const PER_PAGE = 20;

let cluster: Cluster;
let projectId: number;

beforeAll(async () => {
	cluster = await startCluster({ nodes: { api: "api", accounts: "accounts", builds: "builds" }, env: { REQUEST_TIMEOUT_MS: "2000" } });
	projectId = (await createProject(cluster.api())).id;
	await cluster.waitForRoute("GET", `/projects/${projectId}/builds`);
}, 120000);

afterAll(async () => {
	await cluster?.stop();
}, 60000);

/** Clients creating builds in a loop until stopped; the ids answered 201, and how many requests got no 201. */
function startBurst(created: Set<number>) {
	let running = true;
	let failed = 0;
	const ci = internalApi(cluster.url, cluster.internalSecret);
	const loops = Array.from({ length: CONCURRENCY }, async (_, n) => {
		while (running) {
			const res = await ci.create({ project_id: projectId, name: `burst-${n}` }).catch(() => null);
			if (res?.status === 201) created.add(res.body.id);
			else {
				failed++;
				await new Promise(r => setTimeout(r, 50));
			}
		}
	});
	return {
		get failed() {
			return failed;
		},
		stop: async () => {
			running = false;
			await Promise.all(loops);
		},
	};
}

/** Every page of the project's builds, as a client walks them. */
async function walkPages() {
	const first = await cluster.api().get(`/projects/${projectId}/builds`, { query: { per_page: PER_PAGE, page: 1 } });
	expect(first.status).toBe(200);
	const total = Number(first.headers.get("x-total"));
	const pages = Number(first.headers.get("x-total-pages"));
	const sizes: number[] = [];
	const ids: number[] = [];
	for (let page = 1; page <= pages; page++) {
		const res = page === 1 ? first : await cluster.api().get(`/projects/${projectId}/builds`, { query: { per_page: PER_PAGE, page } });
		expect(res.status).toBe(200);
		sizes.push(res.body.length);
		ids.push(...res.body.map((b: { id: number }) => b.id));
	}
	return { total, pages, sizes, ids };
}

it(`keeps X-Total and every page exact across ${CYCLES} kill -9 cycles of the builds process during bursts of creations`, async () => {
	const created = new Set<number>();
	let unanswered = 0;
	for (let cycle = 1; cycle <= CYCLES; cycle++) {
		const before = created.size;
		const burst = startBurst(created);
		// Killed at a different point of each burst, with creations in flight.
		await waitFor("creations under way", () => Promise.resolve(created.size >= before + 10 + 7 * cycle), 30000, 5);
		await cluster.kill("builds", "SIGKILL");
		await burst.stop();
		unanswered += burst.failed;
		await cluster.spawnNode("builds", "builds");
		await cluster.waitForRoute("GET", `/projects/${projectId}/builds`);

		const { total, pages, sizes, ids } = await walkPages();
		// Builds whose request was cut by the kill may or may not have been stored; none is counted without being listed.
		expect({ cycle, listed: ids.length, total }).toEqual({ cycle, listed: total, total });
		expect(pages).toBe(Math.ceil(total / PER_PAGE));
		expect(sizes).toEqual(Array.from({ length: pages }, (_, i) => (i < pages - 1 ? PER_PAGE : total - PER_PAGE * (pages - 1))));
		expect(new Set(ids).size).toBe(ids.length);
		expect(ids).toEqual([...ids].sort((a, b) => b - a));
		expect([...created].filter(id => !ids.includes(id))).toEqual([]);
		expect(total - created.size).toBeLessThanOrEqual(unanswered);
	}
	expect(created.size).toBeGreaterThan(CYCLES * 10);
}, 240000);
