/**
 * The gateway's reads of the shared cache (docs/architecture.md#the-gateway-answers-cache-hits).
 *
 * The key is always the cacher's own (its key function, fed the action's declaration as the
 * registry describes it), so the gateway and the service name the same entry; the service fills
 * it on a miss and its writes clean it.
 *
 * Reading from Redis goes through the cacher (bounded and degraded by the resilient-cache
 * middleware). Reading the in-memory cacher skips its per-read bookkeeping (three metric updates
 * with a quantile window, two debug lines: a few microseconds, on the path every request takes
 * three times); the gateway's HTTP metrics count those requests instead.
 *
 * An answer read from Redis can come back as the bytes the cache holds (EncodedJson) instead of
 * parsed: the cacher stored them as `JSON.stringify(answer)`, which is exactly the body parsing
 * and encoding them again would give, so a hit that is a JSON array or object other than a page
 * of results is sent as it is (docs/architecture.md#encoded-hits).
 */
import type { Paginated } from "../api/pagination";
import { Cachers } from "moleculer";

/** A cached action's declaration, as the registry describes it. */
export type CachedAction = { name: string; cache?: boolean | { enabled?: unknown; keys?: string[]; ttl?: number } };

interface CacherLike {
	connected?: boolean;
	get(key: string): Promise<unknown>;
	/** The entry's bytes as the cacher stored them, when they are plain JSON (the resilient-cache middleware's, on Redis). */
	getEncoded?: (key: string) => Promise<Buffer | null>;
	getCacheKey(action: { name: string }, opts: object, ctx: { params: object; meta: object; headers: object }): string;
}

interface MemoryLruLike extends CacherLike {
	cache: { get(key: string): unknown };
	clone?: ((data: unknown) => unknown) | false | null;
}

const NO_HEADERS = Object.freeze({});

/** A cached answer as the JSON bytes the cache holds, to be sent as they are. */
export class EncodedJson {
	constructor(readonly bytes: Buffer) {}
}

const OPEN_ARRAY = 0x5b; // [
const OPEN_OBJECT = 0x7b; // {
/** How a page of results (lib/api/pagination.ts) begins once encoded: the gateway turns it into rows and headers. */
const PAGE_START = Buffer.from('{"$paginated":');

/** How an encoded page's rows begin (lib/api/pagination.ts makes a page `{$paginated, rows, total, page, perPage[, next]}`). */
const PAGE_ROWS_START = Buffer.from('{"$paginated":true,"rows":');
/** Where its rows end: the last `],"total":` (nothing after the rows holds a quote, so none can be inside a string there). */
const PAGE_ROWS_END = Buffer.from('],"total":');

/**
 * An encoded page as the gateway sends it: its rows as their JSON bytes (sent unparsed, as a list's
 * are) and the rest parsed for the pagination headers; null when the bytes are not laid out so.
 */
export function encodedPage(bytes: Buffer): Paginated<unknown> | null {
	if (!bytes.subarray(0, PAGE_ROWS_START.length).equals(PAGE_ROWS_START)) return null;
	const end = bytes.lastIndexOf(PAGE_ROWS_END);
	if (end < PAGE_ROWS_START.length || bytes[PAGE_ROWS_START.length] !== OPEN_ARRAY) return null;
	try {
		const rest = JSON.parse(`{${bytes.subarray(end + 2).toString("utf8")}`) as Omit<Paginated<unknown>, "$paginated" | "rows">;
		return { $paginated: true, ...rest, rows: new EncodedJson(bytes.subarray(PAGE_ROWS_START.length, end + 1)) as never };
	} catch {
		return null;
	}
}

/** Whether JSON bytes are an answer the gateway sends unchanged: an array, or an object that is not a page. */
export function sentAsStored(bytes: Buffer): boolean {
	const first = bytes[0];
	if (first === OPEN_ARRAY) return true;
	return first === OPEN_OBJECT && !bytes.subarray(0, PAGE_START.length).equals(PAGE_START);
}

export class CacheReads {
	private readonly memory: MemoryLruLike | null;

	constructor(private readonly cacher: CacherLike | null | undefined) {
		this.memory = cacher instanceof Cachers.MemoryLRU ? (cacher as unknown as MemoryLruLike) : null;
	}

	/**
	 * Whether a hit is the very object the cache keeps (the in-memory cacher without cloning), which
	 * stays the same until its entry is cleaned or replaced; from Redis every hit is a new object.
	 */
	get sharesEntries(): boolean {
		return !!this.memory && !this.memory.clone;
	}

	/** The entry's key, as the cacher names it, or null when the action is not cached (or there is no cache). */
	keyOf(action: CachedAction, params: object, meta: object): string | null {
		const cacher = this.cacher;
		const cache = action.cache === true ? {} : action.cache;
		if (!cacher || !cache || typeof cache !== "object" || (cache.enabled !== undefined && cache.enabled !== true)) return null;
		return cacher.getCacheKey(action, cache, { params, meta, headers: NO_HEADERS });
	}

	/**
	 * What a cached action left in the cache for these parameters and this caller, or undefined
	 * (the action is not cached, the entry is not there, or the cache is away).
	 */
	read(action: CachedAction, params: object, meta: object): Promise<unknown> {
		return this.readKey(this.keyOf(action, params, meta));
	}

	/**
	 * As `read`, for an answer the gateway sends: from a cache that hands out its JSON bytes, an
	 * array or an object other than a page comes back as those bytes (EncodedJson), anything else
	 * parsed as the cacher parses it; with `encodedRows`, a page too, its rows as their bytes
	 * (`encodedPage`) for a gateway that sends them so.
	 */
	async answer(action: CachedAction, params: object, meta: object, opts: { encodedRows?: boolean } = {}): Promise<unknown> {
		const cacher = this.cacher;
		const getEncoded = cacher?.getEncoded;
		if (!getEncoded) return this.read(action, params, meta);
		const key = this.keyOf(action, params, meta);
		if (key === null || cacher.connected === false) return undefined;
		const bytes = await getEncoded(key);
		if (!bytes || bytes.length === 0) return undefined;
		if (sentAsStored(bytes)) return new EncodedJson(bytes);
		const page = opts.encodedRows ? encodedPage(bytes) : null;
		if (page) return page;
		try {
			const value: unknown = JSON.parse(bytes.toString("utf8"));
			return value === null ? undefined : value;
		} catch {
			return undefined; // not what the cacher stores: a miss, as the cacher's own read makes it
		}
	}

	/**
	 * The entry under a key from keyOf, at once, when the cache keeps its entries in this process
	 * and hands them out as they are (sharesEntries); undefined otherwise, or when it is not there.
	 */
	peek(key: string | null): unknown {
		const memory = this.memory;
		if (key === null || !memory || memory.clone || this.cacher!.connected === false) return undefined;
		return memory.cache.get(key);
	}

	/** The entry under a key from keyOf (null: nothing), or undefined while the cache is away. */
	async readKey(key: string | null): Promise<unknown> {
		if (key === null || !this.cacher || this.cacher.connected === false) return undefined;
		const memory = this.memory;
		if (memory) {
			const item = memory.cache.get(key);
			return item === undefined || !memory.clone ? item : memory.clone(item);
		}
		const hit = await this.cacher.get(key).catch(() => undefined);
		return hit === null ? undefined : hit;
	}
}
