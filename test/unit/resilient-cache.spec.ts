/**
 * The resilient cache wrapper on a stand-in Redis cacher whose client can be made to fail or
 * stall: reads degrade to misses, writes never reject, cleans missed while degraded are replayed
 * before the cache serves again. (test/e2e/fault-redis.spec.ts does the same against a real Redis.)
 */
import { EventEmitter } from "events";
import type { ServiceBroker } from "moleculer";
import { makeCacherResilient } from "../../middlewares/resilient-cache.middleware";

const MISS = undefined;

function setup() {
	let mode: "up" | "down" | "stalled" = "up";
	const cleaned: string[][] = [];
	const logs: string[] = [];
	const answer = <T>(value: T): Promise<T> =>
		mode === "up" ? Promise.resolve(value) : mode === "down" ? Promise.reject(new Error("Connection is closed.")) : new Promise<T>(() => undefined);
	const client = Object.assign(new EventEmitter(), { options: { enableOfflineQueue: true }, ping: () => answer("PONG") });
	const cacher = {
		client,
		connected: true,
		opts: { missingResponse: MISS },
		get: (_key: string) => answer<unknown>("cached"),
		set: (_key: string, _data: unknown) => answer("OK"),
		del: (_keys: string | string[]) => answer(1),
		clean: (match: string | string[] = "*") => answer(cleaned.push(Array.isArray(match) ? match : [match])),
	};
	const logger = { warn: (m: string) => logs.push(`warn ${m}`), info: (m: string) => logs.push(`info ${m}`) };
	const broker = { getLogger: () => logger } as unknown as ServiceBroker;
	makeCacherResilient(broker, cacher);
	const stop = () => (cacher as unknown as { stopResilience(): void }).stopResilience();
	return { cacher, client, cleaned, logs, set: (m: typeof mode) => (mode = m), stop };
}

describe("resilient cache", () => {
	it("turns off ioredis' offline queue, so commands fail at once while Redis is away", () => {
		const t = setup();
		expect(t.client.options.enableOfflineQueue).toBe(false);
		t.stop();
	});

	it("serves a failed read as a miss, degrades with one warning, and never rejects a write", async () => {
		const t = setup();
		t.set("down");
		await expect(t.cacher.get("k")).resolves.toBe(MISS);
		await expect(t.cacher.set("k", 1)).resolves.toBeNull();
		expect(t.cacher.connected).toBe(false);
		expect(t.logs.filter(l => l.startsWith("warn"))).toHaveLength(1);
		t.stop();
	});

	it("bounds a stalled read instead of waiting for Redis", async () => {
		const t = setup();
		t.set("stalled");
		// The stand-in never answers: resolving at all proves the read is bounded.
		await expect(t.cacher.get("k")).resolves.toBe(MISS);
		expect(t.cacher.connected).toBe(false);
		t.stop();
	});

	it("remembers cleans asked for while degraded and replays them before serving from the cache again", async () => {
		const t = setup();
		t.set("down");
		await t.cacher.get("k");
		await t.cacher.clean(['labels.**:"7"', 'labels.**:"7"?**']);
		await t.cacher.del("accounts.resolveToken:abc");
		expect(t.cleaned).toEqual([]);
		t.set("up");
		t.client.emit("ready");
		await new Promise(r => setTimeout(r, 10));
		expect(t.cleaned).toEqual([['labels.**:"7"', 'labels.**:"7"?**', "accounts.resolveToken:abc"]]);
		expect(t.cacher.connected).toBe(true);
		expect(t.logs.at(-1)).toMatch(/^info Cache is back on Redis \(replayed 3 missed invalidations\)/);
		await expect(t.cacher.get("k")).resolves.toBe("cached");
		t.stop();
	});

	it("keeps the cache off when Redis says ready but does not answer", async () => {
		const t = setup();
		t.set("down");
		await t.cacher.get("k");
		t.set("stalled");
		t.client.emit("ready");
		await new Promise(r => setTimeout(r, 800));
		expect(t.cacher.connected).toBe(false);
		t.stop();
	});
});
