/**
 * Keeps the Redis cacher from failing or hanging requests when Redis is down or stalls, and
 * keeps its entries honest when Redis comes back.
 *
 * Moleculer's Redis cacher, left alone, (a) queues commands while Redis is away, so a read waits
 * for ioredis' 20 reconnect attempts (~10 s, past the request timeout) and then fails with a 500;
 * (b) fires `set` without a catch, so a failed write becomes an unhandled rejection, which ends
 * the process on Node 20; (c) lets a write's cache clean fail (or the write hang) while Redis is
 * away, so entries cached before the outage would be served stale afterwards.
 *
 * This middleware wraps whatever cacher the broker ended up with (moleculer-runner re-applies the
 * CACHER environment variable as a string over the configured option, so configuring a custom
 * cacher instance would be silently replaced; wrapping the resolved cacher works either way):
 * - every cache command is bounded by COMMAND_TIMEOUT_MS, and a failure marks the cache degraded:
 *   one warning, then reads bypass the cache (the cacher middleware's `connected === false` path)
 *   and writes go straight through to the handler;
 * - cleans and deletes asked for while degraded are remembered and replayed before the cache is
 *   used again, after a new write-generation epoch (lib/cache/write-generations.ts), so no read that
 *   began before the replay stores its answer after it;
 * - a clean's SCAN is bounded step by step, not as a whole: on a large keyspace a clean takes as
 *   long as it takes, but a Redis that stops answering is still noticed within COMMAND_TIMEOUT_MS
 *   (bounding the whole clean would degrade the cache, and keep it degraded, for a slow clean);
 * - a probe (PING) every PROBE_INTERVAL_MS, or ioredis' `ready`, ends the degraded state, with an
 *   info line;
 * - a missed clean or delete is also handed to a gateway whose Redis works (lib/cache/clean-relay.ts),
 *   which does it after a new epoch: other nodes read the shared Redis meanwhile.
 * It also gives the cacher `getEncoded`, the entry's bytes unparsed (bounded and degraded as `get`),
 * where its serializer is plain JSON: the gateway sends such a hit as it is (gateway/cache-reads.ts).
 * The memory cacher cannot fail this way and is left as it is. Whatever the cacher, keys whose
 * parameters are longer than MAX_CACHE_KEY_PARAMS characters are shortened to a hash.
 */
import { Serializers, type Middleware, type Service, type ServiceBroker, type ServiceSchema } from "moleculer";
import { CleanRelay } from "../lib/cache/clean-relay";
import { installWriteGenerations, type WriteGenerations } from "../lib/cache/write-generations";

const COMMAND_TIMEOUT_MS = 500;
const PROBE_INTERVAL_MS = 1000;
/** Beyond this many remembered cleans, the whole namespace's cache is dropped on recovery instead. */
const MAX_PENDING_CLEANS = 1000;
/** Keys a clean's SCAN looks at per step (Moleculer's own clean asks for 100). */
const SCAN_COUNT = 1000;

interface RedisLike {
	on(event: "error", listener: (err: Error) => void): unknown;
	on(event: "ready" | "close", listener: () => void): unknown;
	ping(): Promise<unknown>;
	scan?(cursor: string, ...args: (string | number)[]): Promise<[string, string[]]>;
	del?(...keys: string[]): Promise<unknown>;
	getBuffer?(key: string): Promise<Buffer | null>;
	options: { enableOfflineQueue?: boolean };
}

