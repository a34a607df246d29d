/**
 * The embedded store survives kill -9: the all-in-one process (`npm start`'s shape) is killed with
 * SIGKILL in the middle of bursts of label, deploy-key, snippet and build writes and started again
 * on the same DATA_DIR, cycle after cycle. Every start succeeds, every write answered 2xx is
 * there, and each list is exact: X-Total is what the pages hold, every page but the last is full,
 * nothing is listed twice. STORE_KILL_CYCLES sets the cycles (`npm run test:kill-loop` runs 200).
 */
import { startCluster, type Cluster } from "../../support/cluster";
import { createProject } from "../../support/fixtures";
import { waitFor } from "../../support/http";
import { exactSizes, KINDS, noneAnswered, startBurst, walkPages, type Target } from "../../support/store-writes";

const CYCLES = Number(process.env.STORE_KILL_CYCLES ?? 5);
/** Writes answered in a cycle before its kill, at the least. */
const BEFORE_KILL = 20;

let cluster: Cluster;
let target: Target;

beforeAll(async () => {
	// No rate limit: the writes go as fast as the machine takes them (the limit is test/e2e/edge/rate-limit.spec.ts's).
	cluster = await startCluster({ nodes: { all: "" }, nats: false, env: { RATE_LIMIT_PER_MINUTE: "0" } });
	const projectId = (await createProject(cluster.api())).id;
	target = { api: cluster.api(), url: cluster.url, internalSecret: cluster.internalSecret, projectId };
}, 120000);

afterAll(async () => {
	await cluster?.stop();
}, 60000);

it(
	`loses no answered write and keeps every list exact across ${CYCLES} kill -9 cycles of the all-in-one process mid-burst`,
	async () => {
		const answered = noneAnswered();
		let unanswered = 0;
		for (let cycle = 1; cycle <= CYCLES; cycle++) {
			const burst = startBurst(target, answered);
			// Killed at a different point of each burst, with writes of every kind in flight.
			await waitFor("writes under way", () => burst.answered >= BEFORE_KILL + (cycle % 7) * 5, 60000, 2);
			await cluster.kill("all", "SIGKILL");
			await burst.stop();
			unanswered += burst.unanswered;
			await cluster.spawnNode("all", "");

			for (const kind of KINDS) {
				const { total, pages, sizes, items } = await walkPages(target, kind);
				const listed = new Set(items);
				// Every answered write is listed; a write cut by the kill may or may not be.
				expect({ cycle, kind, missing: [...answered[kind]].filter(x => !listed.has(x)) }).toEqual({ cycle, kind, missing: [] });
				expect({ cycle, kind, listed: items.length, distinct: listed.size, pages, sizes }).toEqual({
					cycle,
					kind,
					listed: total,
					distinct: total,
					pages: Math.ceil(total / 20),
					sizes: exactSizes(total),
				});
				expect(total - answered[kind].size).toBeLessThanOrEqual(unanswered);
			}
		}
		for (const kind of KINDS) expect(answered[kind].size).toBeGreaterThan(CYCLES);
	},
	CYCLES * 90000,
);
