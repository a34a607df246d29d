import { ProjectCache } from "../../../../lib/cache/project-cache";

const deferred = <T>() => {
	let resolve!: (v: T) => void;
	let reject!: (e: Error) => void;
	const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
	return { promise, resolve, reject };
};

describe("ProjectCache", () => {
	afterEach(() => jest.useRealTimers());

	it("loads a project once and answers from memory until the TTL", async () => {
		jest.useFakeTimers({ now: 1_000_000 });
		const cache = new ProjectCache<string>({ ttlMs: 1000, maxEntries: 10 });
		const load = jest.fn(() => Promise.resolve("settings"));
		expect(await cache.get(1, load)).toBe("settings");
		expect(await cache.get(1, load)).toBe("settings");
		expect(load).toHaveBeenCalledTimes(1);
		jest.setSystemTime(1_000_999);
		await cache.get(1, load);
		expect(load).toHaveBeenCalledTimes(1);
		jest.setSystemTime(1_001_000);
		await cache.get(1, load);
		expect(load).toHaveBeenCalledTimes(2);
	});

	it("shares one load between concurrent misses", async () => {
		const cache = new ProjectCache<string>({ ttlMs: 1000, maxEntries: 10 });
		const d = deferred<string>();
		const load = jest.fn(() => d.promise);
		const both = Promise.all([cache.get(1, load), cache.get(1, load)]);
		d.resolve("one load");
		expect(await both).toEqual(["one load", "one load"]);
		expect(load).toHaveBeenCalledTimes(1);
	});

	it("reads a project again after invalidate, and keeps no load that was under way when it changed", async () => {
		const cache = new ProjectCache<string>({ ttlMs: 60_000, maxEntries: 10 });
		const before = deferred<string>();
		const early = cache.get(1, () => before.promise);
		cache.invalidate(1);
		before.resolve("old");
		expect(await early).toBe("old");
		expect(await cache.get(1, () => Promise.resolve("new"))).toBe("new");
		expect(await cache.get(1, () => Promise.resolve("newer"))).toBe("new");
		cache.invalidate(1);
		expect(await cache.get(1, () => Promise.resolve("newer"))).toBe("newer");
	});

	it("forgets a failed load", async () => {
		const cache = new ProjectCache<string>({ ttlMs: 60_000, maxEntries: 10 });
		await expect(cache.get(1, () => Promise.reject(new Error("integrations unreachable")))).rejects.toThrow("integrations unreachable");
		expect(await cache.get(1, () => Promise.resolve("back"))).toBe("back");
	});

	it("keeps at most maxEntries projects, dropping the least recently used", async () => {
		const cache = new ProjectCache<string>({ ttlMs: 60_000, maxEntries: 2 });
		await cache.get(1, () => Promise.resolve("a"));
		await cache.get(2, () => Promise.resolve("b"));
		await cache.get(1, () => Promise.resolve("a again")); // 1 used: 2 is now the oldest
		await cache.get(3, () => Promise.resolve("c"));
		expect(cache.size).toBe(2);
		expect(await cache.get(1, () => Promise.resolve("reloaded"))).toBe("a");
		expect(await cache.get(2, () => Promise.resolve("reloaded"))).toBe("reloaded");
	});

	it("with a TTL of 0 loads every time", async () => {
		const cache = new ProjectCache<string>({ ttlMs: 0, maxEntries: 10 });
		const load = jest.fn(() => Promise.resolve("x"));
		await cache.get(1, load);
		await cache.get(1, load);
		expect(load).toHaveBeenCalledTimes(2);
		expect(cache.size).toBe(0);
	});

	// lru-cache keeps the bounds (lib/cache/project-cache.ts): where its rules could differ from ours.

	it("counts the TTL from the load's start, a slow load included; a hit does not lengthen it", async () => {
		jest.useFakeTimers({ now: 1_000_000 });
		const cache = new ProjectCache<string>({ ttlMs: 1000, maxEntries: 10 });
		const slow = deferred<string>();
		const first = cache.get(1, () => slow.promise);
		jest.setSystemTime(1_000_900);
		slow.resolve("slow");
		expect(await first).toBe("slow");
		expect(await cache.get(1, () => Promise.resolve("again"))).toBe("slow");
		jest.setSystemTime(1_000_999);
		expect(await cache.get(1, () => Promise.resolve("again"))).toBe("slow");
		jest.setSystemTime(1_001_000);
		expect(await cache.get(1, () => Promise.resolve("again"))).toBe("again");
		jest.setSystemTime(1_001_999);
		expect(await cache.get(1, () => Promise.resolve("third"))).toBe("again");
	});

	it("keeps an entry for less than its TTL down to 1 ms (never for good)", async () => {
		jest.useFakeTimers({ now: 1_000_000 });
		const cache = new ProjectCache<string>({ ttlMs: 1, maxEntries: 10 });
		const load = jest.fn(() => Promise.resolve("x"));
		await cache.get(1, load);
		await cache.get(1, load);
		expect(load).toHaveBeenCalledTimes(1);
		jest.setSystemTime(1_000_001);
		await cache.get(1, load);
		expect(load).toHaveBeenCalledTimes(2);
	});

	it("after invalidate a caller starts its own load, and the old load's failure drops nothing newer", async () => {
		const cache = new ProjectCache<string>({ ttlMs: 60_000, maxEntries: 10 });
		const old = deferred<string>();
		const first = cache.get(1, () => old.promise);
		const joined = cache.get(1, () => Promise.resolve("not loaded: the first load is shared"));
		cache.invalidate(1);
		const fresh = jest.fn(() => Promise.resolve("fresh"));
		const after = cache.get(1, fresh);
		old.reject(new Error("stale load failed"));
		await expect(first).rejects.toThrow("stale load failed");
		await expect(joined).rejects.toThrow("stale load failed");
		expect(await after).toBe("fresh");
		expect(await cache.get(1, () => Promise.resolve("again"))).toBe("fresh");
		expect(fresh).toHaveBeenCalledTimes(1);
		expect(cache.size).toBe(1);
	});

	it("gives a failed load to every caller that shared it and keeps nothing, even once its TTL is over", async () => {
		jest.useFakeTimers({ now: 1_000_000 });
		const cache = new ProjectCache<string>({ ttlMs: 1000, maxEntries: 10 });
		const failing = deferred<string>();
		const load = jest.fn(() => failing.promise);
		const both = Promise.allSettled([cache.get(1, load), cache.get(1, load)]);
		jest.setSystemTime(1_002_000);
		failing.reject(new Error("integrations unreachable"));
		expect((await both).map(r => r.status)).toEqual(["rejected", "rejected"]);
		expect(load).toHaveBeenCalledTimes(1);
		expect(cache.size).toBe(0);
	});

	it("evicts in order of last use, a load under way as any entry (its callers still get its answer)", async () => {
		const cache = new ProjectCache<string>({ ttlMs: 60_000, maxEntries: 3 });
		const pending = deferred<string>();
		const early = cache.get(1, () => pending.promise);
		await cache.get(2, () => Promise.resolve("b"));
		await cache.get(3, () => Promise.resolve("c"));
		await cache.get(2, () => Promise.resolve("b again")); // used: 1 (under way), 3, 2
		await cache.get(4, () => Promise.resolve("d")); // 1 goes
		pending.resolve("a");
		expect(await early).toBe("a");
		expect(await cache.get(3, () => Promise.resolve("c again"))).toBe("c"); // used: 2, 4, 3
		expect(await cache.get(1, () => Promise.resolve("a again"))).toBe("a again"); // 2 goes
		expect(await cache.get(4, () => Promise.resolve("d again"))).toBe("d");
		expect(await cache.get(2, () => Promise.resolve("b reloaded"))).toBe("b reloaded");
		expect(cache.size).toBe(3);
	});

	it("with a TTL of 0 shares no load either, and keeps nothing to invalidate", async () => {
		const cache = new ProjectCache<string>({ ttlMs: 0, maxEntries: 10 });
		const load = jest.fn(() => Promise.resolve("x"));
		expect(await Promise.all([cache.get(1, load), cache.get(1, load)])).toEqual(["x", "x"]);
		expect(load).toHaveBeenCalledTimes(2);
		cache.invalidate(1);
		expect(cache.size).toBe(0);
	});
});
