/**
 * The OpenAPI 3.1 document of the gateway, generated from what the gateway itself runs on: its
 * route tables (gateway/routes) and the definitions of the actions behind them (fastest-validator
 * `params` and the `auth` mode, from the broker's registry). Nothing here names an endpoint, so a
 * route added to a table is described as soon as the gateway mounts it. Pure: the registry is
 * passed in as a look-up.
 *
 * What static definitions cannot tell is left general rather than guessed: the success status is
 * "2XX" (a POST answers 201 as GitLab does, with the exceptions docs/api.md lists) and response
 * bodies are not modelled; docs/api.md describes both for every endpoint.
 */
import { MAX_PER_PAGE } from "../lib/api/pagination";
import { RETRY_AFTER_HEADER } from "../lib/api/errors";
import { LIMIT_HEADERS } from "./rate-limit";
import type { AliasTarget, RouteTable } from "./routes/types";

/** What the document needs of an action definition (as the registry holds it). */
export interface ActionDefinition {
	params?: Record<string, unknown>;
	/** "none": no token needed; "optional": a token when there is one (public projects). */
	auth?: string;
	/** The least access level the action needs, where the action declares one. */
	access?: number;
}

export interface OpenApiOptions {
	/** Where the gateway mounts its routes: "/api/v3". */
	basePath: string;
	/** The action behind a name, or undefined when no node of the cluster offers it now. */
	action: (name: string) => ActionDefinition | undefined;
	/** Requests per minute and token (0: no rate limit, and no 429). */
	rateLimitPerMinute: number;
	title?: string;
}

/** How each kind of route table is mounted by the gateway (services/api.service.ts). */
const KINDS: Record<keyof RouteTable, { prefix: string; security: "token" | "secret" | "none"; body: "parsed" | "text" | "stream" | "none" }> = {
	api: { prefix: "", security: "token", body: "parsed" },
	internal: { prefix: "/internal", security: "secret", body: "text" },
	internalStream: { prefix: "/internal", security: "secret", body: "stream" },
	docs: { prefix: "", security: "none", body: "none" },
};

const PROJECT_ROUTE = /^\/projects\/:id(\/|$)/;
const BODY_METHODS = new Set(["POST", "PUT", "PATCH"]);
const ACCESS_LEVELS: Record<number, string> = { 10: "guest", 20: "reporter", 30: "developer", 40: "master", 50: "owner" };

type Schema = Record<string, unknown>;

/** A fastest-validator shorthand ("string|optional|max:20") as the object form. */
function expandShorthand(rule: string): Record<string, unknown> {
	const [type, ...flags] = rule.split("|");
	const out: Record<string, unknown> = { type: type.trim() };
	for (const flag of flags) {
		const [key, value] = flag.split(":");
		out[key.trim()] =
			value === undefined ? true : /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value === "true" ? true : value === "false" ? false : value;
	}
	return out;
}

function ruleObject(rule: unknown): Record<string, unknown> {
	if (typeof rule === "string") return expandShorthand(rule);
	if (rule && typeof rule === "object" && !Array.isArray(rule)) return rule as Record<string, unknown>;
	return { type: "any" };
}

/** Whether a parameter may be left out. */
export function isOptional(rule: unknown): boolean {
	if (Array.isArray(rule)) return rule.some(isOptional);
	const r = ruleObject(rule);
	return r.optional === true || r.default !== undefined;
}

