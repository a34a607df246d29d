/**
 * Moleculer's Redis cacher made to degrade instead of failing or hanging requests, in three named
 * states: healthy (every command bounded), degraded (reads miss, cleans remembered), recovering
 * (a new epoch, then the missed cleans replayed, before it serves again).
 * Why and how: docs/architecture.md#resilient-cache.
 */
import { Serializers, type Logger as MoleculerLogger } from "moleculer";
import type { CleanRelay } from "./clean-relay";
import type { WriteGenerations } from "./write-generations";

const COMMAND_TIMEOUT_MS = 500;
const PROBE_INTERVAL_MS = 1000;
/** Beyond this many remembered cleans, the whole namespace's cache is dropped on recovery instead. */
const MAX_PENDING_CLEANS = 1000;
/** Keys a clean's SCAN looks at per step (Moleculer's own clean asks for 100). */
const SCAN_COUNT = 1000;

export type CacheState = "healthy" | "degraded" | "recovering";

interface RedisLike {
	on(event: "error", listener: (err: Error) => void): unknown;
	on(event: "ready" | "close", listener: () => void): unknown;
	ping(): Promise<unknown>;
	scan?(cursor: string, ...args: (string | number)[]): Promise<[string, string[]]>;
	del?(...keys: string[]): Promise<unknown>;
	getBuffer?(key: string): Promise<Buffer | null>;
	options: { enableOfflineQueue?: boolean };
}

export interface CacherLike {
	client?: RedisLike;
	connected?: boolean;
	prefix?: string;
	generations?: WriteGenerations;
	serializer?: unknown;
	opts: { missingResponse?: unknown; maxParamsLength?: number | null };
	get(key: string): Promise<unknown>;
	getEncoded?: (key: string) => Promise<Buffer | null>;
	set(key: string, data: unknown, ttl?: number): Promise<unknown>;
	del(keys: string | string[]): Promise<unknown>;
	clean(match?: string | string[]): Promise<unknown>;
}

type Relay = Pick<CleanRelay, "send" | "hides">;
type Logger = Pick<MoleculerLogger, "warn" | "info">;

/** `work`, failed after COMMAND_TIMEOUT_MS. */
function bounded<T>(work: () => Promise<T>, what: string): Promise<T> {
	return new Promise<T>((resolve, reject) => {
		// After a stall of the event loop (a burst of scrypt work, say) timers run before the I/O
		// that arrived meanwhile: give that I/O one turn before calling the command late.
		const late = () => setImmediate(() => reject(new Error(`${what} took longer than ${COMMAND_TIMEOUT_MS} ms`)));
		const timer = setTimeout(late, COMMAND_TIMEOUT_MS);
		Promise.resolve()
			.then(work)
			.then(
				value => (clearTimeout(timer), resolve(value)),
				(err: Error) => (clearTimeout(timer), reject(err)),
			);
	});
}

/** Wraps a Redis cacher (one whose client can PING) in place; undefined for any other cacher. */
export function makeCacherResilient(logger: Logger, cacher: CacherLike, relay?: Relay): ResilientCacher | undefined {
	const client = cacher.client;
	if (!client || typeof client.ping !== "function") return undefined;
	return new ResilientCacher(logger, cacher, client, relay);
}

export class ResilientCacher {
	state: CacheState = "healthy";
	/** Cleans and deletes Redis missed, replayed when it is back. */
	private readonly pending = new Set<string>();
	private readonly pendingKeys = new Set<string>();
	/** A warning was given for the outage and the line that says it is over is owed. */
	private warned = false;
	private recovery: Promise<void> | null = null;
	private probe: NodeJS.Timeout | null = null;
	private stopped = false;
	/** The cacher's and the generations' own commands, unbounded. */
	private readonly original: Pick<CacherLike, "get" | "set" | "del" | "clean">;
	private readonly generations?: WriteGenerations;

