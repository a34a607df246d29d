/** Every resource's routes; a new resource adds one import and one entry. */
import { accountsRoutes } from "./accounts.routes";
import { buildsRoutes } from "./builds.routes";
import { eventsRoutes } from "./events.routes";
import { integrationsRoutes } from "./integrations.routes";
import { keysRoutes } from "./keys.routes";
import { labelsRoutes } from "./labels.routes";
import { snippetsRoutes } from "./snippets.routes";
import type { AliasFunction, AliasTarget, RouteKind, RouteTable } from "./types";

export const routeTables: RouteTable[] = [accountsRoutes, labelsRoutes, keysRoutes, snippetsRoutes, buildsRoutes, integrationsRoutes, eventsRoutes];

/**
 * An alias function as the gateway mounts it: what it throws, or the promise it returns rejects
 * with, goes to moleculer-web's `next` (the gateway's error answer). moleculer-web ignores what an
 * alias function returns, so a rejection would otherwise be no request's: an unhandled rejection
 * ends the process (docs/architecture.md#the-guarded-entry).
 */
export function settledAlias(fn: AliasFunction): AliasFunction {
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

/** The aliases of one kind, from every table, as moleculer-web mounts them. */
export function mergeAliases(kind: RouteKind, tables: RouteTable[] = routeTables): Record<string, AliasTarget> {
	const merged: Record<string, AliasTarget> = {};
	for (const table of tables) Object.assign(merged, table[kind]);
	for (const [alias, target] of Object.entries(merged)) if (typeof target === "function") merged[alias] = settledAlias(target);
	return merged;
}
