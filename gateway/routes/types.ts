import type { AliasFunction } from "../windowed-download";

/**
 * What an alias points at: an action name (`"labels.list"`, `"stream:builds.uploadArtifacts"`),
 * or an alias function that runs after authentication and authorization (a windowed download).
 */
export type AliasTarget = string | AliasFunction;

/** One resource's HTTP aliases ("METHOD /path" → action), as the gateway mounts them. */
export interface RouteTable {
	/** Under /api/v3, authenticated by private token (actions may declare `auth: "optional"`). */
	api?: Record<string, AliasTarget>;
	/** Under /api/v3/internal, authorised by Gitlab-Shared-Secret; JSON and text bodies. */
	internal?: Record<string, string>;
	/** Under /api/v3/internal with no body parser: `stream:` aliases receive the raw body as ctx.stream. */
	internalStream?: Record<string, string>;
	/** Under /api/v3, no token, no body: the API's own description (gateway/routes/docs.routes.ts). */
	docs?: Record<string, AliasTarget>;
}