interface CacherLike {
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

/** What a node whose cache is resilient does for others (lib/cache/clean-relay.ts). */
export interface ResilientCache {
	/** A clean another node missed: after a new epoch; remembered, never relayed, if it fails. */
	cleanForPeer: (patterns: string[], keys: string[]) => Promise<void>;
}

type Relay = Pick<CleanRelay, "send" | "hides">;

export function makeCacherResilient(broker: ServiceBroker, cacher: CacherLike, relay?: Relay): ResilientCache | undefined {
	const client = cacher.client;
	if (!client || typeof client.ping !== "function") return undefined;
	const logger = broker.getLogger("cache");
	const original = { get: cacher.get.bind(cacher), set: cacher.set.bind(cacher), del: cacher.del.bind(cacher), clean: cacher.clean.bind(cacher) };
	const pending = new Set<string>();
	const pendingKeys = new Set<string>();
	let degraded = false;
	let recovering: Promise<void> | null = null;
	let probe: NodeJS.Timeout | null = null;
	let stopped = false;

	// Fail at once while Redis is away instead of queueing behind ioredis' reconnect attempts.
	client.options.enableOfflineQueue = false;

	const remember = (patterns: string[], keys: string[] = []) => {
		for (const p of patterns) pending.add(p);
		for (const k of keys) pendingKeys.add(k);
		if (pending.size + pendingKeys.size > MAX_PENDING_CLEANS) {
			pending.clear();
			pendingKeys.clear();
			pending.add("**");
		}
	};

	/** SCAN and DEL, each step bounded; Moleculer's clean (bounded whole) where the client has no SCAN. */
	const scan = client.scan?.bind(client);
	const delKeys = client.del?.bind(client);
	const cleanPatterns = async (patterns: string[], what: string) => {
		if (!scan || !delKeys) return bounded(() => original.clean(patterns), what);
		for (const pattern of patterns) {
			const match = (cacher.prefix ?? "") + pattern.replace(/\*\*/g, "*");
			let cursor = "0";
			do {
				const [next, keys] = await bounded(() => scan(cursor, "MATCH", match, "COUNT", SCAN_COUNT), `${what} (SCAN)`);
				if (keys.length) await bounded(() => delKeys(...keys), `${what} (DEL)`);
				cursor = next;
			} while (cursor !== "0");
		}
	};

	const degrade = (reason: string) => {
		if (stopped) return;
		cacher.connected = false;
		if (!degraded) logger.warn(`Cache degraded, requests are served without it: Redis is unavailable (${reason})`);
		degraded = true;
		if (!probe && !stopped) {
			probe = setInterval(() => void recover(), PROBE_INTERVAL_MS);
			probe.unref();
		}
	};

	// Write generations on Redis: bounded like the rest; a failure degrades and refuses the store.
	const gens = cacher.generations;
	const unbounded = gens && { ...gens };
	if (gens && unbounded) {
		gens.read = project =>
			bounded(() => unbounded.read(project), "cache generation read").catch((err: Error) => (degrade(err.message), Promise.reject(err)));
		gens.bump = async project => {
			// While degraded the bump is lost; the epoch at recovery stands in for it.
			if (cacher.connected === false) return;
			await bounded(() => unbounded.bump(project), "cache generation bump").catch((err: Error) => degrade(err.message));
		};
		gens.setIf = async (key, data, ttl, project, seen) => {
			if (cacher.connected === false) return false;
			return bounded(() => unbounded.setIf(key, data, ttl, project, seen), "cache SET").catch((err: Error) => (degrade(err.message), false));
		};
	}

	/** Replays the cleans Redis missed, then lets the cacher serve again. */
	const recover = (): Promise<void> => {
		if (recovering || stopped) return recovering ?? Promise.resolve();
		recovering = (async () => {
			try {
				await bounded(() => client.ping(), "PING");
				// Reads under way may have seen the data before a write whose bump Redis missed.
				if (unbounded) await bounded(() => unbounded.newEpoch(), "new cache epoch");
				const keys = [...pendingKeys];
				const patterns = [...pending];
				if (keys.length) await bounded(() => original.del(keys), "replaying cache deletes");
				for (const k of keys) pendingKeys.delete(k);
				if (patterns.length) await cleanPatterns(patterns, "replaying cache cleans");
				for (const p of patterns) pending.delete(p);
				const replayed = keys.length + patterns.length;
				if (probe) clearInterval(probe);
				probe = null;
				if (degraded) logger.info(`Cache is back on Redis${replayed ? ` (replayed ${replayed} missed invalidations)` : ""}`);
				degraded = false;
				cacher.connected = true;
			} catch (err) {
				degrade((err as Error).message);
			} finally {
				recovering = null;
			}
		})();
		return recovering;
	};

	client.on("ready", () => {
		// Moleculer's own `ready` listener has just re-enabled the cache: not before the replay.
		cacher.connected = false;
		void recover();
	});
	client.on("close", () => degrade("connection closed"));
	client.on("error", (err: Error) => degrade(err?.message ?? "error"));

	/** A read: a miss for an entry a relayed clean is removing, bounded, and a miss (degrading) on failure. */
	const read = async <T>(key: string, work: () => Promise<T>, miss: T): Promise<T> => {
		if (relay?.hides(key)) return miss;
		try {
			return await bounded(work, "cache GET");
		} catch (err) {
			degrade((err as Error).message);
			return miss;
		}
	};
	cacher.get = (key: string) => read(key, () => original.get(key), cacher.opts.missingResponse);
	// Plain JSON only: what another serializer stores is not the body the gateway would send.
	const getBuffer = client.getBuffer?.bind(client);
	if (getBuffer && cacher.serializer instanceof Serializers.JSON)
		cacher.getEncoded = (key: string) => read<Buffer | null>(key, () => getBuffer((cacher.prefix ?? "") + key), null);
	cacher.set = async (key: string, data: unknown, ttl?: number) => {
		try {
			return await bounded(() => original.set(key, data, ttl), "cache SET");
		} catch (err) {
			degrade((err as Error).message);
			return null;
		}
	};
	/** Remembered for the replay, and handed to a gateway meanwhile. */
	const missed = (patterns: string[], keys: string[]) => (remember(patterns, keys), relay?.send(patterns, keys));
	cacher.del = async (keys: string | string[]) => {
		const list = Array.isArray(keys) ? keys : [keys];
		if (cacher.connected === false) return missed([], list);
		try {
			return await bounded(() => original.del(list), "cache DEL");
		} catch (err) {
			degrade((err as Error).message);
			return missed([], list);
		}
	};
	cacher.clean = async (match: string | string[] = "**") => {
		const patterns = Array.isArray(match) ? match : [match];
		if (cacher.connected === false) return missed(patterns, []);
		try {
			return await cleanPatterns(patterns, "cache clean");
		} catch (err) {
			degrade((err as Error).message);
			return missed(patterns, []);
		}
	};
	const cleanForPeer = async (patterns: string[], keys: string[]) => {
		if (cacher.connected === false) return remember(patterns, keys);
		try {
			// As the replay does: a read under way on any node may have seen the data before the write.
			if (unbounded) await bounded(() => unbounded.newEpoch(), "new cache epoch");
			if (keys.length) await bounded(() => original.del(keys), "relayed cache DEL");
			if (patterns.length) await cleanPatterns(patterns, "relayed cache clean");
		} catch (err) {
			remember(patterns, keys);
			degrade((err as Error).message);
		}
	};

	const stop = () => {
		stopped = true;
		if (probe) clearInterval(probe);
		probe = null;
	};
	(cacher as unknown as { stopResilience?: () => void }).stopResilience = stop;
	return { cleanForPeer };
}

/** Cache keys longer than this end in a hash of their parameters: a key's size never follows a client's input. */
const MAX_CACHE_KEY_PARAMS = 256;

/** Each broker's relay, for the gateway's service to subscribe to as it is created. */
const relays = new WeakMap<ServiceBroker, CleanRelay>();

export function ResilientCacheMiddleware(): Middleware {
	return {
		name: "ResilientCache",
		created(broker: ServiceBroker) {
			const cacher = broker.cacher as unknown as CacherLike | undefined;
			if (!cacher) return;
			// Set on the cacher the broker ended up with (CACHER from the environment replaces a configured one).
			cacher.opts.maxParamsLength ??= MAX_CACHE_KEY_PARAMS;
			installWriteGenerations(cacher);
			const relay = new CleanRelay(broker);
			const resilient = makeCacherResilient(broker, cacher, relay);
			if (resilient) relays.set(broker, relay.servedBy(resilient.cleanForPeer));
		},
		serviceCreating(service: Service, schema: ServiceSchema) {
			relays.get(service.broker)?.subscribe(schema);
		},
		stopping(broker: ServiceBroker) {
			(broker.cacher as unknown as { stopResilience?: () => void } | undefined)?.stopResilience?.();
		},
	} as unknown as Middleware;
}