/** One fastest-validator rule as a JSON Schema (2020-12, OpenAPI 3.1's dialect). */
export function ruleSchema(rule: unknown): Schema {
	if (Array.isArray(rule)) return { anyOf: rule.map(ruleSchema) };
	const r = ruleObject(rule);
	let s: Schema;
	switch (r.type) {
		case "string":
			s = { type: "string" };
			if (typeof r.min === "number") s.minLength = r.min;
			if (typeof r.max === "number") s.maxLength = r.max;
			if (typeof r.length === "number") s.minLength = s.maxLength = r.length;
			if (Array.isArray(r.enum)) s.enum = r.enum;
			if (r.pattern instanceof RegExp) s.pattern = r.pattern.source;
			else if (typeof r.pattern === "string") s.pattern = r.pattern;
			break;
		case "number":
			s = { type: r.integer ? "integer" : "number" };
			if (typeof r.min === "number") s.minimum = r.min;
			if (typeof r.max === "number") s.maximum = r.max;
			if (r.positive) s.exclusiveMinimum = 0;
			if (r.negative) s.exclusiveMaximum = 0;
			break;
		case "boolean":
			s = { type: "boolean" };
			break;
		case "email":
			s = { type: "string", format: "email" };
			break;
		case "url":
			s = { type: "string", format: "uri" };
			break;
		case "uuid":
			s = { type: "string", format: "uuid" };
			break;
		case "date":
			s = { type: "string", format: "date-time" };
			break;
		case "enum":
			s = { enum: Array.isArray(r.values) ? r.values : [] };
			break;
		case "equal":
			s = { const: r.value };
			break;
		case "array":
			s = { type: "array" };
			if (r.items !== undefined) s.items = ruleSchema(r.items);
			if (typeof r.min === "number") s.minItems = r.min;
			if (typeof r.max === "number") s.maxItems = r.max;
			break;
		case "object": {
			const props = (r.props ?? r.properties) as Record<string, unknown> | undefined;
			s = { type: "object" };
			if (props) Object.assign(s, objectSchema(props));
			break;
		}
		case "multi":
			s = { anyOf: Array.isArray(r.rules) ? r.rules.map(ruleSchema) : [] };
			break;
		default:
			// "any", "custom", "forbidden"…: the service checks the value itself (and answers 400).
			s = {};
	}
	if (r.convert === true && (r.type === "number" || r.type === "boolean"))
		s.description = `${r.type === "boolean" ? "true/false/1/0" : "A number"}; form fields and query strings are converted.`;
	if (r.nullable === true && typeof s.type === "string") s.type = [s.type, "null"];
	if (r.default !== undefined && typeof r.default !== "function") s.default = r.default;
	return s;
}

/** The properties of a params object (its `$$` options left out), with the required ones. */
function objectSchema(params: Record<string, unknown>, leaveOut: string[] = []): { properties: Record<string, Schema>; required?: string[] } {
	const properties: Record<string, Schema> = {};
	const required: string[] = [];
	for (const [name, rule] of Object.entries(params)) {
		if (name.startsWith("$$") || leaveOut.includes(name)) continue;
		properties[name] = ruleSchema(rule);
		if (!isOptional(rule)) required.push(name);
	}
	return required.length ? { properties, required } : { properties };
}

/** `page` and `per_page` follow the gateway's pagination contract (lib/api/pagination.ts) whatever their rule says. */
function pageSchema(name: string, rule: unknown): Schema {
	if (name === "page") return { type: "integer", minimum: 1 };
	if (name === "per_page") return { type: "integer", minimum: 1, maximum: MAX_PER_PAGE };
	return ruleSchema(rule);
}

const pathParams = (aliasPath: string) => [...aliasPath.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)].map(m => m[1]);
const openApiPath = (aliasPath: string) => aliasPath.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, "{$1}");

/** The action an alias calls: "labels.list", "stream:builds.x" → its name; an alias function → the action it names, or null. */
function actionName(target: AliasTarget): string | null {
	return typeof target === "string" ? target.replace(/^(stream|multipart):/, "") : (target.action ?? null);
}

/** Optional OpenAPI details an alias function may carry (`fn.openapi`), merged into its operation. */
type DescribedFunction = { openapi?: Schema };

const ref = (name: string) => ({ $ref: `#/components/responses/${name}` });

function securityFor(kind: "token" | "secret" | "none", auth: string | undefined): Record<string, string[]>[] {
	if (kind === "secret") return [{ sharedSecret: [] }];
	if (kind === "none" || auth === "none") return [];
	const token: Record<string, string[]>[] = [{ privateToken: [] }, { privateTokenQuery: [] }, { bearer: [] }];
	// An empty requirement: the operation also answers without a token.
	return auth === "optional" ? [{}, ...token] : token;
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
	const tags = new Set<string>();
	for (const table of tables) {
		const defaultTag = tableTag(table);
		for (const [kind, how] of Object.entries(KINDS) as [keyof RouteTable, (typeof KINDS)[keyof RouteTable]][]) {
			for (const [alias, target] of Object.entries(table[kind] ?? {})) {
				const [rawMethod, aliasPath] = alias.trim().split(/\s+/);
				const method = rawMethod.toUpperCase();
				const fullPath = how.prefix + aliasPath;
				const name = actionName(target);
				const action = name ? opts.action(name) : undefined;
				const tag = kind === "internal" || kind === "internalStream" ? "internal" : name ? name.split(".")[0] : defaultTag;
				tags.add(tag);
				paths[openApiPath(fullPath)] ??= {};
				paths[openApiPath(fullPath)][method.toLowerCase()] = operation({ kind, how, method, aliasPath, fullPath, name, action, target, tag, opts });
			}
		}
	}
	return {
		openapi: "3.1.0",
		info: {
			title: opts.title ?? "GitLab API v3 service",
			version: "v3",
			description:
				"A GitLab-compatible REST API v3 for CI builds, deploy keys, labels, integration settings and project snippets. " +
				"Generated by the gateway from its routes and the parameter schemas of the actions behind them. " +
				'Errors are GitLab 8\'s: `{"message": "404 Project Not Found"}`, `{"error": "name is missing"}`, ' +
				'`{"message": {"color": ["must be a valid color code"]}}`. Where it deliberately differs from GitLab 8.16, and what each ' +
				"endpoint answers, is in the project's docs/api.md.",
		},
		servers: [{ url: opts.basePath }],
		tags: [...tags].sort().map(name => ({ name })),
		paths: Object.fromEntries(Object.entries(paths).sort(([a], [b]) => a.localeCompare(b))),
		components: components(opts),
	};
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
				return [method, { ...op, operationId: `${version}_${String(op.operationId)}`, tags: versioned, servers }];
			}),
		);
		paths[root + path] = operations;
	}
	return {
		...base,
		tags: [...tags].sort().map(name => ({ name })),
		paths: Object.fromEntries(Object.entries(paths).sort(([a], [b]) => a.localeCompare(b))),
	};
}

