/**
 * The workers' delivery records where the events live: a JetStream key-value bucket on the same
 * NATS (cluster) as the `push` stream, with as many replicas (PUSH_STREAM_REPLICAS). A Redis
 * restart without persistence loses nothing here, and a NATS node lost keeps the records on
 * the others.
 *
 * Same rules as the Redis log (lib/push/delivery-log.ts): a claim is a create-if-absent (`pending:`
 * with the process that holds it), `complete` writes `done`, `release` deletes a claim that is
 * still ours. A claim whose holder stopped beating (its key in the `workers` bucket expired) or
 * that is older than `pendingMs` is taken over with a compare-and-set on its revision.
 *
 * Round trips: a first claim is one write, `complete` one write (retried while a stream leader
 * is being elected, so that a delivery made is not made again; the records completed in one turn
 * of the event loop share a socket write); a claim on a record that exists
 * reads it (any replica answers) and, to take it over, writes once more. What this process
 * completed is also kept in memory, so its own redeliveries cost nothing.
 */
import crypto from "crypto";
import { connect, StringCodec, type KV, type NatsConnection } from "nats";
import { parseDeliveryKey, type ClaimResult, type DeliveryLog, type DeliveryLogOptions } from "./delivery-log";
import { natsConnectionOptions } from "./channel";
import { nextTurn } from "../outbound/write-in-turns";

export interface KvDeliveryLogOptions extends DeliveryLogOptions {
	/** Names of the records bucket and the workers' heartbeat bucket. */
	bucket: string;
	aliveBucket: string;
	replicas: number;
	/** How long `complete` keeps trying while NATS is unavailable (a leader election takes seconds). */
	completeRetryMs?: number;
}

const sc = StringCodec();
const DONE = "done";
/** Completed keys remembered in memory (a redelivery to this process then needs no round trip). */
const LOCAL_DONE_MAX = 50_000;
const WRONG_LAST_SEQUENCE = 10071;

const conflict = (err: unknown) => (err as { api_error?: { err_code?: number } })?.api_error?.err_code === WRONG_LAST_SEQUENCE;

/** A key-value key for a delivery key: `delivered.<group>.<event id>.<target hash>` (safe characters only). */
export function kvKey(key: string): string {
	const parsed = parseDeliveryKey(key);
	const hash = key.slice(key.lastIndexOf(":") + 1);
	const safe = (s: string) => (/^[-\w]+$/.test(s) ? s : crypto.createHash("sha256").update(s).digest("base64url").slice(0, 22));
	return parsed ? `delivered.${safe(parsed.group)}.${safe(parsed.eventId)}.${safe(hash)}` : `delivered.${safe(key)}`;
}

/** Bucket options shared by the provisioning and the log, so either may create them. */
function deliveryBuckets(opts: Pick<KvDeliveryLogOptions, "bucket" | "aliveBucket" | "replicas" | "doneMs"> & { aliveMs: number }) {
	return [
		{ name: opts.bucket, options: { history: 1, replicas: opts.replicas, ttl: opts.doneMs } },
		{ name: opts.aliveBucket, options: { history: 1, replicas: opts.replicas, ttl: opts.aliveMs } },
	];
}

export class KvDeliveryLog implements DeliveryLog {
	private readonly instance = crypto.randomBytes(9).toString("base64url");
	private readonly claims = new Map<string, { value: string; revision: number }>();
	private readonly completed = new Set<string>();
	private readonly aliveMs: number;
	private nc: NatsConnection | null = null;
	private buckets: Promise<{ records: KV; alive: KV }> | null = null;
	private heartbeat: NodeJS.Timeout | null = null;
	private closed = false;

	constructor(
		private readonly url: string,
		private readonly opts: KvDeliveryLogOptions,
	) {
		this.aliveMs = opts.aliveMs ?? 15_000;
	}

