/** The workers' delivery records on the real Redis (and the in-memory twin of the all-in-one default). */
import Redis from "ioredis";
import { deliveryKey, MemoryDeliveryLog, RedisDeliveryLog, type DeliveryLog } from "../../lib/delivery-log";
import { REDIS_URL, requireServers, uniqueNamespace } from "../support/servers";

const prefix = `${uniqueNamespace("dlog")}:`;
const opts = { prefix, pendingMs: 60_000, doneMs: 60_000, aliveMs: 600 };
const redis = new Redis(REDIS_URL);

beforeAll(() => requireServers("redis"));

afterAll(async () => {
	const keys = await redis.keys(`${prefix}*`);
	if (keys.length) await redis.del(...keys);
	redis.disconnect();
});

describe.each([
	["redis", () => new RedisDeliveryLog(REDIS_URL, opts)],
	["memory", () => new MemoryDeliveryLog(opts)],
])("%s delivery log", (kind, make: () => DeliveryLog) => {
	let a: DeliveryLog;
	let b: DeliveryLog;
	beforeEach(() => {
		a = make();
		b = kind === "redis" ? make() : a;
	});
	afterEach(async () => {
		await a.close();
		if (b !== a) await b.close();
	});

	it("lets one claim through, skips what is done, and gives back a released claim", async () => {
		const key = deliveryKey(prefix, "g", `e-${kind}-1`, "mail:a@example.com");
		expect(await a.claim(key)).toBe("go");
		expect(await b.claim(key)).toBe("busy");
		await a.release(key);
		expect(await b.claim(key)).toBe("go");
		await b.complete(key);
		expect(await a.claim(key)).toBe("done");
		expect(await b.claim(key)).toBe("done");
	});

	it("keeps targets and events apart", async () => {
		const k1 = deliveryKey(prefix, "g", `e-${kind}-2`, "irc://h/#a");
		const k2 = deliveryKey(prefix, "g", `e-${kind}-2`, "irc://h/#b");
		const k3 = deliveryKey(prefix, "other", `e-${kind}-2`, "irc://h/#a");
		expect(new Set([k1, k2, k3]).size).toBe(3);
		for (const k of [k1, k2, k3]) expect(await a.claim(k)).toBe("go");
	});
});

describe("redis delivery log across processes", () => {
	it("takes over a claim whose holder stopped beating, but not one of a live holder", async () => {
		const key = deliveryKey(prefix, "g", "e-dead", "t");
		const dead = new RedisDeliveryLog(REDIS_URL, opts);
		const live = new RedisDeliveryLog(REDIS_URL, opts);
		try {
			expect(await dead.claim(key)).toBe("go");
			expect(await live.claim(key)).toBe("busy");
			// A crashed process: its heartbeat stops and its alive key expires (close() also removes it).
			await dead.close();
			expect(await live.claim(key)).toBe("go");
			await live.complete(key);
			expect(await redis.get(key)).toBe("done");
			expect(await redis.pttl(key)).toBeGreaterThan(50_000);
		} finally {
			await live.close();
		}
	});
});
