/**
 * Per-project write generations: a cached read stores its answer only if no write to its project
 * happened since the read began (a compare-and-set: a Lua script on Redis, a check in memory), and
 * an epoch refuses every store of a read that began before a degraded cache came back. The same
 * guard keeps pages that do not exist out of the cache. docs/architecture.md#write-generations.
 */
import type { Context } from "moleculer";
import { isPaginated } from "../api/pagination";

/** First cache key of every per-project cached action: the resolved project id (gateway meta), or a `projectKey` parameter. */
export const PROJECT_CACHE_KEY = "#projectKey";
const PROJECT_KEYS = [PROJECT_CACHE_KEY, "projectKey"];

/**
 * Longer than any read can take (requests time out far sooner). A generation forgotten while a read
 * is under way refuses that read's store if the read saw one; a read that saw none (no write to the
 * project for a day) would store if a write's new generation were evicted before it finished, which
 * an LRU eviction does not pick (the key was just written).
 */
const GENERATION_TTL_S = 24 * 3600;
/** Memory cacher: projects remembered before starting over (with a new epoch). */
const MAX_MEMORY_GENERATIONS = 100_000;

/** What a read saw before it began; compared when it stores. */
type Seen = readonly [generation: string, epoch: string];

export interface WriteGenerations {
	/** The project's generation and the epoch, now. */
	read(project: string): Promise<Seen>;
	/** A write to the project happened (call after the data changed, before cleaning). */
	bump(project: string): Promise<void>;
	/** Stores the entry only if the project's generation and the epoch are still `seen`. */
	setIf(key: string, data: unknown, ttl: number | undefined, project: string, seen: Seen): Promise<boolean>;
	/** Refuses the stores of every read under way (a degraded cache is coming back). */
	newEpoch(): Promise<void>;
}

interface RedisClientLike {
	mget(keys: string[]): Promise<(string | null)[]>;
	eval(script: string, numKeys: number, ...args: (string | Buffer | number)[]): Promise<unknown>;
	incr(key: string): Promise<number>;
}

interface CacheOpts {
	enabled?: unknown;
	keys?: string[];
	/** The key (a parameter, or `#meta`) whose value names the generation, where it is not the first key. */
	generation?: string;
	ttl?: number;
	lock?: { enabled?: boolean };
	storedIf?: (params: Record<string, unknown>) => boolean;
}

interface CacherLike {
	client?: RedisClientLike;
	prefix?: string;
	connected?: boolean;
	opts: { ttl?: number | null; missingResponse?: unknown };
	serializer?: { serialize(data: unknown): Buffer | string };
	get(key: string): Promise<unknown>;
	set(key: string, data: unknown, ttl?: number): Promise<unknown>;
	middlewareWithoutLock(ctx: Context, key: string, handler: (ctx: Context) => Promise<unknown>, opts: CacheOpts): Promise<unknown>;
	generations?: WriteGenerations;
}

// KEYS: entry, generation, epoch. ARGV: data, ttl, seen generation, seen epoch.
const SET_IF_SCRIPT = `
if (redis.call('GET', KEYS[2]) or '') ~= ARGV[3] or (redis.call('GET', KEYS[3]) or '') ~= ARGV[4] then return 0 end
if tonumber(ARGV[2]) > 0 then redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2]) else redis.call('SET', KEYS[1], ARGV[1]) end
return 1`;
// KEYS: generation, counter. ARGV: ttl.
const BUMP_SCRIPT = `redis.call('SET', KEYS[1], redis.call('INCR', KEYS[2]), 'EX', ARGV[1]) return 1`;

function redisGenerations(cacher: CacherLike, client: RedisClientLike): WriteGenerations {
	const base = `cachegen:${cacher.prefix ?? ""}`;
	const genKey = (project: string) => `${base}p:${project}`;
	const epochKey = `${base}epoch`;
	const counterKey = `${base}counter`;
	return {
		async read(project) {
			const [gen, epoch] = await client.mget([genKey(project), epochKey]);
			return [gen ?? "", epoch ?? ""];
		},
		async bump(project) {
			await client.eval(BUMP_SCRIPT, 2, genKey(project), counterKey, GENERATION_TTL_S);
		},
		async setIf(key, data, ttl, project, [gen, epoch]) {
			const payload = cacher.serializer!.serialize(data);
			const seconds = ttl ?? cacher.opts.ttl ?? 0;
			return (await client.eval(SET_IF_SCRIPT, 3, (cacher.prefix ?? "") + key, genKey(project), epochKey, payload, seconds, gen, epoch)) === 1;
		},
		async newEpoch() {
			await client.incr(epochKey);
		},
	};
}

