/**
 * The cached access look-ups (token → caller, project → level) are cleaned where they live: a
 * membership change broadcasts ACCESS_CHANGED_EVENT naming the entries, and every node that keeps
 * them (the gateways, and accounts' replicas, whose cacher may be their own memory) drops them.
 *
 * A change names exact keys as `keys` (deleted: one DEL, where a clean would scan every key of
 * Redis); `patterns` are cleaned; a change naming neither cleans every access look-up.
 */
import type { Context, ServiceSchema } from "moleculer";
import { ACCESS_CHANGED_EVENT, changedTargets, type AccessChange } from "../lib/accounts/auth-cache";
import { cleanTwice, deleteTwice } from "./cache-cleaner.mixin";

export function AccessCacheMixin(): Partial<ServiceSchema> {
	return {
		events: {
			async [ACCESS_CHANGED_EVENT](ctx: Context<AccessChange>) {
				const { keys, patterns } = changedTargets(ctx.params);
				await Promise.all([
					deleteTwice(this.broker, keys, "access look-ups"),
					patterns.length ? cleanTwice(this.broker, patterns, "access look-ups") : undefined,
				]);
			},
		},
	};
}