	constructor(
		private readonly logger: Logger,
		private readonly cacher: CacherLike,
		private readonly client: RedisLike,
		private readonly relay?: Relay,
	) {
		this.original = { get: cacher.get.bind(cacher), set: cacher.set.bind(cacher), del: cacher.del.bind(cacher), clean: cacher.clean.bind(cacher) };
		this.generations = cacher.generations && { ...cacher.generations };
		// Fail at once while Redis is away instead of queueing behind ioredis' reconnect attempts.
		client.options.enableOfflineQueue = false;
		this.listen();
		this.wrapCommands();
		this.wrapGenerations();
	}

	/** A clean another node missed (lib/cache/clean-relay.ts): after a new epoch; remembered, never relayed, if it fails. */
	async cleanForPeer(patterns: string[], keys: string[]): Promise<void> {
		if (this.offline) return this.remember(patterns, keys);
		try {
			// As the replay does: a read under way on any node may have seen the data before the write.
			if (this.generations) await bounded(() => this.generations!.newEpoch(), "new cache epoch");
			if (keys.length) await bounded(() => this.original.del(keys), "relayed cache DEL");
			if (patterns.length) await this.cleanPatterns(patterns, "relayed cache clean");
		} catch (err) {
			this.remember(patterns, keys);
			this.degrade((err as Error).message);
		}
	}

	stop(): void {
		this.stopped = true;
		this.stopProbe();
	}

	/** What Moleculer's cacher middleware reads: false bypasses the cache. */
	private get offline(): boolean {
		return this.cacher.connected === false;
	}

	private listen(): void {
		this.client.on("ready", () => {
			// Moleculer's own `ready` listener has just re-enabled the cache: not before the replay.
			this.cacher.connected = false;
			void this.recover();
		});
		this.client.on("close", () => this.degrade("connection closed"));
		this.client.on("error", (err: Error) => this.degrade(err?.message ?? "error"));
	}

	/** → degraded: reads miss, writes go to their handlers, a probe looks for Redis. During a recovery, its outcome decides. */
	private degrade(reason: string): void {
		if (this.stopped) return;
		this.cacher.connected = false;
		if (!this.warned) this.logger.warn(`Cache degraded, requests are served without it: Redis is unavailable (${reason})`);
		this.warned = true;
		if (this.state !== "recovering") this.state = "degraded";
		if (!this.probe) {
			this.probe = setInterval(() => void this.recover(), PROBE_INTERVAL_MS);
			this.probe.unref();
		}
	}

	/** → recovering → healthy: a new epoch, then the missed cleans replayed; back to degraded if any step fails, nothing forgotten. */
	private recover(): Promise<void> {
		if (this.recovery || this.stopped) return this.recovery ?? Promise.resolve();
		this.state = "recovering";
		this.recovery = (async () => {
			try {
				await bounded(() => this.client.ping(), "PING");
				// Reads under way may have seen the data before a write whose bump Redis missed.
				if (this.generations) await bounded(() => this.generations!.newEpoch(), "new cache epoch");
				const replayed = await this.replay();
				this.stopProbe();
				if (this.warned) this.logger.info(`Cache is back on Redis${replayed ? ` (replayed ${replayed} missed invalidations)` : ""}`);
				this.warned = false;
				this.state = "healthy";
				this.cacher.connected = true;
			} catch (err) {
				this.state = "degraded";
				this.degrade((err as Error).message);
			} finally {
				this.recovery = null;
			}
		})();
		return this.recovery;
	}

	/** The missed deletes, then the missed cleans; each forgotten only once done. */
	private async replay(): Promise<number> {
		const keys = [...this.pendingKeys];
		const patterns = [...this.pending];
		if (keys.length) await bounded(() => this.original.del(keys), "replaying cache deletes");
		for (const k of keys) this.pendingKeys.delete(k);
		if (patterns.length) await this.cleanPatterns(patterns, "replaying cache cleans");
		for (const p of patterns) this.pending.delete(p);
		return keys.length + patterns.length;
	}

	private stopProbe(): void {
		if (this.probe) clearInterval(this.probe);
		this.probe = null;
	}

