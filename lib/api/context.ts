/** What the gateway passes to every service in `ctx.meta`. */
import type { Caller, ProjectAccess } from "../accounts/access";

export interface ApiMeta {
	/** The client's address as the gateway established it (X-Forwarded-For only from trusted proxies). */
	clientAddress?: string;
	/** The authenticated caller, or null on the few anonymous routes. */
	user: Caller | null;
	/** On `/projects/:id/…` routes: the project and the caller's level, resolved once. */
	access?: ProjectAccess;
	/** The resolved project id as a string: the first key of per-project cache entries. */
	projectKey?: string;
	/** The request's `If-Unmodified-Since`, as sent (lib/api/conditional.ts reads it). */
	ifUnmodifiedSince?: string;
	/** Response hints read by moleculer-web. */
	$statusCode?: number;
	$responseType?: string;
	$responseHeaders?: Record<string, string>;
	$location?: string;
}
