/**
 * Cache invalidation for a service's cached read actions.
 *
 * Per project: cache keys start with PROJECT_CACHE_KEY (the resolved project id as a string,
 * from the gateway's meta, so `5` and `root%2Fdemo` share entries), and one project's entries
 * can be cleaned alone. The pattern pair works alike on the Memory and the Redis cacher (see
 * docs/architecture.md#cache-keys): `**` crosses dots on both, and `?` stands in for the `|` that joins
 * further keys.
 *
 * Every clean runs twice: at once, and again a moment later. A read that missed the cache just
 * before a write can store its (old) answer after the first clean; the second one removes it, so
 * a stale entry lives for RECLEAN_DELAY_MS at most instead of its whole TTL.
 */
import type { ServiceBroker, ServiceSchema } from "moleculer";

/** First cache key of every per-project cached action: `cache: { keys: [PROJECT_CACHE_KEY, …] }`. */
export const PROJECT_CACHE_KEY = "#projectKey";

/** Longer than a read handler takes between missing the cache and storing its answer. */
export const RECLEAN_DELAY_MS = 1000;

export function projectCachePatterns(service: string, projectId: number | string): string[] {
	const key = String(projectId);
	return [`${service}.**:"${key}"`, `${service}.**:"${key}"?**`];
}

/** Cleans now and once more after RECLEAN_DELAY_MS; a failing cache never fails the write. */
export async function cleanTwice(broker: ServiceBroker, patterns: string[], what: string): Promise<void> {
	const cacher = broker.cacher;
	if (!cacher) return;
	const clean = () =>
		cacher.clean(patterns).catch(err => {
			// Entries then expire by their TTL.
			broker.logger.warn(`Cache clean failed for ${what}: ${(err as Error).message}`);
		});
	await clean();
	setTimeout(() => void clean(), RECLEAN_DELAY_MS).unref();
}

export interface CacheCleanerMethods {
	/** Drops every cached read of this service for one project. */
	cleanProjectCache(projectId: number | string): Promise<void>;
}

export function CacheCleanerMixin(): Partial<ServiceSchema> {
	return {
		methods: {
			/** Drops every cached read of this service for one project. */
			async cleanProjectCache(projectId: number | string): Promise<void> {
				await cleanTwice(this.broker, projectCachePatterns(this.fullName, projectId), `${this.fullName} project ${projectId}`);
			},
		},
	};
}
