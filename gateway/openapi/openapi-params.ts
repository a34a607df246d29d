/**
 * What one route's operation takes, in the OpenAPI document (gateway/openapi/openapi-operation.ts): its
 * path, query and body parameters from the action's `params` (gateway/openapi/openapi-rules.ts), and the
 * relations between them the action declares (`paramGroups`, lib/api/param-groups.ts) as `oneOf`,
 * `anyOf` and `not`. A member of an "exactly one" group that the path gives leaves the others out:
 * the route takes them nowhere (docs/architecture.md#the-api-document).
 */
import { groupMembers, type ParamGroup } from "../../lib/api/param-groups";
import { isOptional, objectSchema, pageSchema, ruleSchema } from "./openapi-rules";
import type { JsonSchema } from "../../presenters/json-schema";
import type { ActionDefinition, Mount } from "./types";

type Schema = Record<string, unknown>;

const BODY_METHODS = new Set(["POST", "PUT", "PATCH"]);
const PROJECT_ROUTE = /^\/projects\/:id(\/|$)/;

/** The parameters in a route's path, `:name` and `*name` (a wildcard takes slashes). */
const pathParams = (aliasPath: string) => [...aliasPath.matchAll(/[:*]([A-Za-z_][A-Za-z0-9_]*)/g)].map(m => m[1]);

/** How a route's parameters travel: in its path, and the rest in the query or the body. */
export function paramsShape(how: Mount, method: string, aliasPath: string, action: ActionDefinition | undefined, takes?: JsonSchema) {
	const params = action?.params ?? {};
	const inPath = pathParams(aliasPath);
	// What a route's own code reads (`takes`) is the whole of its input beside its path.
	const declared = (takes ? Object.keys((takes.properties as object | undefined) ?? {}) : Object.keys(params)).filter(
		p => !p.startsWith("$$") && !inPath.includes(p),
	);
	const { groups, leftOut } = groupsBeside(action?.paramGroups ?? [], inPath);
	const rest = declared.filter(p => !leftOut.has(p));
	return {
		params,
		takes,
		inPath,
		rest,
		groups,
		hasBody: BODY_METHODS.has(method) && how.body !== "none",
		isProject: PROJECT_ROUTE.test(aliasPath) && how.security === "token",
		paginated: rest.includes("page") && rest.includes("per_page"),
	};
}

export type ParamsShape = ReturnType<typeof paramsShape>;

/**
 * The groups a route states beside its path: one the path settles goes (an "exactly one" or
 * "mutually exclusive" one leaving its other members out), the others stay as they are.
 */
function groupsBeside(all: readonly ParamGroup[], inPath: string[]) {
	const groups: ParamGroup[] = [];
	const leftOut = new Set<string>();
	for (const group of all) {
		const members = groupMembers(group);
		const given = members.filter(m => inPath.includes(m));
		if (!given.length || "jointly" in group) groups.push(group);
		else if (!("atLeastOneOf" in group)) for (const m of members) if (!given.includes(m)) leftOut.add(m);
	}
	return { groups, leftOut };
}

/** A member that counts as sent: present, and not null where null counts as absent. */
function present(group: ParamGroup, name: string): Schema {
	return group.nullIsAbsent ? { required: [name], properties: { [name]: { not: { type: "null" } } } } : { required: [name] };
}

/** One group as JSON Schema over the object of its members. */
function groupSchema(group: ParamGroup): Schema {
	if ("jointly" in group) return { ...group.schema };
	const members = groupMembers(group);
	if ("exactlyOneOf" in group) return { oneOf: members.map(m => present(group, m)) };
	if ("atLeastOneOf" in group) return { anyOf: members.map(m => present(group, m)) };
	const pairs = members.flatMap((a, i) => members.slice(i + 1).map(b => [a, b]));
	const both = (a: string, b: string): Schema => ({ allOf: [present(group, a), present(group, b)] });
	return { not: pairs.length === 1 ? both(pairs[0][0], pairs[0][1]) : { anyOf: pairs.map(([a, b]) => both(a, b)) } };
}

