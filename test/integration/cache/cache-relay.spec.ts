/**
 * A clean a node's Redis missed is done by a gateway whose Redis works (lib/cache/clean-relay.ts):
 * brokers over the real NATS sharing a Redis cacher (a Redis of this test's own, so a clean is one
 * SCAN step), the writer's Redis reached through a proxy the test cuts. The gateway stops serving
 * the entry the write made stale, a read that began on a third node before the write cannot store
 * its old answer after the relayed clean, and malformed events are ignored with a warning.
 * (test/e2e/faults/fault-redis-relay.spec.ts does the same with the real services, one process each.)
 */
import Redis from "ioredis";
import { ServiceBroker, type BrokerOptions, type Context, type Middleware, type Service } from "moleculer";
import { CacheReads } from "../../../lib/cache/cache-reads";
import { CLEAN_RELAY_EVENT, CLEAN_RELAY_GROUP, MAX_RELAYED_KEYS, MAX_RELAYED_LENGTH, MAX_RELAYED_PATTERNS } from "../../../lib/cache/clean-relay";
import { ResilientCacheMiddleware } from "../../../middlewares/resilient-cache.middleware";
import { PROJECT_CACHE_KEY } from "../../../lib/cache/write-generations";
import { CacheCleanerMixin, type CacheCleanerMethods } from "../../../mixins/cache.mixin";
import { waitFor } from "../../support/http";
import { PrivateServer } from "../../support/private-servers";
import { NATS_URL, requireServers, uniqueNamespace } from "../../support/servers";
import { TcpProxy } from "../../support/tcp-proxy";

const namespace = uniqueNamespace("cache-relay");
/** The Redis cacher's prefix in this namespace. */
const prefix = `MOL-${namespace}-`;
const meta = { projectKey: "7" };
const LIST = { name: "notes.list", cache: { keys: [PROJECT_CACHE_KEY], ttl: 300 } };

/** What every replica reads (MongoDB, in production). */
const notes = ["before"];
/** While set, a list read waits here after reading the notes: a slow read. */
let gate: Promise<void> | null = null;
let blocked = 0;

const NotesService = {
	name: "notes",
	mixins: [CacheCleanerMixin()],
	actions: {
		list: {
			cache: LIST.cache,
			async handler() {
				const seen = [...notes];
				if (gate) {
					blocked++;
					await gate;
				}
				return seen;
			},
		},
		async add(this: Service & CacheCleanerMethods, ctx: Context<{ name: string }, typeof meta>) {
			notes.push(ctx.params.name);
			await this.cleanProjectCache(ctx.meta.projectKey);
		},
	},
};

let redis: PrivateServer;
let proxy: TcpProxy;
let direct: Redis;
let gateway: ServiceBroker;
let writer: ServiceBroker;
let reader: ServiceBroker;
let rogue: ServiceBroker;
const warnings: string[] = [];

/** Every warning a broker logs, by its node. */
const captureWarnings = (): Middleware => ({
	name: "CaptureWarnings",
	newLogEntry(type: string, args: unknown[], bindings: { nodeID: string }) {
		if (type === "warn") warnings.push(`${bindings.nodeID}: ${args.map(String).join(" ")}`);
	},
});

function node(nodeID: string, redisUrl: string | null): ServiceBroker {
	const options: BrokerOptions = {
		nodeID,
		namespace,
		transporter: { type: "NATS", options: { url: NATS_URL } },
		serializer: "JSONExt",
		logger: false,
		middlewares: [captureWarnings(), ResilientCacheMiddleware()],
	};
	// The cacher's prefix is the namespace's (MOL-<namespace>-), as in production.
	if (redisUrl) options.cacher = { type: "Redis", options: { redis: redisUrl } } as never;
	return new ServiceBroker(options);
}

const gatewayReads = () => new CacheReads(gateway.cacher as never).read(LIST, {}, meta);
/** On the reader's connection: after a store the reader tried on it. */
const readerReads = () => new CacheReads(reader.cacher as never).read(LIST, {}, meta);
const list = () => reader.call<string[], object>("notes.list", {}, { meta });

beforeAll(async () => {
	await requireServers("nats");
	redis = await PrivateServer.redis();
	proxy = await TcpProxy.start(redis.port);
	direct = new Redis(redis.url);
	gateway = node("gateway", redis.url);
	// A stand-in for the gateway: the relay subscribes the service of that name as it is created.
	gateway.createService({ name: CLEAN_RELAY_GROUP });
	writer = node("writer", proxy.url("redis"));
	writer.createService(NotesService);
	reader = node("reader", redis.url);
	reader.createService(NotesService);
	rogue = node("rogue", null);
	await Promise.all([gateway, writer, reader, rogue].map(b => b.start()));
	await Promise.all([gateway.waitForServices("notes"), writer.waitForServices(CLEAN_RELAY_GROUP), rogue.waitForServices(CLEAN_RELAY_GROUP)]);
}, 30000);

