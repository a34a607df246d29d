/**
 * The OpenAPI 3.1 document of the gateway, generated from what the gateway itself runs on: its
 * route tables (gateway/routes) and the definitions of the actions behind them (fastest-validator
 * `params` and the `auth` mode, from the broker's registry). Nothing here names an endpoint, so a
 * route added to a table is described as soon as the gateway mounts it. Pure: the registry is
 * passed in as a look-up.
 *
 * What each route answers on success, status and body, its table declares beside it (`answers`,
 * gateway/routes/answers.ts) with the presenters' schemas (presenters/json-schema.ts); a schema with
 * a `title` is named once in `components.schemas` and referred to wherever it is used
 * (docs/architecture.md#the-api-document).
 */
import { components, ERROR_SCHEMAS } from "./openapi-components";
import { addLinks, addOverlaps, createOf, openApiPath, type Create, type Placed } from "./openapi-links";
import { operation } from "./openapi-operation";
import { NamedSchemas } from "./named-schemas";
import type { Mount, OpenApiOptions } from "./types";
import type { AliasTarget, RouteKind, RouteTable } from "../routes/types";

const KINDS: Record<RouteKind, Mount> = {
	api: { prefix: "", security: "token", body: "parsed" },
	internal: { prefix: "/internal", security: "secret", body: "text" },
	internalStream: { prefix: "/internal", security: "secret", body: "stream" },
	docs: { prefix: "", security: "none", body: "none" },
};

type Schema = Record<string, unknown>;

/**
 * The action whose parameters describe an alias: "labels.list", "stream:builds.x" → its name; an
 * alias function → the action it names, or the one that grants its download; null when none.
 */
function actionName(target: AliasTarget): string | null {
	if (typeof target === "string") return target.replace(/^(stream|multipart):/, "");
	return target.action ?? (target as { grantAction?: string }).grantAction ?? null;
}