/** Several groups at once. */
function groupsSchema(groups: readonly ParamGroup[]): Schema {
	if (groups.length === 0) return {};
	return groups.length === 1 ? groupSchema(groups[0]) : { allOf: groups.map(groupSchema) };
}

const projectIdNote = { description: "The project's number, or its URL-encoded `namespace/path` (`root%2Fdemo`)." };

export function parametersOf(how: Mount, shape: ParamsShape): Schema[] {
	const { params, inPath, rest, hasBody, isProject, paginated, groups, takes } = shape;
	const parameters: Schema[] = inPath.map(p => ({
		name: p,
		in: "path",
		required: true,
		schema: p in params ? ruleSchema(params[p]) : { type: "string" },
		...(p === "id" && isProject ? projectIdNote : {}),
	}));
	// GitLab clients send parameters in the query string as readily as in the body; both are merged.
	if (hasBody && how.body !== "stream") return parameters;
	const grouped = new Set(groups.flatMap(g => groupMembers(g)));
	const taken = (takes?.properties ?? {}) as Record<string, Schema>;
	const takenRequired = (takes?.required ?? []) as string[];
	for (const p of rest)
		if (p in taken) parameters.push({ name: p, in: "query", required: takenRequired.includes(p), schema: taken[p] });
		else if (!grouped.has(p))
			parameters.push({ name: p, in: "query", required: !isOptional(params[p]), schema: paginated ? pageSchema(p, params[p]) : ruleSchema(params[p]) });
	// Related parameters in the query: one object of them, each its own `name=value` (form, exploded).
	if (grouped.size) {
		const names = [...grouped];
		const object = objectSchema(Object.fromEntries(names.map(n => [n, params[n]])));
		parameters.push({
			name: names.join("_"),
			in: "query",
			required: groups.some(g => "exactlyOneOf" in g || "atLeastOneOf" in g),
			style: "form",
			explode: true,
			schema: { type: "object", ...object, additionalProperties: false, ...groupsSchema(groups) },
		});
	}
	return parameters;
}

/** A JSON body that is not an object: it names no parameter (docs/api.md#request-bodies). */
const NAMES_NO_PARAMETER: Schema = { type: ["array", "string", "number", "boolean", "null"], description: "Names no parameter: taken as an empty body." };

export function requestBodyOf(how: Mount, { params, takes, inPath, rest, hasBody, groups }: ParamsShape): Schema | undefined {
	if (!hasBody) return undefined;
	// No bytes are an empty file.
	if (how.body === "stream") return { required: false, description: "The raw bytes, streamed.", content: { "application/octet-stream": {} } };
	// An action that takes nothing but its path reads no body (a cancel, an enable).
	if (!rest.length) return undefined;
	const fields = Object.fromEntries(rest.map(p => [p, params[p]]));
	// The fields the route reads, and no other: GitLab ignores any other (docs/api.md#request-bodies).
	const fieldsSchema: Schema = takes
		? { ...takes }
		: { type: "object", ...objectSchema(fields, inPath), additionalProperties: false, ...groupsSchema(groups) };
	const required = takes ? ((takes.required as string[] | undefined) ?? []).length > 0 : rest.some(p => !isOptional(params[p]));
	const groupRequires = (g: ParamGroup) => "exactlyOneOf" in g || "atLeastOneOf" in g || ("jointly" in g && Array.isArray(g.schema.required));
	const needsFields = required || groups.some(groupRequires);
	// A JSON value that is no object names no parameter (Grape's reading): where the route needs none,
	// it is taken as an empty body; where it needs some, it is refused as one would be.
	const schema: Schema = needsFields ? fieldsSchema : { anyOf: [fieldsSchema, NAMES_NO_PARAMETER] };
	// JSON: the routes take forms too (docs/api.md#request-bodies), whose fields are text a schema of
	// JSON values does not describe. A text/plain body is the `text` parameter (a trace's chunk).
	const content: Record<string, Schema> = {
		"application/json": { schema },
		...(rest.includes("text") ? { "text/plain": { schema: { type: "string", minLength: 1 } } } : {}),
	};
	return { required: needsFields, content };
}
