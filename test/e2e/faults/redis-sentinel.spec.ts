/**
 * Redis through Sentinel (REDIS_SENTINELS, docs/operations.md#redis-sentinel): gateway, accounts and
 * labels as separate processes whose cache and rate limits live on the primary that three Debian
 * `redis-sentinel`s watch (test/support/redis-sentinel.ts). The primary is killed while clients
 * read and the rate limiter counts: no answer is a 5xx (the cache degrades, the limiter counts in
 * memory, as docs/architecture.md#resilient-cache says), and once the Sentinels have promoted the
 * replica the cache and the limiter are back on Redis, on the new primary, by themselves. The old
 * primary, started again, becomes a replica, and nothing notices.
 */
import { startCluster, type Cluster } from "../../support/cluster";
import type { TestUser } from "../../support/fixtures";
import { createLabel as makeLabel, labelledProject } from "../../support/bounded-labels";
import { client, waitFor } from "../../support/http";
import { SentinelGroup, SENTINEL_NAME } from "../../support/redis-sentinel";

let group: SentinelGroup;
let cluster: Cluster;
let owner: TestUser;
let projectId: number;

const logsOf = (...names: string[]) => names.map(n => cluster.logs(n)).join("\n");

/** This cluster's keys on one Redis server: cache entries and rate-limit counters. */
async function keysOn(port: number): Promise<{ cache: string[]; rateLimit: string[] }> {
	const r = group.client(port);
	try {
		return { cache: await r.keys(`MOL-${cluster.namespace}-*`), rateLimit: await r.keys(`${cluster.namespace}:rl:*`) };
	} finally {
		r.disconnect();
	}
}

/** Reads the labels (a cached read) and the user (each request counted by the limiter) until stopped; every status, in order. */
function readContinuously(): { statuses: number[]; remaining: number[]; stop: () => Promise<void> } {
	const statuses: number[] = [];
	const remaining: number[] = [];
	let running = true;
	const api = client(cluster.url, owner.token);
	const loop = (async () => {
		while (running) {
			for (const path of [`/projects/${projectId}/labels`, "/user"]) {
				const res = await api.get(path);
				statuses.push(res.status);
				const left = res.headers.get("ratelimit-remaining");
				if (left !== null) remaining.push(Number(left));
			}
		}
	})();
	return {
		statuses,
		remaining,
		stop: async () => {
			running = false;
			await loop;
		},
	};
}

beforeAll(async () => {
	group = await SentinelGroup.start();
	cluster = await startCluster({
		nodes: { api: "api", accounts: "accounts", labels: "labels" },
		// No CACHER: through the Sentinels, the cache and the limiter find the primary themselves.
		redis: false,
		env: { REDIS_SENTINELS: group.sentinelList, REDIS_SENTINEL_NAME: SENTINEL_NAME, LOG_LEVEL: "info", RATE_LIMIT_PER_MINUTE: "100000" },
	});
	({ owner, projectId } = await labelledProject(cluster));
}, 120000);

afterAll(async () => {
	await cluster?.stop();
	await group?.stop();
});

it("keeps the cache and the rate-limit counters on the primary the Sentinels name", async () => {
	const primary = await group.primaryPort();
	expect(primary).toBe(group.redis[0].port);
	await client(cluster.url, owner.token).get(`/projects/${projectId}/labels`);
	const keys = await keysOn(primary);
	expect(keys.cache).toEqual(expect.arrayContaining([expect.stringMatching(/labels\.list/), expect.stringMatching(/accounts\.resolveToken/)]));
	expect(keys.rateLimit.length).toBeGreaterThan(0);
});

it("the primary killed under reads and rate limits: no 5xx, and the cache and the limiter come back on the new primary by themselves", async () => {
	const reads = readContinuously();
	await waitFor("reads to be under way", () => reads.statuses.length >= 20, 10000, 20);
	const old = await group.killPrimary();
	const promoted = await group.untilFailedOver(old);
	expect(promoted).toBe(group.redis[1].port);
	// A write made around the failover is seen by the reads after it (the cache is not left stale).
	await makeLabel(cluster.url, owner.token, projectId, "during-failover");
	await waitFor(
		"the cache and the limiter to be back on Redis, on the new primary",
		async () => {
			const keys = await keysOn(promoted);
			return (
				/Cache is back on Redis/.test(logsOf("labels").split("Cache degraded").pop() ?? "") &&
				/Rate limiting is back on Redis/.test(logsOf("api")) &&
				keys.cache.some(k => k.includes("labels.list")) &&
				keys.rateLimit.length > 0
			);
		},
		60000,
		250,
	);
	const during = reads.statuses.length;
	await waitFor("more reads after the recovery", () => reads.statuses.length >= during + 20, 10000, 20);
	await reads.stop();
	expect(reads.statuses.filter(s => s !== 200)).toEqual([]);
	expect((await client(cluster.url, owner.token).get(`/projects/${projectId}/labels`)).body.map((l: { name: string }) => l.name)).toEqual([
		"before",
		"during-failover",
	]);
	// What the degradation says, once each, and nothing unexpected.
	expect(logsOf("labels")).toMatch(/Cache degraded, requests are served without it/);
	expect(logsOf("api")).toMatch(/Rate limiting fell back to memory/);
	expect(logsOf("api", "accounts", "labels")).not.toMatch(/Unexpected error|unhandled|UnhandledPromiseRejection/i);
	// The counters go on in Redis after the failover: each answer leaves fewer requests than the one before.
	const last = reads.remaining.slice(-10);
	expect(last).toHaveLength(10);
	expect(last).toEqual([...last].sort((a, b) => b - a));
	expect(new Set(last).size).toBe(10);
}, 120000);

it("the old primary started again becomes a replica, and the service goes on without a 5xx", async () => {
	const primary = await group.primaryPort();
	const old = group.redis.find(r => r.port !== primary)!.port;
	await group.restart(old);
	await waitFor("the Sentinels to make it a replica", async () => (await group.role(old)) === "slave", 30000, 200);
	const reads = readContinuously();
	await waitFor("reads", () => reads.statuses.length >= 40, 20000, 20);
	await reads.stop();
	expect(reads.statuses.filter(s => s !== 200)).toEqual([]);
	expect(await group.primaryPort()).toBe(primary);
}, 60000);
