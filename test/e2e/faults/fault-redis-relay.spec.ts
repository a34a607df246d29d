/**
 * Redis is away for the `labels` process alone: the gateway and accounts reach the shared Redis
 * directly, labels through a proxy the test cuts. A label created meanwhile is answered, and the
 * gateway, which answers hits straight from that Redis, lists it at once rather than the list it
 * had cached before: the clean labels missed is done by the gateway (lib/cache/clean-relay.ts).
 */
import Redis from "ioredis";
import { startCluster, type Cluster } from "../../support/cluster";
import type { TestUser } from "../../support/fixtures";
import { createLabel as makeLabel, labelledProject, labelNames as labelsOf } from "../../support/bounded-labels";
import { waitFor } from "../../support/http";
import { REDIS_URL } from "../../support/servers";
import { TcpProxy } from "../../support/tcp-proxy";

let proxy: TcpProxy;
let cluster: Cluster;
let owner: TestUser;
let projectId: number;

const labelNames = () => labelsOf(cluster.url, owner.token, projectId);
const createLabel = (name: string) => makeLabel(cluster.url, owner.token, projectId, name);

/** The labels lists cached in the shared Redis for this cluster. */
async function cachedLists(): Promise<string[]> {
	const r = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
	try {
		await r.connect();
		return await r.keys(`MOL-${cluster.namespace}-labels.list*`);
	} finally {
		r.disconnect();
	}
}

const logsOf = (...names: string[]) => names.map(n => cluster.logs(n)).join("\n");

beforeAll(async () => {
	proxy = await TcpProxy.start(Number(new URL(REDIS_URL).port));
	cluster = await startCluster({ nodes: { api: "api", accounts: "accounts" }, env: { LOG_LEVEL: "info" } });
	// Its own route to the same Redis, which the test can cut for it alone.
	await cluster.spawnNode("labels", "labels", { CACHER: proxy.url("redis") });
	({ owner, projectId } = await labelledProject(cluster));
}, 120000);

afterAll(async () => {
	await cluster?.stop();
	await proxy?.cut();
});

it("serves the list from the shared cache while every process reaches Redis", async () => {
	expect(await labelNames()).toEqual(["before"]);
	expect(await cachedLists()).not.toEqual([]);
});

describe("Redis cut for the labels process alone", () => {
	beforeAll(async () => {
		await proxy.cut();
		await waitFor("labels to degrade its cache", () => /Cache degraded/.test(logsOf("labels")), 10000);
	});

	it("lists a label created meanwhile through the gateway at once, not the list cached before", async () => {
		// The old list is still in the shared Redis, and the gateway answers it.
		expect(await cachedLists()).not.toEqual([]);
		expect(await labelNames()).toEqual(["before"]);
		await createLabel("during-cut");
		expect(await labelNames()).toEqual(["before", "during-cut"]);
		for (let i = 0; i < 5; i++) expect(await labelNames()).toEqual(["before", "during-cut"]);
		expect(logsOf("api")).not.toMatch(/Ignored a cache clean/);
		expect(logsOf("api", "accounts", "labels")).not.toMatch(/Unexpected error|unhandled|UnhandledPromiseRejection/i);
		for (const name of ["api", "accounts", "labels"]) expect(cluster.nodes.get(name)!.child.exitCode).toBeNull();
	});

	it("keeps the list right once labels reaches Redis again", async () => {
		await proxy.restore();
		await waitFor("the recovery to be logged", () => /Cache is back on Redis/.test(logsOf("labels")), 20000, 250);
		for (let i = 0; i < 3; i++) expect(await labelNames()).toEqual(["before", "during-cut"]);
		await createLabel("after");
		expect(await labelNames()).toEqual(["after", "before", "during-cut"]);
	});
});
