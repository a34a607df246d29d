/** Every resource's routes; a new resource adds one import and one entry. */
import { accountsRoutes } from "./accounts.routes";
import { buildsRoutes } from "./builds.routes";
import { eventsRoutes } from "./events.routes";
import { integrationsRoutes } from "./integrations.routes";
import { keysRoutes } from "./keys.routes";
import { labelsRoutes } from "./labels.routes";
import { snippetsRoutes } from "./snippets.routes";
import type { AliasTarget, RouteTable } from "./types";

export const routeTables: RouteTable[] = [accountsRoutes, labelsRoutes, keysRoutes, snippetsRoutes, buildsRoutes, integrationsRoutes, eventsRoutes];

export function mergeAliases(kind: keyof RouteTable): Record<string, AliasTarget> {
	return Object.assign({}, ...routeTables.map(t => t[kind] ?? {})) as Record<string, AliasTarget>;
}
