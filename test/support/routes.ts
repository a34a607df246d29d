/**
 * Every endpoint the gateway mounts, read from gateway/routes (the tables the gateway itself is
 * built from), with the parameter schema and `auth` mode of the action behind each alias: tests
 * that must cover "every endpoint" enumerate this, so a new endpoint is covered once it is routed.
 */
import fs from "fs";
import path from "path";
import type { ActionSchema, ServiceSchema } from "moleculer";
import { ROOT } from "./processes";
import { routeTables } from "../../gateway/routes";
import type { RouteKind } from "../../gateway/routes/types";

export interface GatewayRoute {
	kind: RouteKind;
	method: string;
	/** The alias path relative to the route's mount point: "/projects/:id/labels". */
	path: string;
	/** The full path under /api/v3: "/projects/:id/labels", "/internal/builds". */
	fullPath: string;
	/** "labels.create", or the action an alias function names; null for one that names none (a file download). */
	action: string | null;
	/** A file download's: the action that authorizes it ("builds.traceGrant"). */
	grant?: string;
	stream: boolean;
	params: Record<string, any>;
	auth?: string;
}

/** What the route tests read of an action's declaration (types/moleculer.d.ts), its parameters as plain records. */
export type ActionSchemaSummary = Pick<ActionSchema, "auth" | "hedge" | "cache" | "paramGroups"> & { params?: Record<string, any> };

/** Action schemas of every service file, mixins included, by "service.action". */
export function loadActionSchemas(): Record<string, ActionSchemaSummary> {
	const out: Record<string, ActionSchemaSummary> = {};
	const collect = (schema: Partial<ServiceSchema>, service: string) => {
		for (const mixin of schema.mixins ?? []) collect(mixin, service);
		for (const [name, def] of Object.entries(schema.actions ?? {})) {
			if (!def || typeof def !== "object") continue;
			const action = def as ActionSchemaSummary;
			out[`${service}.${name}`] = { params: action.params, auth: action.auth, hedge: action.hedge, cache: action.cache, paramGroups: action.paramGroups };
		}
	};
	for (const dir of ["services", "services/workers"]) {
		const abs = path.join(ROOT, dir);
		if (!fs.existsSync(abs)) continue;
		for (const file of fs.readdirSync(abs).filter(f => f.endsWith(".service.ts"))) {
			// eslint-disable-next-line @typescript-eslint/no-require-imports -- the route tests list routes synchronously
			const mod = require(path.join(abs, file));
			const schema: ServiceSchema = mod.default ?? mod;
			if (schema?.name) collect(schema, schema.name);
		}
	}
	return out;
}

/** Every alias the gateway mounts (from gateway/routes), with the parameter schema behind it. */
export function gatewayRoutes(): GatewayRoute[] {
	const actions = loadActionSchemas();
	const routes: GatewayRoute[] = [];
	for (const table of routeTables) {
		for (const kind of ["api", "internal", "internalStream"] as const) {
			for (const [alias, target] of Object.entries(table[kind] ?? {})) {
				const [method, aliasPath] = alias.split(/\s+/);
				const name = typeof target === "string" ? target.replace(/^(stream|multipart):/, "") : (target.action ?? null);
				const schema = name ? actions[name] : undefined;
				if (name && !schema) throw new Error(`route ${alias} points at ${name}, which no service file defines`);
				routes.push({
					kind,
					method: method.toUpperCase(),
					path: aliasPath,
					fullPath: (kind === "api" ? "" : "/internal") + aliasPath,
					action: name,
					grant: typeof target === "function" ? (target as { grantAction?: string }).grantAction : undefined,
					stream: kind === "internalStream",
					params: schema?.params ?? {},
					auth: schema?.auth,
				});
			}
		}
	}
	return routes;
}

export const pathParams = (routePath: string) => [...routePath.matchAll(/:([A-Za-z_]+)/g)].map(m => m[1]);