	private remember(patterns: string[], keys: string[] = []): void {
		for (const p of patterns) this.pending.add(p);
		for (const k of keys) this.pendingKeys.add(k);
		if (this.pending.size + this.pendingKeys.size > MAX_PENDING_CLEANS) {
			this.pending.clear();
			this.pendingKeys.clear();
			this.pending.add("**");
		}
	}

	/** Remembered for the replay, and handed to a gateway meanwhile. */
	private missed(patterns: string[], keys: string[]): Promise<void> | undefined {
		this.remember(patterns, keys);
		return this.relay?.send(patterns, keys);
	}

	/** SCAN and DEL, each step bounded; Moleculer's clean (bounded whole) where the client has no SCAN. */
	private async cleanPatterns(patterns: string[], what: string): Promise<unknown> {
		const scan = this.client.scan?.bind(this.client);
		const delKeys = this.client.del?.bind(this.client);
		if (!scan || !delKeys) return bounded(() => this.original.clean(patterns), what);
		for (const pattern of patterns) {
			const match = (this.cacher.prefix ?? "") + pattern.replace(/\*\*/g, "*");
			let cursor = "0";
			do {
				const [next, keys] = await bounded(() => scan(cursor, "MATCH", match, "COUNT", SCAN_COUNT), `${what} (SCAN)`);
				if (keys.length) await bounded(() => delKeys(...keys), `${what} (DEL)`);
				cursor = next;
			} while (cursor !== "0");
		}
	}

	/** A read: a miss for an entry a relayed clean is removing, bounded, and a miss (degrading) on failure. */
	private async read<T>(key: string, work: () => Promise<T>, miss: T): Promise<T> {
		if (this.relay?.hides(key)) return miss;
		try {
			return await bounded(work, "cache GET");
		} catch (err) {
			this.degrade((err as Error).message);
			return miss;
		}
	}

	private wrapCommands(): void {
		const cacher = this.cacher;
		cacher.get = (key: string) => this.read(key, () => this.original.get(key), cacher.opts.missingResponse);
		// Plain JSON only: what another serializer stores is not the body the gateway would send.
		const getBuffer = this.client.getBuffer?.bind(this.client);
		if (getBuffer && cacher.serializer instanceof Serializers.JSON)
			cacher.getEncoded = (key: string) => this.read<Buffer | null>(key, () => getBuffer((cacher.prefix ?? "") + key), null);
		cacher.set = async (key: string, data: unknown, ttl?: number) => {
			try {
				return await bounded(() => this.original.set(key, data, ttl), "cache SET");
			} catch (err) {
				this.degrade((err as Error).message);
				return null;
			}
		};
		cacher.del = async (keys: string | string[]) => {
			const list = Array.isArray(keys) ? keys : [keys];
			if (this.offline) return this.missed([], list);
			try {
				return await bounded(() => this.original.del(list), "cache DEL");
			} catch (err) {
				this.degrade((err as Error).message);
				return this.missed([], list);
			}
		};
		cacher.clean = async (match: string | string[] = "**") => {
			const patterns = Array.isArray(match) ? match : [match];
			if (this.offline) return this.missed(patterns, []);
			try {
				return await this.cleanPatterns(patterns, "cache clean");
			} catch (err) {
				this.degrade((err as Error).message);
				return this.missed(patterns, []);
			}
		};
	}

	/** Write generations on Redis: bounded like the rest; a failure degrades and refuses the store. */
	private wrapGenerations(): void {
		const gens = this.cacher.generations;
		const unbounded = this.generations;
		if (!gens || !unbounded) return;
		gens.read = project =>
			bounded(() => unbounded.read(project), "cache generation read").catch((err: Error) => (this.degrade(err.message), Promise.reject(err)));
		gens.bump = async project => {
			// While degraded the bump is lost; the epoch at recovery stands in for it.
			if (this.offline) return;
			await bounded(() => unbounded.bump(project), "cache generation bump").catch((err: Error) => this.degrade(err.message));
		};
		gens.setIf = async (key, data, ttl, project, seen) => {
			if (this.offline) return false;
			return bounded(() => unbounded.setIf(key, data, ttl, project, seen), "cache SET").catch((err: Error) => (this.degrade(err.message), false));
		};
	}
}
