/**
 * A process's bounded, short-lived copy of something per project, loaded on demand: at most
 * `maxEntries` projects (the least recently used go first), each kept at most `ttlMs`.
 * Concurrent misses for one project share one load; a failed load is not kept (a loader that
 * throws for "no such project" keeps nothing for unknown ids); `invalidate` drops one project,
 * and a load that was under way when it did is not kept (its answer may predate the change).
 * Used for the workers' integration settings (lib/integrations/settings-cache.ts) and for the
 * projects `events` knows to exist. The bounds are lru-cache's (docs/architecture.md#project-cache).
 */
import { LRUCache } from "lru-cache";

export interface ProjectCacheOptions {
	/** 0 turns the cache off (every read loads). */
	ttlMs: number;
	maxEntries: number;
}

/**
 * Date.now(), the clock the TTL has always been counted on (and that tests move), read at each
 * check: `ttlResolution: 0`, where lru-cache would keep a reading for 1 ms with a timer.
 */
const WALL_CLOCK = { now: () => Date.now() };

export class ProjectCache<T> {
	/**
	 * The load under way or done, as its promise: sharing it shares the load. Null when off (lru-cache
	 * reads a `ttl` of 0 as "never stale"). Not lru-cache's `fetch`: its TTL starts when the load
	 * ends, a delete aborts the load its callers wait for, and it holds no null answer.
	 */
	private readonly entries: LRUCache<number, Promise<T>> | null;

	constructor(opts: ProjectCacheOptions) {
		this.entries = opts.ttlMs > 0 ? new LRUCache<number, Promise<T>>({ max: opts.maxEntries, ttl: opts.ttlMs, ttlResolution: 0, perf: WALL_CLOCK }) : null;
	}

	get size(): number {
		return this.entries?.size ?? 0;
	}

	/** The project's value, loaded with `load` when not cached (or expired). */
	get(projectId: number, load: () => Promise<T>): Promise<T> {
		const entries = this.entries;
		if (!entries) return load();
		const hit = entries.get(projectId);
		if (hit) return hit;
		// lru-cache keeps an entry while at most `ttl` has passed; ours go once ttlMs has: a start 1 ms early.
		const start = Date.now() - 1;
		const value = load();
		entries.set(projectId, value, { start });
		// A failed load is not remembered: the next caller tries again (peek: not a use, stale or not).
		value.catch(() => entries.peek(projectId, { allowStale: true }) === value && entries.delete(projectId));
		return value;
	}

	/** Forgets one project (what was kept for it changed). */
	invalidate(projectId: number): void {
		this.entries?.delete(projectId);
	}
}