interface OperationInput {
	kind: keyof RouteTable;
	how: (typeof KINDS)[keyof RouteTable];
	method: string;
	aliasPath: string;
	fullPath: string;
	name: string | null;
	action: ActionDefinition | undefined;
	target: AliasTarget;
	tag: string;
	opts: OpenApiOptions;
}

function operation(input: OperationInput): Schema {
	const { kind, how, method, aliasPath, fullPath, name, action, target, tag, opts } = input;
	const params = action?.params ?? {};
	const inPath = pathParams(aliasPath);
	const isProject = PROJECT_ROUTE.test(aliasPath) && how.security === "token";
	const parameters: Schema[] = inPath.map(p => ({
		name: p,
		in: "path",
		required: true,
		schema: p in params ? ruleSchema(params[p]) : { type: "string" },
		...(p === "id" && isProject ? { description: "The project's number, or its URL-encoded `namespace/path` (`root%2Fdemo`)." } : {}),
	}));
	const rest = Object.keys(params).filter(p => !p.startsWith("$$") && !inPath.includes(p));
	const hasBody = BODY_METHODS.has(method) && how.body !== "none";
	let requestBody: Schema | undefined;
	if (hasBody && how.body === "stream") {
		requestBody = { required: true, description: "The raw bytes, streamed.", content: { "application/octet-stream": {} } };
	} else if (hasBody) {
		const schema = { type: "object", ...objectSchema(params, inPath) };
		const content: Record<string, Schema> =
			how.body === "parsed"
				? { "application/json": { schema }, "application/x-www-form-urlencoded": { schema }, "multipart/form-data": { schema } }
				: { "application/json": { schema }, "text/plain": { schema: { type: "string" } } };
		requestBody = { required: rest.some(p => !isOptional(params[p])), content };
	}
	const paginated = rest.includes("page") && rest.includes("per_page");
	// GitLab clients send parameters in the query string as readily as in the body; both are merged.
	if (!hasBody || how.body === "stream")
		for (const p of rest)
			parameters.push({ name: p, in: "query", required: !isOptional(params[p]), schema: paginated ? pageSchema(p, params[p]) : ruleSchema(params[p]) });

	// A function serving a file (a download); one that takes a body describes it like an action.
	const isFunction = typeof target === "function" && !hasBody;
	const success: Schema = { description: "Success. A POST answers 201 as GitLab does, except where docs/api.md says otherwise." };
	if (isFunction) success.content = { "*/*": { schema: { type: "string", contentMediaType: "application/octet-stream" } } };
	if (paginated)
		success.headers = Object.fromEntries(
			["X-Total", "X-Total-Pages", "X-Per-Page", "X-Page", "X-Next-Page", "X-Prev-Page", "Link"].map(h => [h, { $ref: `#/components/headers/${h}` }]),
		);
	const responses: Record<string, unknown> = { "2XX": success };
	if (rest.length || requestBody) responses["400"] = ref("BadRequest");
	if (how.security !== "none") responses["401"] = ref(how.security === "secret" ? "WrongSecret" : "Unauthorized");
	if (isProject && action?.auth !== "none") responses["403"] = ref("Forbidden");
	if (inPath.length || how.security === "secret") responses["404"] = ref(how.security === "secret" ? "InternalOffOrNotFound" : "NotFound");
	if (requestBody) responses["413"] = ref("TooLarge");
	if (opts.rateLimitPerMinute > 0) responses["429"] = ref("RateLimited");
	if (kind !== "docs") responses["503"] = ref("Unavailable");

	const notes: string[] = [];
	if (name && !action) notes.push("No node of the cluster offered this action when the document was generated: only its path parameters are shown.");
	if (action?.auth === "optional") notes.push("Without a token it answers for public projects (and their public records) only.");
	if (typeof action?.access === "number") notes.push(`Needs ${ACCESS_LEVELS[action.access] ?? `level ${action.access}`} access to the project or more.`);
	if (isFunction) notes.push("A file, streamed by the gateway.");
	if (paginated) notes.push("A page of the list: `page` (from 1) and `per_page`, with the pagination headers.");

	const op: Schema = {
		operationId: `${method.toLowerCase()}${fullPath.replace(/[^A-Za-z0-9]+/g, "_").replace(/_$/, "")}`,
		summary: name ?? `${method} ${fullPath}`,
		...(notes.length ? { description: notes.join(" ") } : {}),
		tags: [tag],
		...(name ? { "x-moleculer-action": name } : {}),
		parameters,
		...(requestBody ? { requestBody } : {}),
		responses,
		security: securityFor(how.security, action?.auth),
	};
	const extra = isFunction ? (target as DescribedFunction).openapi : undefined;
	if (!extra) return op;
	const merged: Schema = { ...op, ...extra };
	// Its own responses replace the general success, and keep the errors.
	if (extra.responses) {
		const errors = Object.fromEntries(Object.entries(responses).filter(([status]) => status !== "2XX"));
		merged.responses = { ...(extra.responses as Schema), ...errors };
	}
	return merged;
}

