/**
 * The two look-ups the gateway makes on every request. The accounts service caches their answers
 * (the action cache), and the gateway reads those same entries straight from the cacher before
 * it calls, so a cached request costs one cache read instead of a round trip to accounts. One
 * declaration here keeps the two sides' keys identical; accounts' cleans cover both.
 */
export interface CachedLookup {
	action: string;
	cache: { keys: string[]; ttl: number };
}

export const RESOLVE_TOKEN: CachedLookup = { action: "accounts.resolveToken", cache: { keys: ["tokenHash"], ttl: 300 } };
export const PROJECT_ACCESS: CachedLookup = { action: "accounts.projectAccess", cache: { keys: ["project", "userId", "admin"], ttl: 300 } };

/** Cache keys are `<action>:<params>`, so a clean names the action and then `:`. */
export const ACCESS_CACHE_PATTERNS = [`${RESOLVE_TOKEN.action}:**`, `${PROJECT_ACCESS.action}:**`];

/** The event accounts broadcasts when users, projects or members change. */
export const ACCESS_CHANGED_EVENT = "accounts.changed";
