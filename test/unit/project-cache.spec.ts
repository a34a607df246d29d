import { ProjectCache } from "../../lib/cache/project-cache";

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
});
