/**
 * The resilient cache wrapper on a stand-in Redis cacher whose client can be made to fail or
 * stall: reads degrade to misses, writes never reject, cleans missed while degraded are replayed
 * before the cache serves again. (test/e2e/faults/fault-redis.spec.ts does the same against a real Redis.)
 */
import { EventEmitter } from "events";
import { Serializers } from "moleculer";
import type { WriteGenerations } from "../../../lib/cache/write-generations";
import { makeCacherResilient } from "../../../lib/cache/resilient-cacher";
import { waitFor } from "../../support/http";

const MISS = undefined;
const quiet = { warn: () => undefined, info: () => undefined };

/** The resilient wrapper's read of an entry's bytes (where the serializer is plain JSON). */
type WithEncoded = { getEncoded?: (key: string) => Promise<Buffer | null> };
const encodedOf = (cacher: object) => (cacher as WithEncoded).getEncoded;

/** A stand-in ioredis client: PING answers through `answer` (up, down or stalled), and the commands given. */
function standInClient(answer: <T>(value: T) => Promise<T>, commands: object = {}) {
	return Object.assign(new EventEmitter(), { options: { enableOfflineQueue: true }, ping: () => answer("PONG") }, commands);
}

function setup(serializer: unknown = new Serializers.JSON()) {
	let mode: "up" | "down" | "stalled" = "up";
	const read: string[] = [];
	const cleaned: string[][] = [];
	const deleted: string[][] = [];
	const logs: string[] = [];
	const answer = <T>(value: T): Promise<T> =>
		mode === "up" ? Promise.resolve(value) : mode === "down" ? Promise.reject(new Error("Connection is closed.")) : new Promise<T>(() => undefined);
	const client = standInClient(answer, { getBuffer: (key: string) => (read.push(key), answer(Buffer.from('["cached"]'))) });
	const cacher = {
		client,
		connected: true,
		prefix: "MOL-ns-",
		serializer,
		opts: { missingResponse: MISS },
		get: (_key: string) => answer<unknown>("cached"),
		set: (_key: string, _data: unknown) => answer("OK"),
		del: (keys: string | string[]) => answer(deleted.push(Array.isArray(keys) ? keys : [keys])),
		clean: (match: string | string[] = "*") => answer(cleaned.push(Array.isArray(match) ? match : [match])),
	};
	const logger = { warn: (m: string) => logs.push(`warn ${m}`), info: (m: string) => logs.push(`info ${m}`) };
	const resilient = makeCacherResilient(logger, cacher)!;
	const stop = () => resilient.stop();
	return { cacher, client, cleaned, deleted, logs, read, resilient, set: (m: typeof mode) => (mode = m), stop };
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
		await expect(encodedOf(t.cacher)!("k")).resolves.toBeNull();
		await expect(t.cacher.get("k")).resolves.toBe(MISS);
		await expect(t.cacher.set("k", 1)).resolves.toBeNull();
		expect(t.cacher.connected).toBe(false);
		expect(t.resilient.state).toBe("degraded");
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

	it("bounds a stalled read of an entry's bytes as well, and degrades", async () => {
		const t = setup();
		t.set("stalled");
		await expect(encodedOf(t.cacher)!("k")).resolves.toBeNull();
		expect(t.cacher.connected).toBe(false);
		t.stop();
	});

	it("reads an entry's bytes under the cacher's prefix, only where its serializer is plain JSON", async () => {
		const t = setup();
		expect((await encodedOf(t.cacher)!("labels.list:7"))?.toString()).toBe('["cached"]');
		expect(t.read).toEqual(["MOL-ns-labels.list:7"]);
		t.stop();
		// Another serializer's bytes are not the JSON the gateway sends.
		for (const other of [new Serializers.JSONExt(), new Serializers.MsgPack(), null]) {
			const o = setup(other);
			expect(encodedOf(o.cacher)).toBeUndefined();
			o.stop();
		}
	});

	it("remembers cleans and deletes asked for while degraded and replays them (deletes as deletes) before serving again", async () => {
		const t = setup();
		t.set("down");
		await t.cacher.get("k");
		await t.cacher.clean(['labels.**:"7"', 'labels.**:"7"?**']);
		await t.cacher.del("accounts.resolveToken:abc");
		expect(t.cleaned).toEqual([]);
		t.set("up");
		t.client.emit("ready");
		await waitFor("the cache to come back", () => Promise.resolve(t.cacher.connected === true), 5000, 1);
		expect(t.cleaned).toEqual([['labels.**:"7"', 'labels.**:"7"?**']]);
		expect(t.deleted).toEqual([["accounts.resolveToken:abc"]]);
		expect(t.cacher.connected).toBe(true);
		expect(t.resilient.state).toBe("healthy");
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
		expect(t.resilient.state).toBe("recovering");
		await new Promise(r => setTimeout(r, 800));
		expect(t.cacher.connected).toBe(false);
		t.stop();
	});

	it("bounds each step of a clean's SCAN, not the whole clean: a long clean of a large keyspace completes and keeps the cache on", async () => {
		// Redis answering every SCAN step in 150 ms: 6 steps, longer in all than one command's bound.
		const keys = Array.from({ length: 6 }, (_, i) => `MOL-t-labels.list:"7"|${i}`);
		const steps: string[] = [];
		const removed: string[] = [];
		const slow = <T>(value: T) => new Promise<T>(resolve => setTimeout(() => resolve(value), 150));
		const client = standInClient(value => Promise.resolve(value), {
			scan: (cursor: string, ...args: (string | number)[]) => {
				steps.push(`${cursor} ${args.join(" ")}`);
				const i = Number(cursor);
				return slow<[string, string[]]>([i + 1 < keys.length ? String(i + 1) : "0", [keys[i]]]);
			},
			del: (...list: string[]) => (removed.push(...list), Promise.resolve(list.length)),
		});
		const cacher = {
			client,
			prefix: "MOL-t-",
			connected: true,
			opts: { missingResponse: MISS },
			get: () => Promise.resolve("cached"),
			set: () => Promise.resolve("OK"),
			del: () => Promise.resolve(1),
			clean: (_match?: string | string[]) => slow(undefined),
		};
		const resilient = makeCacherResilient(quiet, cacher)!;
		await cacher.clean('labels.**:"7"?**');
		expect(steps[0]).toBe('0 MATCH MOL-t-labels.*:"7"?* COUNT 1000');
		expect(removed).toEqual(keys);
		expect(cacher.connected).toBe(true);
		resilient.stop();
	});

	it("starts a new write-generation epoch before replaying, so reads under way during the outage store nothing", async () => {
		let up = false;
		const order: string[] = [];
		const answer = <T>(value: T) => (up ? Promise.resolve(value) : Promise.reject(new Error("Connection is closed.")));
		const client = standInClient(answer);
		const generations: WriteGenerations = {
			read: () => answer(["", ""] as const),
			bump: () => (order.push("bump"), answer(undefined)),
			setIf: () => (order.push("setIf"), answer(true)),
			newEpoch: () => (order.push("epoch"), answer(undefined)),
		};
		const cacher = {
			client,
			connected: true,
			generations,
			opts: { missingResponse: MISS },
			get: (_key: string) => answer<unknown>("cached"),
			set: () => answer("OK"),
			del: () => answer(1),
			clean: (m: string | string[]) => (order.push(`clean ${String(m)}`), answer(undefined)),
		};
		const resilient = makeCacherResilient(quiet, cacher)!;
		await cacher.get("k");
		expect(cacher.connected).toBe(false);
		// While degraded: a write's bump and clean do not reach Redis, and a read's store is refused.
		await cacher.generations.bump("7");
		await cacher.clean('labels.**:"7"');
		expect(await cacher.generations.setIf("k", 1, 10, "7", ["", ""])).toBe(false);
		expect(order).toEqual([]);
		up = true;
		client.emit("ready");
		await waitFor("the cache to come back", () => Promise.resolve(cacher.connected === true), 5000, 1);
		expect(order).toEqual(["epoch", 'clean labels.**:"7"']);
		expect(cacher.connected).toBe(true);
		resilient.stop();
	});
});

