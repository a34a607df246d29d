/**
 * The cached access look-ups (token → caller, project → level) are cleaned where they live: a
 * membership change broadcasts ACCESS_CHANGED_EVENT naming the entries, and every node that keeps
 * them (the gateways, and accounts' replicas, whose cacher may be their own memory) drops them.
 *
 * A change names exact keys as `keys` (deleted: one DEL, where a clean would scan every key of
 * Redis); `patterns` are cleaned; a change naming neither cleans every access look-up.
 */
import type { Context, ServiceSchema } from "moleculer";
import { ACCESS_CACHE_PATTERNS, ACCESS_CHANGED_EVENT, type AccessChange } from "../lib/accounts/auth-cache";
import { cleanTwice, deleteTwice } from "./cache-cleaner.mixin";

/** What ACCESS_CHANGED_EVENT carries: exact cache keys to delete and/or patterns to clean. */
export interface AccessKeysChange extends AccessChange {
	keys?: string[];
}

const textList = (value: unknown): string[] | null => (Array.isArray(value) && value.length > 0 && value.every(v => typeof v === "string") ? value : null);

/** The exact keys and the patterns a change names (every access look-up when it names nothing usable). */
export function accessChangeTargets(change: AccessKeysChange | null | undefined): { keys: string[]; patterns: string[] } {
	const keys = textList(change?.keys) ?? [];
	const patterns = textList(change?.patterns) ?? (keys.length ? [] : ACCESS_CACHE_PATTERNS);
	return { keys, patterns };
}

export function AccessCacheMixin(): Partial<ServiceSchema> {
	return {
		events: {
			async [ACCESS_CHANGED_EVENT](ctx: Context<AccessKeysChange>) {
				const { keys, patterns } = accessChangeTargets(ctx.params);
				await Promise.all([
					deleteTwice(this.broker, keys, "access look-ups"),
					patterns.length ? cleanTwice(this.broker, patterns, "access look-ups") : undefined,
				]);
			},
		},
	};
}
