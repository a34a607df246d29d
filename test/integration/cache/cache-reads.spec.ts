/**
 * The gateway's cache reads name the entry the cached action itself fills (its cacher's key), on
 * the all-in-one's in-memory cacher and on the Redis cacher shared by split services.
 */
import { ServiceBroker, type ServiceSchema } from "moleculer";
import { CacheReads, EncodedJson, sentAsStored } from "../../../lib/cache/cache-reads";
import { paginated } from "../../../lib/api/pagination";
import { ResilientCacheMiddleware } from "../../../middlewares/resilient-cache.middleware";
import { REDIS_URL, requireServers, uniqueNamespace } from "../../support/servers";

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
				const page = (ctx.params as { page?: number }).page ?? 1;
				return paginated([{ name: "bug", page }], 1000, { page, perPage: 20 }); // 50 pages: each one stored
			},
		},
		uncached: () => ({ fresh: true }),
		names: {
			cache: { keys: ["kind"], ttl: 60 },
			params: { kind: { type: "string" } },
			handler(ctx) {
				const kind = (ctx.params as { kind: string }).kind;
				if (kind === "array") return [{ name: 'Äpfel & "Birnen" 😀 \u2028', id: 1 }];
				if (kind === "object") return { name: "bug", nested: { n: 1.5e-7 } };
				if (kind === "text") return "plain";
				return null;
			},
		},
	},
};

describe.each([
	["memory", () => ({ type: "MemoryLRU", options: { max: 100 } })],
	["redis", () => ({ type: "Redis", options: { redis: REDIS_URL, prefix: uniqueNamespace("cache-reads") } })],
])("%s cacher", (cacherKind, cacher) => {
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
		if (cacherKind === "memory") expect(await reads.read(declaration(), { page: 2 }, meta)).toBe(read);
	});

	it("hands an entry out at once only from the in-process cache, as the very object it keeps", async () => {
		const answered = await broker.call("labels.list", { page: 6 }, { meta });
		const key = reads.keyOf(declaration(), { page: 6 }, meta);
		if (cacherKind === "memory") {
			expect(reads.peek(key)).toEqual(answered);
			expect(reads.peek(key)).toBe(await reads.read(declaration(), { page: 6 }, meta));
		} else expect(reads.peek(key)).toBeUndefined();
		expect(reads.peek(reads.keyOf(declaration(), { page: 7 }, meta))).toBeUndefined();
		expect(reads.peek(null)).toBeUndefined();
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

	it("gives an answer from Redis as the JSON bytes it holds when they are sent unchanged, and parsed otherwise", async () => {
		const names = () => broker.registry.getActionList({}).find(a => a.name === "labels.names")!.action as never;
		for (const kind of ["array", "object"]) {
			const answered = await broker.call("labels.names", { kind });
			const hit = await reads.answer(names(), { kind }, {});
			if (cacherKind === "memory") expect(hit).toBe(await reads.read(names(), { kind }, {}));
			else {
				expect(hit).toBeInstanceOf(EncodedJson);
				// Exactly the body the gateway would have encoded from the parsed entry.
				expect((hit as EncodedJson).bytes.toString("utf8")).toBe(JSON.stringify(answered));
			}
		}
		// A page of results is turned into rows and headers by the gateway: parsed, as is a string.
		const page = await broker.call("labels.list", { page: 9 }, { meta });
		expect(await reads.answer(declaration(), { page: 9 }, meta)).toEqual(page);
		await broker.call("labels.names", { kind: "text" });
		expect(await reads.answer(names(), { kind: "text" }, {})).toBe("plain");
		// A stored null is what `read` makes of it (from Redis: no answer).
		await broker.call("labels.names", { kind: "none" });
		const none = await reads.answer(names(), { kind: "none" }, {});
		expect(none).toBe(await reads.read(names(), { kind: "none" }, {}));
		if (cacherKind === "redis") expect(none).toBeUndefined();
		expect(await reads.answer(names(), { kind: "never-asked" }, {})).toBeUndefined();
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

it("sends unchanged JSON arrays and objects, not pages of results nor other values", () => {
	const bytes = (text: string) => Buffer.from(text);
	expect(sentAsStored(bytes("[]"))).toBe(true);
	expect(sentAsStored(bytes('[{"name":"bug"}]'))).toBe(true);
	expect(sentAsStored(bytes('{"id":1}'))).toBe(true);
	expect(sentAsStored(bytes('{"$paginated":true,"rows":[],"total":0}'))).toBe(false);
	expect(sentAsStored(bytes('"text"'))).toBe(false);
	expect(sentAsStored(bytes("null"))).toBe(false);
	expect(sentAsStored(bytes("12"))).toBe(false);
	expect(sentAsStored(bytes(""))).toBe(false);
});

it("gives an answer from a cache that hands out bytes only once they are there, and nothing while it is away", async () => {
	const entries = new Map<string, Buffer>([
		["k", Buffer.from("[1]")],
		["odd", Buffer.from("not json")],
	]);
	const cacher = {
		connected: true,
		get: () => Promise.reject(new Error("must not be asked")),
		getEncoded: (key: string) => Promise.resolve(entries.get(key) ?? null),
		getCacheKey: (_action: object, _opts: object, ctx: { params: object }) => (ctx.params as { key: string }).key,
	};
	const reads = new CacheReads(cacher);
	const action = { name: "labels.list", cache: true };
	expect(((await reads.answer(action, { key: "k" }, {})) as EncodedJson).bytes.toString()).toBe("[1]");
	expect(await reads.answer(action, { key: "missing" }, {})).toBeUndefined();
	// Not what the cacher stores: a miss, as the cacher's own read makes it.
	expect(await reads.answer(action, { key: "odd" }, {})).toBeUndefined();
	cacher.connected = false;
	expect(await reads.answer(action, { key: "k" }, {})).toBeUndefined();
});
