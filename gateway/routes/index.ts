/**
 * Every resource's routes, by API version; a new resource adds one import and one entry. The
 * gateway serves /api and mounts each version's tables under its root (docs/api.md#versions):
 * `routeTables` (v3) under /api/v3, `v4RouteTables` under /api/v4, on the same services and data.
 */
import { accountsRoutes } from "./accounts.routes";
import { buildsRoutes } from "./builds.routes";
import { eventsRoutes } from "./events.routes";
import { integrationsRoutes } from "./integrations.routes";
import { deployKeysRoutes } from "./deploy-keys.routes";
import { labelsRoutes } from "./labels.routes";
import { snippetsRoutes } from "./snippets.routes";
import type { AliasFunction } from "../server/routing";
import type { AliasTarget, RouteKind, RouteTable } from "./types";
import { v4RouteTables } from "./v4";

export { v4RouteTables };

/** API v3's tables. */
export const routeTables: RouteTable[] = [accountsRoutes, labelsRoutes, deployKeysRoutes, snippetsRoutes, buildsRoutes, integrationsRoutes, eventsRoutes];

/**
 * An alias function as the gateway mounts it: what it throws, or the promise it returns rejects
 * with, goes to moleculer-web's `next` (the gateway's error answer). moleculer-web ignores what an
 * alias function returns, so a rejection would otherwise be no request's: an unhandled rejection
 * ends the process (docs/architecture.md#the-guarded-entry).
 */
function settledAlias(fn: AliasFunction): AliasFunction {
	const settled = function (this: never, req: never, res: Parameters<AliasFunction>[1], next: (err?: unknown) => void) {
		let result: unknown;
		try {
			result = fn.call(this, req, res, next);
		} catch (err) {
			return next(err);
		}
		if (typeof (result as PromiseLike<unknown> | undefined)?.then === "function") (result as PromiseLike<unknown>).then(undefined, next);
	};
	return Object.assign(settled, fn);
}

/** Where the gateway serves the API, and each version's root under it. */
export const API_ROOT = "/api";
export const V3_ROOT = "/v3";
export const V4_ROOT = "/v4";

/**
 * The aliases of one kind, from every table, as moleculer-web mounts them, each path under `root`
 * ("/v4"): "GET /projects" → "GET /v4/projects".
 */
export function mergeAliases(kind: RouteKind, tables: RouteTable[] = routeTables, root = ""): Record<string, AliasTarget> {
	const merged: Record<string, AliasTarget> = {};
	for (const table of tables)
		for (const [alias, target] of Object.entries(table[kind] ?? {})) {
			const [method, path] = alias.trim().split(/\s+/);
			merged[`${method} ${root}${path}`] = typeof target === "function" ? settledAlias(target) : target;
		}
	return merged;
}
