/**
 * The gateway's cache reads name the entry the cached action itself fills (its cacher's key), on
 * the all-in-one's in-memory cacher and on the Redis cacher shared by split services.
 */
import { ServiceBroker, type ServiceSchema } from "moleculer";
import { CacheReads } from "../../gateway/cache-reads";
import { ResilientCacheMiddleware } from "../../middlewares/resilient-cache.middleware";
import { REDIS_URL, requireServers, uniqueNamespace } from "../support/servers";

beforeAll(() => requireServers("redis"));

let calls = 0;
const labels: ServiceSchema = {
	name: "labels",
	actions: {
		list: {
			cache: { keys: ["#projectKey", "page"], ttl: 1 },
			params: { page: { type: "number", optional: true } },
			handler(ctx) {
				calls++;
				return { rows: [{ name: "bug", page: (ctx.params as { page?: number }).page ?? 1 }], total: 1 };
			},
		},
		uncached: () => ({ fresh: true }),
	},
};

describe.each([
	["memory", () => ({ type: "MemoryLRU", options: { max: 100 } })],
	["redis", () => ({ type: "Redis", options: { redis: REDIS_URL, prefix: uniqueNamespace("cache-reads") } })],
])("%s cacher", (kind, cacher) => {
	const broker = new ServiceBroker({ logger: false, cacher: cacher() as never, middlewares: [ResilientCacheMiddleware()] });
	broker.createService(labels);
	const reads = new CacheReads(broker.cacher as never);
	const declaration = () => broker.registry.getActionList({}).find(a => a.name === "labels.list")!.action as never;
	const meta = { projectKey: "7" };
	beforeAll(() => broker.start());
	afterAll(async () => {
		await broker.cacher!.clean();
		await broker.stop();
	});

	it("finds nothing before the action has answered, then exactly its answer for the same parameters and caller", async () => {
		expect(await reads.read(declaration(), { page: 2 }, meta)).toBeUndefined();
		const answered = await broker.call("labels.list", { page: 2 }, { meta });
		const before = calls;
		const read = await reads.read(declaration(), { page: 2 }, meta);
		expect(read).toEqual(answered);
		expect(calls).toBe(before);
		// Another page, another project: other entries.
		expect(await reads.read(declaration(), { page: 3 }, meta)).toBeUndefined();
		expect(await reads.read(declaration(), { page: 2 }, { projectKey: "8" })).toBeUndefined();
		if (kind === "memory") expect(await reads.read(declaration(), { page: 2 }, meta)).toBe(read);
	});

	it("finds nothing once the service's write has cleaned the entry, or its time to live is over", async () => {
		await broker.call("labels.list", { page: 4 }, { meta });
		expect(await reads.read(declaration(), { page: 4 }, meta)).toBeDefined();
		await broker.cacher!.clean("labels.list:**");
		expect(await reads.read(declaration(), { page: 4 }, meta)).toBeUndefined();

		await broker.call("labels.list", { page: 5 }, { meta });
		await new Promise(resolve => setTimeout(resolve, 1500)); // the declared ttl is 1 s
		expect(await reads.read(declaration(), { page: 5 }, meta)).toBeUndefined();
	});

	it("reads nothing for an action that declares no cache", async () => {
		await broker.call("labels.uncached");
		expect(await reads.read({ name: "labels.uncached" }, {}, {})).toBeUndefined();
		expect(await reads.read({ name: "labels.uncached", cache: false }, {}, {})).toBeUndefined();
	});
});

it("reads nothing without a cacher, or while the cacher is away", async () => {
	expect(await new CacheReads(null).read({ name: "labels.list", cache: true }, {}, {})).toBeUndefined();
	const away = { connected: false, get: () => Promise.reject(new Error("must not be asked")), getCacheKey: () => "k" };
	expect(await new CacheReads(away).read({ name: "labels.list", cache: true }, {}, {})).toBeUndefined();
});
