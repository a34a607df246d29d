/**
 * Every resource's routes, by API version; a new resource adds one import and one entry. The
 * gateway serves /api and mounts each version's tables under its root (docs/api.md#versions):
 * `routeTables` (v3) under /api/v3, `v4RouteTables` under /api/v4, on the same services and data.
 */
import { accountsRoutes } from "./accounts.routes";
import { buildsRoutes } from "./builds.routes";
import { eventsRoutes } from "./events.routes";
import { integrationsRoutes } from "./integrations.routes";
import { keysRoutes } from "./keys.routes";
import { labelsRoutes } from "./labels.routes";
import { snippetsRoutes } from "./snippets.routes";
import type { AliasTarget, RouteTable } from "./types";
import { v4RouteTables } from "./v4";

export { v4RouteTables };

/** API v3's tables. */
export const routeTables: RouteTable[] = [accountsRoutes, labelsRoutes, keysRoutes, snippetsRoutes, buildsRoutes, integrationsRoutes, eventsRoutes];

/** Where the gateway serves the API, and each version's root under it. */
export const API_ROOT = "/api";
export const V3_ROOT = "/v3";
export const V4_ROOT = "/v4";

/** One kind of alias of some tables, each path under `root` ("/v4"): "GET /projects" → "GET /v4/projects". */
export function mergeAliases(kind: keyof RouteTable, tables: RouteTable[] = routeTables, root = ""): Record<string, AliasTarget> {
	const merged = Object.assign({}, ...tables.map(t => t[kind] ?? {})) as Record<string, AliasTarget>;
	return Object.fromEntries(
		Object.entries(merged).map(([alias, target]) => {
			const [method, path] = alias.trim().split(/\s+/);
			return [`${method} ${root}${path}`, target];
		}),
	);
}