function components(opts: OpenApiOptions): Schema {
	const json = (schema: Schema) => ({ "application/json": { schema } });
	const message = (example: string) => json({ $ref: "#/components/schemas/Message", examples: [{ message: example }] });
	return {
		securitySchemes: {
			privateToken: { type: "apiKey", in: "header", name: "PRIVATE-TOKEN", description: "A user's private token (20 characters)." },
			privateTokenQuery: { type: "apiKey", in: "query", name: "private_token" },
			bearer: { type: "http", scheme: "bearer", description: "The private token as `Authorization: Bearer <token>`." },
			sharedSecret: { type: "apiKey", in: "header", name: "Gitlab-Shared-Secret", description: "INTERNAL_API_SECRET of the service." },
		},
		schemas: {
			Message: { type: "object", properties: { message: { type: "string" } }, required: ["message"] },
			ParameterError: { type: "object", properties: { error: { type: "string" } }, required: ["error"], examples: [{ error: "name is missing" }] },
			ValidationErrors: {
				type: "object",
				properties: { message: { type: "object", additionalProperties: { type: "array", items: { type: "string" } } } },
				required: ["message"],
				examples: [{ message: { color: ["must be a valid color code"] } }],
			},
		},
		headers: Object.fromEntries(
			[
				["X-Total", "Items in the whole list"],
				["X-Total-Pages", "Pages in the whole list"],
				["X-Per-Page", "Items per page"],
				["X-Page", "This page's number"],
				["X-Next-Page", "The next page's number (empty on the last)"],
				["X-Prev-Page", "The previous page's number (empty on the first)"],
				["Link", "first, prev, next and last pages (RFC 8288)"],
			].map(([name, description]) => [name, { description, schema: { type: "string" } }]),
		),
		responses: {
			BadRequest: {
				description:
					"Bad parameters: a missing or invalid one (`error`), a rule of the model (`message` by field), " + "or a body that cannot be read.",
				content: json({
					oneOf: [
						{ $ref: "#/components/schemas/ParameterError" },
						{ $ref: "#/components/schemas/ValidationErrors" },
						{ $ref: "#/components/schemas/Message" },
					],
				}),
			},
			Unauthorized: { description: "No token, or an unknown one.", content: message("401 Unauthorized") },
			WrongSecret: { description: "No Gitlab-Shared-Secret, or a wrong one.", content: message("401 Unauthorized") },
			Forbidden: { description: "The caller's access to the project is not enough.", content: message("403 Forbidden") },
			NotFound: { description: "No such project or record, or one the caller may not see.", content: message("404 Project Not Found") },
			InternalOffOrNotFound: {
				description: "The internal API is off (INTERNAL_API_SECRET unset), or no such record.",
				content: message("404 Not Found"),
			},
			TooLarge: { description: "The body is larger than the gateway accepts.", content: message("413 Request Entity Too Large") },
			RateLimited: {
				description: `More than ${opts.rateLimitPerMinute} requests in a minute from one token (or, without one, one address).`,
				headers: Object.fromEntries([...LIMIT_HEADERS, RETRY_AFTER_HEADER].map(h => [h, { schema: { type: "string" } }])),
				content: message("429 Too Many Requests"),
			},
			Unavailable: {
				description: "The service behind the route is not reachable or did not answer in time.",
				content: message("503 Service Unavailable"),
			},
		},
	};
}
