/**
 * The workers' delivery records on the real Redis, on a JetStream key-value bucket of the real
 * NATS, and the in-memory twin.
 */
import Redis from "ioredis";
import net from "net";
import { connect, StringCodec } from "nats";
import { deliveryKey, MemoryDeliveryLog, RedisDeliveryLog, type DeliveryLog } from "../../../lib/push/delivery-log";
import { KvDeliveryLog, kvKey } from "../../../lib/push/kv-delivery-log";
import { NATS_URL, REDIS_URL, requireServers, uniqueNamespace } from "../../support/servers";

const namespace = uniqueNamespace("dlog");
const prefix = `${namespace}:`;
const opts = { prefix, pendingMs: 60_000, doneMs: 60_000, aliveMs: 600 };
const kvOpts = { ...opts, bucket: `${namespace}_deliveries`, aliveBucket: `${namespace}_workers`, replicas: 1, aliveMs: 1500 };
const redis = new Redis(REDIS_URL);

beforeAll(() => requireServers("redis", "nats"));

afterAll(async () => {
	const keys = await redis.keys(`${prefix}*`);
	if (keys.length) await redis.del(...keys);
	redis.disconnect();
	const nc = await connect({ servers: NATS_URL });
	const jsm = await nc.jetstreamManager();
	for (const b of [kvOpts.bucket, kvOpts.aliveBucket]) await jsm.streams.delete(`KV_${b}`).catch(() => undefined);
	await nc.close();
});

