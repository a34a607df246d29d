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
import { isOptional, objectSchema, pageSchema, ruleSchema } from "./openapi-rules";
import { operationSummary } from "./openapi-summaries";
import type { JsonSchema } from "../presenters/json-schema";
import type { Answers } from "./routes/answers";
import type { AliasTarget, RouteKind, RouteTable } from "./routes/types";

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
const KINDS: Record<RouteKind, { prefix: string; security: "token" | "secret" | "none"; body: "parsed" | "text" | "stream" | "none" }> = {
	api: { prefix: "", security: "token", body: "parsed" },
	internal: { prefix: "/internal", security: "secret", body: "text" },
	internalStream: { prefix: "/internal", security: "secret", body: "stream" },
	docs: { prefix: "", security: "none", body: "none" },
};

const PROJECT_ROUTE = /^\/projects\/:id(\/|$)/;
const BODY_METHODS = new Set(["POST", "PUT", "PATCH"]);
const ACCESS_LEVELS: Record<number, string> = { 10: "guest", 20: "reporter", 30: "developer", 40: "master", 50: "owner" };

type Schema = Record<string, unknown>;

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

/**
 * The document's named schemas: a schema with a `title` is kept once in `components.schemas` and
 * referred to by `$ref`, wherever it appears; two different schemas may not share a title.
 */
class NamedSchemas {
	readonly schemas: Record<string, Schema> = {};

	use(schema: JsonSchema): Schema {
		const { title } = schema;
		const inner = this.within(schema);
		if (typeof title !== "string") return inner;
		const known = this.schemas[title];
		if (known && JSON.stringify(known) !== JSON.stringify(inner)) throw new Error(`two different schemas are named ${title}`);
		this.schemas[title] = inner;
		return { $ref: `#/components/schemas/${title}` };
	}

	/** The schema with the schemas it holds named in turn. */
	private within(schema: JsonSchema): Schema {
		const out: Schema = { ...schema };
		if (schema.properties)
			out.properties = Object.fromEntries(Object.entries(schema.properties as Record<string, JsonSchema>).map(([k, v]) => [k, this.use(v)]));
		if (schema.items) out.items = this.use(schema.items as JsonSchema);
		if (typeof schema.additionalProperties === "object") out.additionalProperties = this.use(schema.additionalProperties as JsonSchema);
		for (const list of ["anyOf", "oneOf", "allOf"] as const)
			if (Array.isArray(schema[list])) out[list] = (schema[list] as JsonSchema[]).map(s => this.use(s));
		return out;
	}
}

export function buildOpenApi(tables: RouteTable[], opts: OpenApiOptions): Schema {
	const paths: Record<string, Record<string, Schema>> = {};
	const tags = new Set<string>();
	const named = new NamedSchemas();
	for (const table of tables) {
		const defaultTag = tableTag(table);
		const unused = new Set(Object.keys(table.answers ?? {}));
		for (const [kind, how] of Object.entries(KINDS) as [RouteKind, (typeof KINDS)[RouteKind]][]) {
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
				const answers = table.answers?.[alias];
				paths[openApiPath(fullPath)][method.toLowerCase()] = operation({
					kind,
					how,
					method,
					aliasPath,
					fullPath,
					name,
					action,
					target,
					tag,
					answers,
					named,
					opts,
				});
			}
		}
		if (unused.size) throw new Error(`answers declared for aliases that are not routed: ${[...unused].join(", ")}`);
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
		components: { ...components(opts), schemas: { ...named.schemas, ...ERROR_SCHEMAS } },
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
	kind: RouteKind;
	how: (typeof KINDS)[RouteKind];
	method: string;
	aliasPath: string;
	fullPath: string;
	name: string | null;
	action: ActionDefinition | undefined;
	target: AliasTarget;
	tag: string;
	/** What the route's table declares it answers (none: a general success). */
	answers: Answers | undefined;
	named: NamedSchemas;
	opts: OpenApiOptions;
}