	/** Connects and opens (or creates) the buckets once, on first use. */
	private open(): Promise<{ records: KV; alive: KV }> {
		this.buckets ??= (async () => {
			const nc = await connect({ ...natsConnectionOptions(this.url), name: "delivery-log", maxReconnectAttempts: -1, waitOnFirstConnect: true });
			this.nc = nc;
			try {
				const js = nc.jetstream({ timeout: 10_000 });
				const [records, alive] = await Promise.all(deliveryBuckets({ ...this.opts, aliveMs: this.aliveMs }).map(b => js.views.kv(b.name, b.options)));
				const beat = () => alive.put(this.instance, sc.encode("1")).catch(() => undefined);
				await beat();
				this.heartbeat = setInterval(() => void beat(), Math.max(200, Math.floor(this.aliveMs / 3)));
				this.heartbeat.unref();
				return { records, alive };
			} catch (err) {
				// The next use connects again: this connection would otherwise stay open (and reconnect) for good.
				if (this.nc === nc) this.nc = null;
				await nc.close().catch(() => undefined);
				throw err;
			}
		})().catch(err => {
			this.buckets = null;
			throw err;
		});
		return this.buckets;
	}

	async claim(key: string): Promise<ClaimResult> {
		if (this.completed.has(key)) return "done";
		const { records, alive } = await this.open();
		const k = kvKey(key);
		const value = `pending:${this.instance}:${crypto.randomUUID()}`;
		for (let attempt = 0; attempt < 3; attempt++) {
			try {
				const revision = await records.put(k, sc.encode(value), { previousSeq: 0 });
				this.claims.set(key, { value, revision });
				return "go";
			} catch (err) {
				if (!conflict(err)) throw err;
			}
			const entry = await records.get(k);
			if (!entry) continue;
			let revision = entry.revision;
			if (entry.operation === "PUT") {
				const current = sc.decode(entry.value);
				if (current === DONE) {
					this.remember(key);
					return "done";
				}
				const owner = /^pending:([^:]+):/.exec(current)?.[1];
				const abandoned =
					(owner === this.instance && !this.claims.has(key)) ||
					Date.now() - entry.created.getTime() > this.opts.pendingMs ||
					(!!owner && owner !== this.instance && (await alive.get(owner))?.operation !== "PUT");
				if (!abandoned) return "busy";
			}
			// Released (deleted) or abandoned: ours if nobody changed it since we read it.
			try {
				revision = await records.update(k, sc.encode(value), revision);
				this.claims.set(key, { value, revision });
				return "go";
			} catch (err) {
				if (!conflict(err)) throw err;
			}
		}
		return "busy";
	}

	async complete(key: string): Promise<void> {
		// A later claim of it in this process is answered "done" from memory, written or not.
		this.remember(key);
		try {
			const { records } = await this.open();
			const deadline = Date.now() + (this.opts.completeRetryMs ?? 30_000);
			// Deliveries finish one peer answer at a time: the records of one turn leave in one NATS write
			// (nats.js sends what was queued once the current task's microtasks end).
			await nextTurn();
			for (let pause = 100; ; pause = Math.min(pause * 2, 2000)) {
				try {
					await records.put(kvKey(key), sc.encode(DONE));
					break;
				} catch (err) {
					if (this.closed || Date.now() + pause > deadline) throw err;
					await new Promise(r => setTimeout(r, pause));
				}
			}
		} finally {
			// Not kept when the write failed: nothing releases a claim after a delivery was made.
			this.claims.delete(key);
		}
	}

	async release(key: string): Promise<void> {
		const claim = this.claims.get(key);
		this.claims.delete(key);
		if (!claim) return;
		const { records } = await this.open();
		// Only our own claim: if it was taken over meanwhile, the revision no longer matches.
		await records.delete(kvKey(key), { previousSeq: claim.revision }).catch(() => undefined);
	}

	private remember(key: string): void {
		this.completed.add(key);
		if (this.completed.size > LOCAL_DONE_MAX) this.completed.delete(this.completed.values().next().value!);
	}

	async close(): Promise<void> {
		this.closed = true;
		if (this.heartbeat) clearInterval(this.heartbeat);
		const opened = await this.buckets?.catch(() => null);
		if (opened) await opened.alive.delete(this.instance).catch(() => undefined);
		await this.nc?.close().catch(() => undefined);
	}
}