/** Tag of a table: the service most of its actions belong to (a function alias gets its table's). */
function tableTag(table: RouteTable): string {
	const counts = new Map<string, number>();
	for (const aliases of Object.values(table) as (Record<string, AliasTarget> | undefined)[])
		for (const target of Object.values(aliases ?? {})) {
			const name = actionName(target);
			if (name) counts.set(name.split(".")[0], (counts.get(name.split(".")[0]) ?? 0) + 1);
		}
	return [...counts.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? "docs";
}

export function buildOpenApi(tables: RouteTable[], opts: OpenApiOptions): Schema {
	const paths: Record<string, Record<string, Schema>> = {};
	const placed: Placed[] = [];
	const creates: Create[] = [];
	const tags = new Set<string>();
	const named = new NamedSchemas();
	for (const table of tables) {
		const defaultTag = tableTag(table);
		const unused = new Set([...Object.keys(table.answers ?? {}), ...Object.keys(table.takes ?? {}), ...Object.keys(table.variants ?? {})]);
		for (const [kind, how] of Object.entries(KINDS) as [RouteKind, Mount][]) {
			for (const [alias, target] of Object.entries(table[kind] ?? {})) {
				unused.delete(alias);
				const [rawMethod, aliasPath] = alias.trim().split(/\s+/);
				const method = rawMethod.toUpperCase();
				const fullPath = how.prefix + aliasPath;
				const name = actionName(target);
				const action = name ? opts.action(name) : undefined;
				const tag = kind === "internal" || kind === "internalStream" ? "internal" : name ? name.split(".")[0] : defaultTag;
				tags.add(tag);
				paths[openApiPath(fullPath)] ??= {};
				if (kind === "api") placed.push({ method, fullPath });
				const answers = table.answers?.[alias];
				const takes = table.takes?.[alias];
				const input = { kind, how, method, aliasPath, fullPath, name, action, target, tag, answers, takes, named, opts };
				paths[openApiPath(fullPath)][method.toLowerCase()] = operation(input);
				// Each value's own operation, at its literal path (an integration's PUT with its fields).
				const variants = table.variants?.[alias];
				for (const [value, schema] of Object.entries(variants?.takes ?? {})) {
					const literal = (path: string) => path.replace(`:${variants!.param}`, value);
					paths[openApiPath(literal(fullPath))] ??= {};
					paths[openApiPath(literal(fullPath))][method.toLowerCase()] = operation({
						...input,
						aliasPath: literal(aliasPath),
						fullPath: literal(fullPath),
						takes: schema,
					});
					if (kind === "api") placed.push({ method, fullPath: literal(fullPath) });
				}
				const create = kind === "docs" ? undefined : createOf(openApiPath(fullPath), method, answers);
				if (create) creates.push(create);
			}
		}
		if (unused.size) throw new Error(`answers or takes declared for aliases that are not routed: ${[...unused].join(", ")}`);
	}
	addOverlaps(paths, placed);
	addLinks(paths, creates);
	return {
		openapi: "3.1.0",
		info: {
			title: opts.title ?? "GitLab API v3 service",
			version: "v3",
			description:
				"A GitLab-compatible REST API v3 for CI builds, deploy keys, labels, integration settings and project snippets. " +
				"Generated by the gateway from its routes and the parameter schemas of the actions behind them. " +
				'Errors are GitLab 8\'s: `{"message": "404 Project Not Found"}`, `{"error": "name is missing"}`, ' +
				'`{"message": {"color": ["must be a valid color code"]}}`. A method a path does not take is a 405 with `Allow` ' +
				"(components.responses.MethodNotAllowed). Where it deliberately differs from GitLab 8.16, and what each " +
				"endpoint answers, is in the project's docs/api.md.",
		},
		servers: [{ url: opts.basePath }],
		tags: [...tags].sort().map(name => ({ name })),
		paths: Object.fromEntries(Object.entries(paths).sort(([a], [b]) => a.localeCompare(b))),
		components: { ...components(opts), schemas: { ...named.schemas, ...ERROR_SCHEMAS } },
	};
}

/** A response's links to the operations of its version, named as the joint document names them (`v4_…`). */
function withPrefixedLinks(response: Schema, version: string): Schema {
	if (!response.links) return response;
	const links = Object.fromEntries(
		Object.values(response.links as Record<string, Schema>).map(link => {
			const id = `${version}_${String(link.operationId)}`;
			return [id, { ...link, operationId: id }];
		}),
	);
	return { ...response, links };
}

/**
 * One document for two versions (docs/api.md#docs-endpoints): `other`'s operations join `base`'s
 * under their full paths (`/api/v4/projects/{id}/jobs`), each operation with its own server (the
 * origin: its path says its version) and a tag of its version ("v4 labels").
 */
export function addVersion(base: Schema, other: Schema, version: string): Schema {
	const root = ((other.servers as { url: string }[])[0]?.url ?? "").replace(/\/$/, "");
	const paths = { ...(base.paths as Record<string, Schema>) };
	const tags = new Set(((base.tags as { name: string }[]) ?? []).map(t => t.name));
	const servers = [{ url: "/", description: `API ${version}: the path carries its version` }];
	for (const [path, item] of Object.entries(other.paths as Record<string, Record<string, Schema>>)) {
		const operations = Object.fromEntries(
			Object.entries(item).map(([method, op]) => {
				const versioned = (op.tags as string[]).map(t => `${version} ${t}`);
				versioned.forEach(t => tags.add(t));
				const responses = Object.fromEntries(
					Object.entries(op.responses as Record<string, Schema>).map(([status, response]) => [status, withPrefixedLinks(response, version)]),
				);
				return [method, { ...op, operationId: `${version}_${String(op.operationId)}`, tags: versioned, servers, responses }];
			}),
		);
		paths[root + path] = operations;
	}
	// The named schemas of both, each once (a name both use must be the same schema).
	const schemas = { ...((base.components as Schema).schemas as Record<string, Schema>) };
	for (const [name, schema] of Object.entries((other.components as Schema).schemas as Record<string, Schema>)) {
		if (schemas[name] && JSON.stringify(schemas[name]) !== JSON.stringify(schema)) throw new Error(`two different schemas are named ${name}`);
		schemas[name] = schema;
	}
	return {
		...base,
		tags: [...tags].sort().map(name => ({ name })),
		paths: Object.fromEntries(Object.entries(paths).sort(([a], [b]) => a.localeCompare(b))),
		components: { ...(base.components as Schema), schemas },
	};
}
