/**
 * Redis, the cacher and the rate-limit store of a cluster, goes away and comes back: a Redis
 * server of this test's own (never the machine's shared one), stopped abruptly (SIGKILL) and
 * frozen (SIGSTOP: connections stay open and nothing answers). Reads and writes keep being served
 * and correct, the degradation is logged once as a warning, and cache and rate limiting return
 * to Redis once it is back.
 */
import Redis from "ioredis";
import { startCluster, type Cluster } from "../../support/cluster";
import type { TestUser } from "../../support/fixtures";
import { createLabel as makeLabel, labelledProject, labelNames as labelsOf } from "../../support/bounded-labels";
import { waitFor } from "../../support/http";
import { PrivateServer } from "../../support/private-servers";

let redis: PrivateServer;
let cluster: Cluster;
let owner: TestUser;
let projectId: number;

const labelNames = () => labelsOf(cluster.url, owner.token, projectId);
const createLabel = (name: string) => makeLabel(cluster.url, owner.token, projectId, name);

/** Keys of this cluster in the private Redis: its cache entries and the rate-limit counters. */
async function redisKeys(): Promise<{ cache: string[]; rateLimit: string[] }> {
	const r = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
	try {
		await r.connect();
		return { cache: await r.keys(`MOL-${cluster.namespace}-*`), rateLimit: await r.keys(`${cluster.namespace}:rl:*`) };
	} finally {
		r.disconnect();
	}
}

const logsOf = (...names: string[]) => names.map(n => cluster.logs(n)).join("\n");

beforeAll(async () => {
	redis = await PrivateServer.redis();
	cluster = await startCluster({ nodes: { api: "api", accounts: "accounts", labels: "labels" }, env: { CACHER: redis.url, LOG_LEVEL: "info" } });
	({ owner, projectId } = await labelledProject(cluster));
}, 120000);

afterAll(async () => {
	await cluster?.stop();
	await redis?.destroy();
});

describe("the cache and the rate limit on the test's own Redis", () => {
	it("uses Redis while it is up", async () => {
		expect(await labelNames()).toEqual(["before"]);
		const keys = await redisKeys();
		expect(keys.cache).toEqual(expect.arrayContaining([expect.stringMatching(/labels\.list/), expect.stringMatching(/accounts\.resolveToken/)]));
		expect(keys.rateLimit.length).toBeGreaterThan(0);
	});
});

describe("Redis killed", () => {
	beforeAll(async () => {
		await redis.stop("SIGKILL");
	});

	it("still serves reads and writes, correctly, and logs the degradation as a warning", async () => {
		for (let i = 0; i < 10; i++) expect(await labelNames()).toEqual(["before"]);
		await createLabel("during-kill");
		expect(await labelNames()).toEqual(["before", "during-kill"]);
		await waitFor(
			"the warnings",
			() => Promise.resolve(/Cache degraded/.test(logsOf("labels")) && /Rate limiting fell back to memory/.test(logsOf("api"))),
			10000,
		);
		expect(logsOf("api", "accounts", "labels")).not.toMatch(/Unexpected error|unhandled|UnhandledPromiseRejection/i);
		for (const name of ["api", "accounts", "labels"]) expect(cluster.nodes.get(name)!.child.exitCode).toBeNull();
	});

	it("returns to Redis once it is back", async () => {
		await redis.start();
		await waitFor(
			"cache entries and rate-limit counters in Redis again",
			async () => {
				await labelNames();
				const keys = await redisKeys();
				return keys.cache.some(k => k.includes("labels.list")) && keys.rateLimit.length > 0;
			},
			20000,
			250,
		);
		await waitFor(
			"the recovery to be logged",
			() => Promise.resolve(/Cache is back on Redis/.test(logsOf("labels")) && /Rate limiting is back on Redis/.test(logsOf("api"))),
			10000,
		);
		expect(await labelNames()).toEqual(["before", "during-kill"]);
	});
});

describe("Redis frozen (SIGSTOP): connections open, no answers", () => {
	it("serves reads without waiting on it, and a write made meanwhile is not hidden by a stale entry afterwards", async () => {
		expect(await labelNames()).toEqual(["before", "during-kill"]); // cached in Redis now
		redis.signal("SIGSTOP");
		try {
			for (let i = 0; i < 5; i++) expect(await labelNames()).toEqual(["before", "during-kill"]);
			await createLabel("during-freeze");
			expect(await labelNames()).toEqual(["before", "during-freeze", "during-kill"]);
		} finally {
			redis.signal("SIGCONT");
		}
		await waitFor(
			"the cache to be back",
			() => Promise.resolve(/Cache is back on Redis/.test(logsOf("labels").split("Cache degraded").pop() ?? "")),
			20000,
			250,
		);
		for (let i = 0; i < 5; i++) expect(await labelNames()).toEqual(["before", "during-freeze", "during-kill"]);
		expect(logsOf("api", "accounts", "labels")).not.toMatch(/Unexpected error|unhandled|UnhandledPromiseRejection/i);
	});
});
