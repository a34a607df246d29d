/**
 * How cached reads are cleaned when a write changes what they answered (the services' mixin,
 * mixins/cache.mixin.ts, and accounts' membership changes call these).
 *
 * Per project: cache keys start with PROJECT_CACHE_KEY (the resolved project id as a string,
 * from the gateway's meta, so `5` and `root%2Fdemo` share entries), and one project's entries
 * can be cleaned alone. The pattern pair works alike on the Memory and the Redis cacher (see
 * docs/architecture.md#cache-keys): `**` crosses dots on both, and `?` stands in for the `|` that joins
 * further keys.
 *
 * A write bumps the project's write generation before it cleans (lib/cache/write-generations.ts):
 * a read that began before the write cannot store its old answer afterwards, however slow, so
 * one clean is enough.
 *
 * Exact keys (a member's access look-ups) are deleted, not cleaned: on Redis a clean is a SCAN of
 * the whole keyspace, a delete one DEL. Those look-ups are guarded by their project reference's
 * generation (lib/accounts/auth-cache.ts); their delete still runs twice, at once and again
 * RECLEAN_DELAY_MS later, as do the cleans of entries no generation guards.
 */
import type { ServiceBroker } from "moleculer";
import { bumpGeneration } from "./write-generations";

/** Longer than an access look-up takes between missing the cache and storing its answer. */
export const RECLEAN_DELAY_MS = 1000;

export function projectCachePatterns(service: string, projectId: number | string): string[] {
	const key = String(projectId);
	return [`${service}.**:"${key}"`, `${service}.**:"${key}"?**`];
}

function warnOnFailure(broker: ServiceBroker, what: string) {
	// Entries then expire by their TTL.
	return (err: unknown) => broker.logger.warn(`Cache clean failed for ${what}: ${(err as Error).message}`);
}

/** Bumps the project's write generation, then cleans the patterns once; a failing cache never fails the write. */
export async function cleanProject(broker: ServiceBroker, projectId: number | string, patterns: string[], what: string): Promise<void> {
	const cacher = broker.cacher;
	if (!cacher) return;
	// The bump first: a read storing between the clean and a later bump would keep its old answer.
	await bumpGeneration(cacher, projectId).catch(warnOnFailure(broker, what));
	await cacher.clean(patterns).catch(warnOnFailure(broker, what));
}

/** Bumps the write generations of several project references; a failing cache never fails the write. */
export async function bumpGenerations(broker: ServiceBroker, projects: string[], what: string): Promise<void> {
	const cacher = broker.cacher;
	if (!cacher) return;
	await Promise.all(projects.map(project => bumpGeneration(cacher, project).catch(warnOnFailure(broker, what))));
}

/** Cleans patterns now and once more after RECLEAN_DELAY_MS (for entries no generation guards). */
export async function cleanTwice(broker: ServiceBroker, patterns: string[], what: string): Promise<void> {
	const cacher = broker.cacher;
	if (!cacher) return;
	const clean = () => cacher.clean(patterns).catch(warnOnFailure(broker, what));
	await clean();
	setTimeout(() => void clean(), RECLEAN_DELAY_MS).unref();
}

/** Deletes exact keys now and once more after RECLEAN_DELAY_MS: one DEL each, no keyspace scan. */
export async function deleteTwice(broker: ServiceBroker, keys: string[], what: string): Promise<void> {
	const cacher = broker.cacher;
	if (!cacher || keys.length === 0) return;
	const del = () => cacher.del(keys).catch(warnOnFailure(broker, what));
	await del();
	setTimeout(() => void del(), RECLEAN_DELAY_MS).unref();
}
