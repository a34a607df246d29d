/**
 * The two look-ups the gateway makes on every request. The accounts service caches their answers
 * (the action cache), and the gateway answers them from that cache itself before it calls, so a
 * cached request costs one cache read instead of a round trip to accounts. One declaration here
 * names the action and its cache keys; accounts' cleans name the same entries.
 */
export interface CachedLookup {
	action: string;
	/** `generation`: the parameter whose write generation guards the look-up's store (lib/cache/write-generations.ts). */
	cache: { keys: string[]; ttl: number; generation?: string };
}

export const RESOLVE_TOKEN: CachedLookup = { action: "accounts.resolveToken", cache: { keys: ["tokenHash"], ttl: 300 } };
/**
 * Guarded by the write generation of the project reference it names: a membership change bumps it
 * (under the project's id and its path) before deleting the entries, so a look-up that read the old
 * membership cannot store its answer afterwards, however slow.
 */
export const PROJECT_ACCESS: CachedLookup = {
	action: "accounts.projectAccess",
	cache: { keys: ["project", "userId", "admin"], ttl: 300, generation: "project" },
};

/** Cache keys are `<action>:<params>`, so a clean names the action and then `:`. */
export const ACCESS_CACHE_PATTERNS = [`${RESOLVE_TOKEN.action}:**`, `${PROJECT_ACCESS.action}:**`];

/** The event accounts broadcasts when access changes (a membership), naming the entries to clean. */
export const ACCESS_CHANGED_EVENT = "accounts.changed";

/**
 * What ACCESS_CHANGED_EVENT carries: exact cache keys to delete (one DEL each, where a clean would
 * SCAN every key of Redis) and/or patterns to clean; every access look-up when it names neither.
 */
export interface AccessChange {
	keys?: string[];
	patterns?: string[];
	/** Project references whose write generation to bump (for nodes whose generations are their own memory). */
	projects?: string[];
}

/** At most this many project references in one change (a project's id and path). */
const MAX_CHANGED_PROJECTS = 8;

const textList = (value: unknown): string[] | null => (Array.isArray(value) && value.length > 0 && value.every(v => typeof v === "string") ? value : null);

/** The exact keys and the patterns a change names (every access look-up when it names nothing usable). */
export function changedTargets(change: AccessChange | null | undefined): { keys: string[]; patterns: string[]; projects: string[] } {
	const keys = textList(change?.keys) ?? [];
	const patterns = textList(change?.patterns) ?? (keys.length ? [] : ACCESS_CACHE_PATTERNS);
	const projects = (textList(change?.projects) ?? []).filter(ref => ref.length <= MAX_PROJECT_REF).slice(0, MAX_CHANGED_PROJECTS);
	return { keys, patterns, projects };
}

/** The longest project reference looked up; no id or namespace/path is longer (a longer one names no project). */
export const MAX_PROJECT_REF = 512;

/** The longest user id or username sudo looks up (a longer one names no user). */
export const MAX_SUDO_REF = 255;

/**
 * The project ref as the access look-up sees it: `7` and `007` name one project, and paths are
 * case-insensitive. Normalised before the look-up so that every spelling shares one cache entry,
 * and a membership change can name the entries it makes stale.
 */
export function projectRefKey(ref: string): string {
	const trimmed = ref.trim();
	return /^\d+$/.test(trimmed) ? String(Number(trimmed)) : trimmed.toLowerCase();
}

/** The cacher's key maker as it runs (moleculer's typings say it takes the action's name; it takes the action). */
interface CacheKeyMaker {
	getCacheKey(action: { name: string }, opts: CachedLookup["cache"], ctx: { params: object; meta: object; headers: object }): string;
}

/** A look-up's cache key, made by the cacher itself, so the gateway and accounts name the same entry. */
export function lookupCacheKey(cacher: object, spec: CachedLookup, params: Record<string, unknown>): string {
	return (cacher as CacheKeyMaker).getCacheKey({ name: spec.action }, spec.cache, { params, meta: {}, headers: {} });
}

/**
 * One user's cached access to one project: under its id and its path, as admin or not. A member
 * change cleans only these, so it leaves every other caller's look-ups (and the gateway's hit
 * rate) alone.
 */
export function memberAccessKeys(cacher: object, project: { id: number; path_with_namespace: string }, userId: number): string[] {
	return projectRefs(project).flatMap(ref => [false, true].map(admin => lookupCacheKey(cacher, PROJECT_ACCESS, { project: ref, userId, admin })));
}

/** The references that name a project in the access look-ups' keys and generations: its id and its path. */
export function projectRefs(project: { id: number; path_with_namespace: string }): string[] {
	return [String(project.id), projectRefKey(project.path_with_namespace)];
}
