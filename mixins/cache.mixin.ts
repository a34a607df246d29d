/**
 * The caching a service mixes in (docs/architecture.md#caching): `CacheCleanerMixin` for a
 * service whose cached reads a write must clean (lib/cache/cleaning.ts), `AccessCacheMixin` for a
 * node that keeps the access look-ups (the gateways, accounts), which cleans them where they live.
 *
 * The cached access look-ups (token → caller, project → level) are cleaned where they live: a
 * membership change broadcasts ACCESS_CHANGED_EVENT naming the entries, and every node that keeps
 * them (the gateways, and accounts' replicas, whose cacher may be their own memory) drops them.
 *
 * A change names exact keys as `keys` (deleted: one DEL, where a clean would scan every key of
 * Redis); `patterns` are cleaned; a change naming neither cleans every access look-up. `projects`
 * names the project references whose write generations go first (lib/cache/write-generations.ts).
 */
import type { Context, ServiceSchema } from "moleculer";
import { ACCESS_CHANGED_EVENT, changedTargets, type AccessChange } from "../lib/accounts/auth-cache";
import { bumpGenerations, cleanProject, cleanTwice, deleteTwice, projectCachePatterns } from "../lib/cache/cleaning";
import { installWriteGenerations } from "../lib/cache/write-generations";

export interface CacheCleanerMethods {
	/** Drops every cached read of this service for one project. */
	cleanProjectCache(projectId: number | string): Promise<void>;
}

export function CacheCleanerMixin(): Partial<ServiceSchema> {
	return {
		created() {
			// Guards this broker's cached reads (a no-op when the middleware has already done it).
			installWriteGenerations(this.broker.cacher);
		},
		methods: {
			/** Drops every cached read of this service for one project. */
			async cleanProjectCache(projectId: number | string): Promise<void> {
				await cleanProject(this.broker, projectId, projectCachePatterns(this.fullName, projectId), `${this.fullName} project ${projectId}`);
			},
		},
	};
}

export function AccessCacheMixin(): Partial<ServiceSchema> {
	return {
		created() {
			// Guards the access look-ups' stores (a no-op when the cache middleware has already done it).
			installWriteGenerations(this.broker.cacher);
		},
		events: {
			async [ACCESS_CHANGED_EVENT](ctx: Context<AccessChange>) {
				const { keys, patterns, projects } = changedTargets(ctx.params);
				// A node whose cache is its own memory has generations of its own: bumped before the delete
				// (on a shared Redis, a repeat of accounts' own bump; membership changes are rare).
				await bumpGenerations(this.broker, projects, "access look-ups");
				await Promise.all([
					deleteTwice(this.broker, keys, "access look-ups"),
					patterns.length ? cleanTwice(this.broker, patterns, "access look-ups") : undefined,
				]);
			},
		},
	};
}
