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
 * The copy itself is a ProjectCache (lib/cache/project-cache.ts): concurrent misses share one
 * load, and a load that was under way when the project changed is not kept.
 */

/** The action (on every push worker service) that drops a project's settings: `<worker>.forgetSettings`. */
export const FORGET_SETTINGS_ACTION = "forgetSettings";
/** `integrations`' answer to "can you reach the calling node's forget action?" */
export const KNOWS_WORKER_ACTION = "integrations.knowsWorker";

/** The project id of a forget request, or null for anything malformed. */
export function changedProject(params: unknown): number | null {
	const id = (params as { projectId?: unknown } | null)?.projectId;
	return typeof id === "number" && Number.isSafeInteger(id) && id > 0 ? id : null;
}
