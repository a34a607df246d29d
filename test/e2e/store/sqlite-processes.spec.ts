/**
 * Two all-in-one processes (`npm start` twice, other ports) on one DATA_DIR: both write labels,
 * deploy keys, snippets and builds into the same project at once, one is killed with SIGKILL in
 * the middle, and SQLite's locks keep the data whole: every write either process answered is there,
 * ids are never given twice, every list is exact through either process, and the killed one
 * starts again (docs/architecture.md#embedded-store).
 */
import { startCluster, type Cluster } from "../../support/cluster";
import { createProject } from "../../support/fixtures";
import { client, waitFor } from "../../support/http";
import { freePort } from "../../support/processes";
import { exactSizes, KINDS, noneAnswered, startBurst, walkPages, type Target } from "../../support/store-writes";

let cluster: Cluster;
let first: Target;
let second: Target;

beforeAll(async () => {
	// No rate limit: the writes go as fast as the machine takes them (the limit is test/e2e/edge/rate-limit.spec.ts's).
	cluster = await startCluster({ nodes: { first: "" }, nats: false, env: { RATE_LIMIT_PER_MINUTE: "0" } });
	const projectId = (await createProject(cluster.api())).id;
	first = { api: cluster.api(), url: cluster.url, internalSecret: cluster.internalSecret, projectId };
	const port = await freePort();
	await cluster.spawnNode("second", "", { PORT: String(port) });
	const url = `http://127.0.0.1:${port}/api/v3`;
	second = { ...first, api: client(url, cluster.rootToken), url };
}, 120000);

afterAll(async () => {
	await cluster?.stop();
}, 60000);

it("keeps every answered write of both processes, gives no id twice, and lists exactly through either", async () => {
	const answered = noneAnswered();
	const bursts = [startBurst(first, answered), startBurst(second, answered)];
	await waitFor("writes through both processes", () => bursts.every(b => b.answered >= 40), 60000, 5);
	await cluster.kill("second", "SIGKILL");
	await waitFor("writes through the first one after the kill", () => bursts[0].answered >= 80, 60000, 5);
	await Promise.all(bursts.map(b => b.stop()));
	const unanswered = bursts[0].unanswered + bursts[1].unanswered;
	await cluster.spawnNode("second", "", { PORT: new URL(second.url).port });

	for (const through of [first, second])
		for (const kind of KINDS) {
			const { total, items, sizes } = await walkPages(through, kind);
			const listed = new Set(items);
			expect({ kind, missing: [...answered[kind]].filter(x => !listed.has(x)) }).toEqual({ kind, missing: [] });
			expect({ kind, listed: items.length, distinct: listed.size, sizes }).toEqual({ kind, listed: total, distinct: total, sizes: exactSizes(total) });
			expect(total - answered[kind].size).toBeLessThanOrEqual(unanswered);
			expect(answered[kind].size).toBeGreaterThan(5);
		}
}, 180000);
