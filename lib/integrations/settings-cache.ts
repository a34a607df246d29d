/**
 * A worker's copy of projects' integration settings (docs/architecture.md#settings-cache), so
 * that a push event does not cost a call to `integrations` (a NATS round trip and a cache read)
 * per worker. Bounded: at most `maxEntries` projects (the least recently used go first), each
 * kept at most `ttlMs`. A change is seen at once: before a write to a project's settings
 * answers, `integrations` has every running worker instance drop that project's entry (the
 * action FORGET_SETTINGS_ACTION of each worker, called on each node), so an event published
 * after the write reads them again. A worker keeps nothing until every `integrations` node has
 * discovered its action (KNOWS_WORKER_ACTION says so): a node starts consuming a moment before
 * the others have discovered it. The TTL bounds how long an instance that could not be reached
 * at a change keeps the old settings.
 *
 * Concurrent misses for one project share one load. A load that was under way when the project
 * changed is not kept (its answer may predate the change).
 */

/** The action (on every push worker service) that drops a project's settings: `<worker>.forgetSettings`. */
export const FORGET_SETTINGS_ACTION = "forgetSettings";
/** `integrations`' answer to "can you reach the calling node's forget action?" */
export const KNOWS_WORKER_ACTION = "integrations.knowsWorker";

export interface SettingsCacheOptions {
	/** 0 turns the cache off (every read loads). */
	ttlMs: number;
	maxEntries: number;
}

interface Entry<T> {
	value: Promise<T>;
	expires: number;
}

export class SettingsCache<T> {
	private readonly entries = new Map<number, Entry<T>>();

	constructor(private readonly opts: SettingsCacheOptions) {}

	get size(): number {
		return this.entries.size;
	}

	/** The project's settings, loaded with `load` when not cached (or expired). */
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
		// A failed load is not remembered: the next event tries again.
		entry.value.catch(() => this.entries.get(projectId) === entry && this.entries.delete(projectId));
		return entry.value;
	}

	/** Forgets one project (its settings changed). */
	invalidate(projectId: number): void {
		this.entries.delete(projectId);
	}

	clear(): void {
		this.entries.clear();
	}
}

/** The project id of a forget request, or null for anything malformed. */
export function changedProject(params: unknown): number | null {
	const id = (params as { projectId?: unknown } | null)?.projectId;
	return typeof id === "number" && Number.isSafeInteger(id) && id > 0 ? id : null;
}
