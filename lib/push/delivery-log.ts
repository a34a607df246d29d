/**
 * What a worker already delivered, so that a redelivered push event (delivery is
 * at-least-once) does not post, mail or announce twice (docs/architecture.md#workers). One record per
 * event id + target, kept where the events are (mixins/push-worker.mixin.ts picks): Redis here
 * (Redis Streams channel), a JetStream bucket (lib/push/kv-delivery-log.ts), or the in-process
 * channel's journal. In Redis it is taken with `SET NX` before acting:
 * - `claim` → "go" (ours now), "done" (delivered before: skip) or "busy" (another live worker
 *   is on it right now: wait for it);
 * - `complete` marks it delivered for the retention time; `release` gives a failed claim back.
 *
 * A claim names the worker process that holds it, and each process keeps an "alive" key
 * fresh. A claim left by a process that died (SIGKILL, OOM) is taken over as soon as its alive
 * key expires, instead of blocking redelivery until the claim itself would expire. A crash
 * between the side effect and `complete` still repeats that one delivery: nothing can tell
 * those apart without the peer's help.
 */
import crypto from "crypto";
import Redis from "ioredis";

export type ClaimResult = "go" | "done" | "busy";

export interface DeliveryLog {
	claim(key: string): Promise<ClaimResult>;
	complete(key: string): Promise<void>;
	release(key: string): Promise<void>;
	close(): Promise<void>;
}

export interface DeliveryLogOptions {
	/** Key prefix (the namespace), shared by the records and the alive keys. */
	prefix: string;
	/** How long a claim holds without `complete` (longer than one delivery can take). */
	pendingMs: number;
	/** How long a delivery is remembered. */
	doneMs: number;
	/** How long a process counts as alive after its last heartbeat. */
	aliveMs?: number;
}

/** `<prefix>delivered:<group>:<event id>:<hash of the target>` */
export function deliveryKey(prefix: string, group: string, eventId: string, target: string): string {
	const t = crypto.createHash("sha256").update(target).digest("base64url").slice(0, 22);
	return `${prefix}delivered:${group}:${eventId}:${t}`;
}

/** The group and event of a delivery key (see deliveryKey), or null. */
export function parseDeliveryKey(key: string): { group: string; eventId: string } | null {
	const m = /delivered:([^:]+):([^:]+):[^:]+$/.exec(key);
	return m ? { group: m[1], eventId: m[2] } : null;
}

// KEYS[1] record; ARGV: our claim value, pendingMs, alive-key prefix.
const CLAIM = `
local cur = redis.call('GET', KEYS[1])
if not cur then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 'go' end
if cur == 'done' then return 'done' end
local owner = string.match(cur, '^pending:([^:]+):')
if owner and redis.call('EXISTS', ARGV[3] .. owner) == 0 then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 'go' end
return 'busy'`;
const RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end";

export class RedisDeliveryLog implements DeliveryLog {
	private readonly redis: Redis;
	private readonly claims = new Map<string, string>();
	private readonly instance = crypto.randomBytes(9).toString("base64url");
	private readonly aliveMs: number;
	private readonly heartbeat: NodeJS.Timeout;

	constructor(
		url: string,
		private readonly opts: DeliveryLogOptions,
	) {
		// Claims and records of the deliveries in flight go out as one pipeline per tick.
		this.redis = new Redis(url, { maxRetriesPerRequest: 3, enableAutoPipelining: true });
		// Errors surface on the commands; an unhandled 'error' event would crash the process.
		this.redis.on("error", () => undefined);
		this.aliveMs = opts.aliveMs ?? 5000;
		const beat = () => void this.redis.set(this.aliveKey, "1", "PX", this.aliveMs).catch(() => undefined);
		beat();
		this.heartbeat = setInterval(beat, Math.max(200, Math.floor(this.aliveMs / 3)));
		this.heartbeat.unref();
	}

	private get aliveKey(): string {
		return `${this.opts.prefix}alive:${this.instance}`;
	}

	async claim(key: string): Promise<ClaimResult> {
		const value = `pending:${this.instance}:${crypto.randomUUID()}`;
		const result = (await this.redis.eval(CLAIM, 1, key, value, this.opts.pendingMs, `${this.opts.prefix}alive:`)) as ClaimResult;
		if (result === "go") this.claims.set(key, value);
		return result;
	}

	async complete(key: string): Promise<void> {
		try {
			await this.redis.set(key, "done", "PX", this.opts.doneMs);
		} finally {
			// Not kept when the write failed: nothing releases a claim after a delivery was made, and
			// a later claim of it is answered by the record in Redis (still ours: "busy" until it expires).
			this.claims.delete(key);
		}
	}

	async release(key: string): Promise<void> {
		const value = this.claims.get(key);
		this.claims.delete(key);
		if (value) await this.redis.eval(RELEASE, 1, key, value);
	}

	async close(): Promise<void> {
		clearInterval(this.heartbeat);
		await this.redis.del(this.aliveKey).catch(() => undefined);
		this.redis.disconnect();
	}
}

/** The all-in-one default (no Redis): the same rules in this process's memory. */
export class MemoryDeliveryLog implements DeliveryLog {
	private readonly records = new Map<string, { state: "pending" | "done"; until: number }>();

	constructor(private readonly opts: DeliveryLogOptions) {}

	private current(key: string) {
		const r = this.records.get(key);
		if (r && r.until <= Date.now()) {
			this.records.delete(key);
			return undefined;
		}
		return r;
	}

	claim(key: string): Promise<ClaimResult> {
		const r = this.current(key);
		if (r) return Promise.resolve(r.state === "done" ? "done" : "busy");
		if (this.records.size > 100_000) for (const k of this.records.keys()) this.current(k);
		this.records.set(key, { state: "pending", until: Date.now() + this.opts.pendingMs });
		return Promise.resolve("go");
	}

	complete(key: string): Promise<void> {
		this.records.set(key, { state: "done", until: Date.now() + this.opts.doneMs });
		return Promise.resolve();
	}

	release(key: string): Promise<void> {
		if (this.current(key)?.state === "pending") this.records.delete(key);
		return Promise.resolve();
	}

	close(): Promise<void> {
		this.records.clear();
		return Promise.resolve();
	}
}
