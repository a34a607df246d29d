/**
 * A process's bounded, short-lived copy of something per project, loaded on demand: at most
 * `maxEntries` projects (the least recently used go first), each kept at most `ttlMs`.
 * Concurrent misses for one project share one load; a failed load is not kept (a loader that
 * throws for "no such project" keeps nothing for unknown ids); `invalidate` drops one project,
 * and a load that was under way when it did is not kept (its answer may predate the change).
 * Used for the workers' integration settings (lib/integrations/settings-cache.ts) and for the
 * projects `events` knows to exist.
 */

export interface ProjectCacheOptions {
	/** 0 turns the cache off (every read loads). */
	ttlMs: number;
	maxEntries: number;
}

interface Entry<T> {
	value: Promise<T>;
	expires: number;
}

export class ProjectCache<T> {
	private readonly entries = new Map<number, Entry<T>>();

	constructor(private readonly opts: ProjectCacheOptions) {}

	get size(): number {
		return this.entries.size;
	}

	/** The project's value, loaded with `load` when not cached (or expired). */
	get(projectId: number, load: () => Promise<T>): Promise<T> {
		if (this.opts.ttlMs <= 0) return load();
		const now = Date.now();
		const hit = this.entries.get(projectId);
		if (hit && hit.expires > now) {
			// Most recently used last: the first entry is the one to evict.
			this.entries.delete(projectId);
			this.entries.set(projectId, hit);
			return hit.value;
		}
		const entry: Entry<T> = { value: load(), expires: now + this.opts.ttlMs };
		this.entries.delete(projectId);
		this.entries.set(projectId, entry);
		while (this.entries.size > this.opts.maxEntries) this.entries.delete(this.entries.keys().next().value!);
		// A failed load is not remembered: the next caller tries again.
		entry.value.catch(() => this.entries.get(projectId) === entry && this.entries.delete(projectId));
		return entry.value;
	}

	/** Forgets one project (what was kept for it changed). */
	invalidate(projectId: number): void {
		this.entries.delete(projectId);
	}
}