afterAll(async () => {
	await Promise.all([gateway, writer, reader, rogue].map(b => b?.stop()));
	direct?.disconnect();
	await proxy?.cut();
	await redis?.destroy();
});

describe("a write on a node whose Redis is away", () => {
	beforeAll(async () => {
		expect(await list()).toEqual(["before"]);
		expect(await gatewayReads()).toEqual(["before"]);
		await proxy.cut();
		await waitFor("the writer's cache to degrade", () => writer.cacher!.connected === false, 5000, 10);
	});

	it("is cleaned by the gateway, which stops serving the entry it made stale", async () => {
		await writer.call("notes.add", { name: "during" }, { meta });
		await waitFor("the gateway to drop the stale entry", async () => (await gatewayReads()) === undefined, 2000, 10);
		expect(await list()).toEqual(["before", "during"]);
		expect(await gatewayReads()).toEqual(["before", "during"]);
		expect(warnings.filter(w => w.startsWith("gateway"))).toEqual([]);
	});

	it("keeps a read that began on a third node before the write from storing its old answer after the relayed clean", async () => {
		await gateway.cacher!.clean("notes.**");
		// A clean is over once a key it matches is gone: one SCAN step on this test's small keyspace.
		const sentinel = `${prefix}notes.list:"7"|sentinel`;
		await direct.set(sentinel, "x");
		let release!: () => void;
		gate = new Promise(resolve => (release = resolve));
		blocked = 0;
		const racing = list();
		await waitFor("the read to have read the notes", () => blocked === 1, 5000, 5);
		gate = null;

		await writer.call("notes.add", { name: "third" }, { meta });
		await waitFor("the relayed clean to be done", async () => (await direct.exists(sentinel)) === 0, 2000, 10);
		release();
		expect(await racing).toEqual(["before", "during"]);

		expect(await readerReads()).toBeUndefined();
		expect(await list()).toEqual(["before", "during", "third"]);
		expect(await gatewayReads()).toEqual(["before", "during", "third"]);
	});

	afterAll(async () => {
		await proxy.restore();
		await waitFor("the writer's cache to come back", () => writer.cacher!.connected === true, 10000, 50);
	});
});

describe("the event, from any node of the namespace", () => {
	const malformed: unknown[] = [
		null,
		"notes.**",
		["notes.**"],
		{},
		{ patterns: [], keys: [] },
		{ patterns: "notes.**" },
		{ patterns: ["**"] },
		{ patterns: ['*:"7"'] },
		{ patterns: [42] },
		{ keys: [{ key: "notes.list" }] },
		{ keys: ["notes." + "x".repeat(MAX_RELAYED_LENGTH)] },
		{ patterns: Array.from({ length: MAX_RELAYED_PATTERNS + 1 }, () => "notes.**") },
		{ keys: Array.from({ length: MAX_RELAYED_KEYS + 1 }, (_, i) => `notes.list:"${i}"`) },
		{ patterns: ["notes." + "*a".repeat(20)] },
		{ patterns: ["notes.**"], everything: true },
	];

	it("is ignored with a warning when malformed, and cleans nothing", async () => {
		expect(await list()).toEqual(["before", "during", "third"]);
		expect(await gatewayReads()).toEqual(["before", "during", "third"]);
		warnings.length = 0;
		for (const payload of malformed) await rogue.emit(CLEAN_RELAY_EVENT, payload, { groups: [CLEAN_RELAY_GROUP] });
		await waitFor("a warning for each", () => warnings.length >= malformed.length, 5000, 10);
		expect(warnings).toHaveLength(malformed.length);
		for (const w of warnings) expect(w).toMatch(/^gateway: Ignored a cache clean relayed by node rogue: /);
		expect(await gatewayReads()).toEqual(["before", "during", "third"]);
		expect(gateway.cacher!.connected).toBe(true);
	});

	it("cleans what it names when well formed", async () => {
		await rogue.emit(CLEAN_RELAY_EVENT, { patterns: ['notes.**:"7"'] }, { groups: [CLEAN_RELAY_GROUP] });
		await waitFor("the entry to be cleaned", async () => (await gatewayReads()) === undefined, 2000, 10);
	});
});

describe("without a Redis cacher", () => {
	it("subscribes nothing: the memory cacher of the all-in-one process never relays", async () => {
		const alone = new ServiceBroker({ logger: false, cacher: "Memory", middlewares: [ResilientCacheMiddleware()] });
		alone.createService({ name: CLEAN_RELAY_GROUP });
		await alone.start();
		try {
			expect(alone.registry.events.getAllEndpoints(CLEAN_RELAY_EVENT)).toEqual([]);
			expect(gateway.registry.events.getAllEndpoints(CLEAN_RELAY_EVENT).map(ep => ep.id)).toEqual(["gateway"]);
		} finally {
			await alone.stop();
		}
	});
});