function memoryGenerations(cacher: CacherLike): WriteGenerations {
	const gens = new Map<string, number>();
	let counter = 0;
	let epoch = 0;
	const seen = (project: string): Seen => [String(gens.get(project) ?? ""), String(epoch)];
	return {
		read: project => Promise.resolve(seen(project)),
		bump(project) {
			if (gens.size >= MAX_MEMORY_GENERATIONS) {
				gens.clear();
				epoch++;
			}
			gens.set(project, ++counter);
			return Promise.resolve();
		},
		async setIf(key, data, ttl, project, [gen, ep]) {
			const [nowGen, nowEpoch] = seen(project);
			if (nowGen !== gen || nowEpoch !== ep) return false;
			// No await before this: the check and the store are one step.
			await cacher.set(key, data, ttl);
			return true;
		},
		newEpoch() {
			epoch++;
			return Promise.resolve();
		},
	};
}

/**
 * The project a per-project cached read is for, as its cache key names it, or as the action's
 * `generation` names it (the access look-ups: a project reference); undefined: not per project.
 */
function projectOf(opts: CacheOpts, ctx: Context): string | undefined {
	const name = opts.generation ?? opts.keys?.[0];
	if (!name || (!opts.generation && !PROJECT_KEYS.includes(name))) return undefined;
	const source = name.startsWith("#") ? (ctx.meta as Record<string, unknown>) : (ctx.params as Record<string, unknown>);
	const value = source?.[name.replace(/^#/, "")];
	return typeof value === "string" || typeof value === "number" ? String(value) : undefined;
}

/**
 * Whether an answer may be stored: a list page must exist (page 1, or one within the total) and
 * be asked for in its one canonical form (page and per_page absent or exactly the page served),
 * and the action's own `storedIf` must hold for the other parameters (one spelling of a filter),
 * so the number of entries follows the data, not the requests.
 */
function storable(opts: CacheOpts, params: Record<string, unknown> | undefined, page: unknown, perPage: unknown, result: unknown): boolean {
	if (opts.storedIf && !opts.storedIf(params ?? {})) return false;
	if (!isPaginated(result) || !opts.keys?.includes("page")) return true;
	if (page !== undefined && page !== result.page) return false;
	if (perPage !== undefined && perPage !== result.perPage) return false;
	return result.page <= Math.max(1, Math.ceil(result.total / result.perPage));
}

/** Installs the generations on the broker's cacher (once) and guards its cached reads with them. */
export function installWriteGenerations(cacher: unknown): WriteGenerations | undefined {
	const c = cacher as CacherLike | null | undefined;
	if (!c || typeof c.middlewareWithoutLock !== "function") return undefined;
	if (c.generations) return c.generations;
	const client = c.client;
	const generations = client && typeof client.eval === "function" && c.serializer ? redisGenerations(c, client) : memoryGenerations(c);
	c.generations = generations;

	const unguarded = c.middlewareWithoutLock.bind(c);
	c.middlewareWithoutLock = function guarded(this: CacherLike, ctx, key, handler, opts) {
		const project = projectOf(opts, ctx);
		// As the key was made, before the handler's validation converts them.
		const params = ctx.params as Record<string, unknown> | undefined;
		const page = params?.page;
		const perPage = params?.per_page;
		if (project === undefined && !opts.keys?.includes("page") && !opts.storedIf) return unguarded(ctx, key, handler, opts);
		return this.get(key).then(async content => {
			if (content !== this.opts.missingResponse) {
				(ctx as Context & { cachedResult?: boolean }).cachedResult = true;
				return content;
			}
			// Seen before the handler reads anything: a write after this point refuses the store.
			const seen = project === undefined ? null : await this.generations!.read(project).catch(() => undefined);
			const result = await handler(ctx);
			if (seen === undefined || this.connected === false || !storable(opts, params, page, perPage, result)) return result;
			const store =
				seen === null || project === undefined ? this.set(key, result, opts.ttl) : this.generations!.setIf(key, result, opts.ttl, project, seen);
			void store.catch(() => undefined);
			return result;
		});
	};
	return generations;
}

/** Bumps the project's generation on the broker's cacher (installing it if needed). */
export async function bumpGeneration(cacher: unknown, project: number | string): Promise<void> {
	await installWriteGenerations(cacher)?.bump(String(project));
}