describe("resilient cache and the clean relay (lib/cache/clean-relay.ts)", () => {
	function relaying() {
		let up = true;
		const order: string[] = [];
		const sent: [string[], string[]][] = [];
		const answer = <T>(value: T) => (up ? Promise.resolve(value) : Promise.reject(new Error("Connection is closed.")));
		const client = standInClient(answer, { getBuffer: () => answer(Buffer.from("[1]")) });
		const generations: WriteGenerations = {
			read: () => answer(["", ""] as const),
			bump: () => answer(undefined),
			setIf: () => answer(true),
			newEpoch: () => (order.push("epoch"), answer(undefined)),
		};
		const cacher = {
			client,
			connected: true,
			generations,
			serializer: new Serializers.JSON(),
			opts: { missingResponse: MISS },
			get: (_key: string) => answer<unknown>("cached"),
			set: () => answer("OK"),
			del: (keys: string | string[]) => (order.push(`del ${String(keys)}`), answer(1)),
			clean: (m: string | string[]) => (order.push(`clean ${String(m)}`), answer(undefined)),
		};
		const relay = {
			send: (patterns: string[], keys: string[]) => (sent.push([patterns, keys]), Promise.resolve()),
			hides: (key: string) => key === "hidden",
		};
		const resilient = makeCacherResilient(quiet, cacher, relay)!;
		const stop = () => resilient.stop();
		return { cacher, resilient, order, sent, set: (u: boolean) => (up = u), stop };
	}

	it("hands a clean or delete that failed, or was asked for while degraded, to the relay, and still remembers it", async () => {
		const t = relaying();
		t.set(false);
		await t.cacher.clean('labels.**:"7"');
		await t.cacher.del("accounts.resolveToken:abc");
		expect(t.sent).toEqual([
			[['labels.**:"7"'], []],
			[[], ["accounts.resolveToken:abc"]],
		]);
		// What the stand-in was asked while Redis was away (and failed) is not what the replay does.
		t.order.length = 0;
		t.set(true);
		t.cacher.client.emit("ready");
		await waitFor("the cache to come back", () => Promise.resolve(t.cacher.connected === true), 5000, 1);
		expect(t.order).toEqual(["epoch", "del accounts.resolveToken:abc", 'clean labels.**:"7"']);
		t.stop();
	});

	it("relays nothing while Redis answers", async () => {
		const t = relaying();
		await t.cacher.clean('labels.**:"7"');
		await t.cacher.del("k");
		expect(t.sent).toEqual([]);
		t.stop();
	});

	it("cleans for another node after a new epoch, never relays it again, and remembers it while its own Redis is away", async () => {
		const t = relaying();
		await t.resilient.cleanForPeer(['labels.**:"7"'], ["accounts.resolveToken:abc"]);
		expect(t.order).toEqual(["epoch", "del accounts.resolveToken:abc", 'clean labels.**:"7"']);
		t.order.length = 0;
		t.set(false);
		await t.resilient.cleanForPeer(['labels.**:"8"'], []);
		expect(t.cacher.connected).toBe(false);
		expect(t.sent).toEqual([]);
		t.order.length = 0;
		t.set(true);
		t.cacher.client.emit("ready");
		await waitFor("the cache to come back", () => Promise.resolve(t.cacher.connected === true), 5000, 1);
		expect(t.order).toEqual(["epoch", 'clean labels.**:"8"']);
		t.stop();
	});

	it("reads an entry a clean for another node is about to remove as a miss", async () => {
		const t = relaying();
		await expect(t.cacher.get("hidden")).resolves.toBe(MISS);
		await expect(t.cacher.get("k")).resolves.toBe("cached");
		await expect(encodedOf(t.cacher)!("hidden")).resolves.toBeNull();
		expect((await encodedOf(t.cacher)!("k"))?.toString()).toBe("[1]");
		t.stop();
	});
});