const SUCCESS: Record<number, string> = { 200: "Success.", 201: "Created.", 202: "Accepted: done later." };

/** The declared answers: each success with its body, each refusal particular to the route by its name in the components. */
function declared(answers: Answers, named: NamedSchemas, successHeaders: Schema | undefined): Record<string, unknown> {
	const out: Record<string, unknown> = {};
	for (const [status, answer] of Object.entries(answers)) {
		if (typeof answer === "string") {
			out[status] = ref(answer);
			continue;
		}
		const type = answer.contentType ?? "application/json";
		out[status] = {
			description: SUCCESS[Number(status)] ?? "Success.",
			...(successHeaders ? { headers: successHeaders } : {}),
			content: { [type]: { schema: named.use(answer.schema) } },
		};
	}
	return out;
}

function operation(input: OperationInput): Schema {
	const { kind, how, method, aliasPath, fullPath, name, action, target, tag, answers, named, opts } = input;
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
	const pageHeaders = paginated
		? Object.fromEntries(
				["X-Total", "X-Total-Pages", "X-Per-Page", "X-Page", "X-Next-Page", "X-Prev-Page", "Link"].map(h => [h, { $ref: `#/components/headers/${h}` }]),
			)
		: undefined;
	const success: Schema = { description: "Success. A POST answers 201 as GitLab does, except where docs/api.md says otherwise." };
	if (isFunction) success.content = { "*/*": { schema: { type: "string", contentMediaType: "application/octet-stream" } } };
	if (pageHeaders) success.headers = pageHeaders;
	// A route that declares only its refusals keeps the general success.
	const declaresSuccess = answers !== undefined && Object.keys(answers).some(status => Number(status) < 400);
	const responses: Record<string, unknown> = declaresSuccess ? {} : { "2XX": success };
	// A path segment whose escapes do not decode is a 400 too (docs/architecture.md#the-guarded-entry).
	if (rest.length || requestBody || inPath.length) responses["400"] = ref("BadRequest");
	// Parameters in the URL can make the request's head longer than the server reads.
	if (parameters.length) responses["431"] = ref("HeadTooLarge");
	if (how.security !== "none") responses["401"] = ref(how.security === "secret" ? "WrongSecret" : "Unauthorized");
	if (isProject && action?.auth !== "none") responses["403"] = ref("Forbidden");
	if (inPath.length || how.security === "secret") responses["404"] = ref(how.security === "secret" ? "InternalOffOrNotFound" : "NotFound");
	if (requestBody) responses["413"] = ref("TooLarge");
	if (requestBody && how.body === "parsed") responses["415"] = ref("UnsupportedType");
	if (opts.rateLimitPerMinute > 0) responses["429"] = ref("RateLimited");
	// Wrong shared secrets are limited per address whatever the request limit (gateway/rate-limit.ts).
	if (how.security === "secret") responses["429"] = ref(opts.rateLimitPerMinute > 0 ? "RateLimited" : "SecretGuessing");
	if (kind !== "docs") responses["503"] = ref("Unavailable");
	if (answers) Object.assign(responses, declared(answers, named, pageHeaders));

	const notes: string[] = [];
	if (name && !action) notes.push("No node of the cluster offered this action when the document was generated: only its path parameters are shown.");
	if (action?.auth === "optional") notes.push("Without a token it answers for public projects (and their public records) only.");
	if (typeof action?.access === "number") notes.push(`Needs ${ACCESS_LEVELS[action.access] ?? `level ${action.access}`} access to the project or more.`);
	if (isFunction) notes.push("A file, streamed by the gateway.");
	if (paginated) notes.push("A page of the list: `page` (from 1) and `per_page`, with the pagination headers.");

	const op: Schema = {
		operationId: `${method.toLowerCase()}${fullPath.replace(/[^A-Za-z0-9]+/g, "_").replace(/_$/, "")}`,
		summary: operationSummary(method, aliasPath, name) ?? name ?? `${method} ${fullPath}`,
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