describe.each([
	["redis", () => new RedisDeliveryLog(REDIS_URL, opts)],
	["kv", () => new KvDeliveryLog(NATS_URL, kvOpts)],
	["memory", () => new MemoryDeliveryLog(opts)],
])("%s delivery log", (kind, make: () => DeliveryLog) => {
	let a: DeliveryLog;
	let b: DeliveryLog;
	beforeEach(() => {
		a = make();
		b = kind === "memory" ? a : make();
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

describe("key-value delivery log across processes", () => {
	it("takes over a claim whose holder stopped beating, not one of a live holder, and keeps what is done", async () => {
		const key = deliveryKey(prefix, "g", "e-kv-dead", "irc://h/#a");
		const dead = new KvDeliveryLog(NATS_URL, kvOpts);
		const live = new KvDeliveryLog(NATS_URL, kvOpts);
		try {
			expect(await dead.claim(key)).toBe("go");
			expect(await live.claim(key)).toBe("busy");
			// close() removes its heartbeat key, as its expiry would after a crash.
			await dead.close();
			expect(await live.claim(key)).toBe("go");
			await live.complete(key);
		} finally {
			await live.close();
		}
		const nc = await connect({ servers: NATS_URL });
		try {
			const kv = await nc.jetstream().views.kv(kvOpts.bucket, { bindOnly: true });
			expect(kvKey(key)).toMatch(/^delivered\.g\.e-kv-dead\.[\w-]{22}$/);
			expect(StringCodec().decode((await kv.get(kvKey(key)))!.value)).toBe("done");
		} finally {
			await nc.close();
		}
		// A new process (no memory of it) reads it back.
		const fresh = new KvDeliveryLog(NATS_URL, kvOpts);
		expect(await fresh.claim(key)).toBe("done");
		await fresh.close();
	});

	it("lets the same process take back a claim it left behind (a release that did not reach NATS)", async () => {
		const key = deliveryKey(prefix, "g", "e-kv-own", "t");
		const log = new KvDeliveryLog(NATS_URL, kvOpts);
		const other = new KvDeliveryLog(NATS_URL, kvOpts);
		try {
			expect(await log.claim(key)).toBe("go");
			// Forgotten locally, still pending in the bucket: as if the release had failed.
			(log as unknown as { claims: Map<string, unknown> }).claims.clear();
			expect(await other.claim(key)).toBe("busy");
			expect(await log.claim(key)).toBe("go");
		} finally {
			await Promise.all([log.close(), other.close()]);
		}
	});

	it("writes the records completed in one turn of the event loop together: one socket write, not one each", async () => {
		const keys = Array.from({ length: 20 }, (_, i) => deliveryKey(prefix, "g", `e-kv-turn-${i}`, "t"));
		// A slow heartbeat, so that nothing else of this log writes to NATS meanwhile.
		const log = new KvDeliveryLog(NATS_URL, { ...kvOpts, aliveMs: 60_000 });
		const fresh = new KvDeliveryLog(NATS_URL, kvOpts);
		const natsPort = Number(new URL(NATS_URL).port);
		const write = jest.spyOn(net.Socket.prototype, "write");
		try {
			for (const key of keys) expect(await log.claim(key)).toBe("go");
			write.mockClear();
			// Deliveries finish one socket callback at a time: here, one immediate each.
			await Promise.all(keys.map(key => new Promise<void>((resolve, reject) => setImmediate(() => void log.complete(key).then(resolve, reject)))));
			const toNats = write.mock.contexts.filter(socket => (socket as net.Socket).remotePort === natsPort);
			expect(toNats.length).toBe(1);
			write.mockRestore();
			// Every one of them was written (a process without this one's memory reads them).
			for (const key of keys) expect(await fresh.claim(key)).toBe("done");
		} finally {
			write.mockRestore();
			await Promise.all([log.close(), fresh.close()]);
		}
	});
});

describe("delivery logs whose store fails", () => {
	const claimsOf = (log: DeliveryLog) => (log as unknown as { claims: Map<string, unknown> }).claims;

	it("redis: forgets the claims whose record could not be written (nothing releases them after a delivery)", async () => {
		const log = new RedisDeliveryLog(REDIS_URL, opts);
		const keys = Array.from({ length: 5 }, (_, i) => deliveryKey(prefix, "g", `e-unrecorded-${i}`, "t"));
		try {
			for (const key of keys) expect(await log.claim(key)).toBe("go");
			expect(claimsOf(log).size).toBe(5);
			// Redis goes away between the deliveries and their records.
			(log as unknown as { redis: Redis }).redis.disconnect();
			for (const key of keys) await expect(log.complete(key)).rejects.toThrow();
			expect(claimsOf(log).size).toBe(0);
		} finally {
			await log.close();
		}
	});

	it("kv: forgets the claims whose record could not be written, and still answers them done in this process", async () => {
		const log = new KvDeliveryLog(NATS_URL, { ...kvOpts, completeRetryMs: 300 });
		const keys = Array.from({ length: 5 }, (_, i) => deliveryKey(prefix, "g", `e-kv-unrecorded-${i}`, "t"));
		try {
			for (const key of keys) expect(await log.claim(key)).toBe("go");
			expect(claimsOf(log).size).toBe(5);
			// NATS goes away between the deliveries and their records.
			await (log as unknown as { nc: { close(): Promise<void> } }).nc.close();
			for (const key of keys) await expect(log.complete(key)).rejects.toThrow();
			expect(claimsOf(log).size).toBe(0);
			expect(await log.claim(keys[0])).toBe("done");
		} finally {
			await log.close();
		}
	});

	it("kv: closes the connection it made when the buckets cannot be opened, so each use does not leave one more", async () => {
		const sockets = () => process.getActiveResourcesInfo().filter(r => r === "TCPSocketWrap").length;
		const settle = () => new Promise(r => setTimeout(r, 200));
		// Connecting works; creating the bucket is refused.
		const log = new KvDeliveryLog(NATS_URL, { ...kvOpts, bucket: "not a bucket name" });
		await settle();
		const before = sockets();
		try {
			for (let i = 0; i < 4; i++) await expect(log.claim(deliveryKey(prefix, "g", `e-kv-nobucket-${i}`, "t"))).rejects.toThrow(/bucket/i);
			await settle();
			expect(sockets() - before).toBe(0);
		} finally {
			await log.close();
		}
	});
});
