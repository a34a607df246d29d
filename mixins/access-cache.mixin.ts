/**
 * The cached access look-ups (token → caller, project → level) are cleaned where they live: a
 * membership change broadcasts ACCESS_CHANGED_EVENT naming the entries, and every node that keeps
 * them (the gateways, and accounts' replicas, whose cacher may be their own memory) cleans them.
 */
import type { Context, ServiceSchema } from "moleculer";
import { ACCESS_CHANGED_EVENT, changedPatterns, type AccessChange } from "../lib/accounts/auth-cache";
import { cleanTwice } from "./cache-cleaner.mixin";

export function AccessCacheMixin(): Partial<ServiceSchema> {
	return {
		events: {
			async [ACCESS_CHANGED_EVENT](ctx: Context<AccessChange>) {
				await cleanTwice(this.broker, changedPatterns(ctx.params), "access look-ups");
			},
		},
	};
}
