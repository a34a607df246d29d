/** Where a GitLab v3 client puts its token: header, query, form body or Bearer. */
import type { IncomingMessage } from "http";
import { LRUCache } from "lru-cache";
import type { Caller } from "../../lib/accounts/access";
import { MAX_SUDO_REF } from "../../lib/accounts/auth-cache";
import { forbidden, notFound } from "../../lib/api/errors";
import { hashToken } from "../../lib/crypto/tokens";

/** Where a token and a sudo come from: the headers, and the query and body once they are parsed. */
export type TokenSource = IncomingMessage & { query?: Record<string, unknown>; body?: unknown };

export function extractToken(req: TokenSource): string | null {
	const header = req.headers["private-token"];
	if (typeof header === "string" && header) return header.trim();
	const auth = req.headers.authorization;
	if (typeof auth === "string") {
		const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
		if (m) return m[1];
	}
	const fromQuery = req.query?.private_token;
	if (typeof fromQuery === "string" && fromQuery) return fromQuery;
	const body = req.body as Record<string, unknown> | undefined;
	if (body && typeof body === "object" && typeof body.private_token === "string" && body.private_token) return body.private_token;
	return null;
}

/**
 * Whom an admin acts as (docs/api.md#sudo): the `sudo` parameter (query or body) or the `Sudo`
 * header, a user id or username; null when none is given. Numbers in a JSON body count as ids.
 */
export function sudoIdentifier(req: TokenSource): string | null {
	const fromQuery = req.query?.sudo;
	if (typeof fromQuery === "string") return fromQuery;
	const body = req.body as Record<string, unknown> | undefined;
	const fromBody = body && typeof body === "object" ? body.sudo : undefined;
	if (typeof fromBody === "string") return fromBody;
	if (typeof fromBody === "number" && Number.isSafeInteger(fromBody)) return String(fromBody);
	const header = req.headers.sudo;
	return typeof header === "string" ? header : null;
}

/** The accounts action sudo asks whom `ref` names (services/modules/accounts/lookups.ts). */
export const SUDO_CALLER = "accounts.sudoCaller";

/**
 * Sudo: an admin acts as the user `ref` names (docs/api.md#sudo), looked up with `lookUp`
 * (SUDO_CALLER); anyone else is refused as GitLab refuses them.
 */
export function sudoCaller(admin: Caller, ref: string, lookUp: (ref: string) => Promise<Caller>): Promise<Caller> {
	if (!admin.is_admin) return Promise.reject(forbidden("Must be admin to use sudo"));
	if (ref.length > MAX_SUDO_REF) return Promise.reject(notFound(`No user id or username for: ${ref}`));
	return lookUp(ref);
}

/** A token's hash (what accounts looks it up by) and the cache key of that look-up. */
export interface TokenLookup {
	hash: string;
	key: string | null;
	/** Its owner, once resolved, kept until `ownerUntil` (RecentTokens.ownerOf). */
	owner?: Caller;
	ownerUntil?: number;
}

/**
 * How long a gateway keeps a resolved token's owner in its own memory. A caller (id, username,
 * admin flag) never changes through this API, and nothing cleans the shared entry before its five
 * minutes are over; keeping it here saves a cache read per request (a Redis round trip in the split
 * shape). A user blocked in the database is refused once both have run out: within 5.5 minutes.
 */
export const OWNER_KEPT_MS = 30_000;

/**
 * The look-ups of the tokens seen most recently: a client sends the same token with every
 * request, and hashing it and naming its cache entry is a good part of a cached answer's cost;
 * once resolved, its owner is kept a while too (OWNER_KEPT_MS). Bounded by lru-cache (the least
 * recently used goes first), so made-up tokens push out each other and the real ones not in use,
 * which are then read again (docs/architecture.md#access-cache).
 */
export class RecentTokens {
	/** No TTL: a look-up never goes stale; only its owner does, checked by ownerOf. */
	private readonly recent: LRUCache<string, TokenLookup>;

	constructor(
		private readonly keyOf: (tokenHash: string) => string | null,
		max = 1000,
	) {
		this.recent = new LRUCache({ max });
	}

	/** Read on every request, the fast path's too (docs/architecture.md#the-fast-path): no options object per get. */
	lookup(token: string): TokenLookup {
		let found = this.recent.get(token);
		if (!found) {
			const hash = hashToken(token);
			found = { hash, key: this.keyOf(hash) };
			this.recent.set(token, found);
		}
		return found;
	}

	/** The owner resolved for this token within OWNER_KEPT_MS, if any. */
	ownerOf(found: TokenLookup, now = Date.now()): Caller | undefined {
		return found.owner !== undefined && found.ownerUntil! > now ? found.owner : undefined;
	}

	/** Keeps what the token resolved to (only ever a verified owner: an unknown token is never kept). */
	keepOwner(found: TokenLookup, owner: Caller, now = Date.now()): void {
		found.owner = owner;
		found.ownerUntil = now + OWNER_KEPT_MS;
	}

	/**
	 * Forgets the owners of the look-ups a change of access cleans (ACCESS_CHANGED_EVENT): those
	 * under the keys it names, and every one when it names a pattern (cleans are rare).
	 */
	forgetOwners(keys: string[], patterns: string[]): void {
		const named = new Set(keys);
		for (const found of this.recent.values())
			if (patterns.length > 0 || (found.key !== null && named.has(found.key))) {
				found.owner = undefined;
				found.ownerUntil = undefined;
			}
	}
}
