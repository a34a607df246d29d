/**
 * How the operations of the OpenAPI document relate (gateway/openapi/openapi.ts builds it):
 * - a literal path that a template route answers too (`GET …/artifacts/*artifact_path` answers
 *   `…/artifacts/keep`; `GET …/services/:slug` answers `…/services/jira`): OpenAPI describes a URL
 *   by its most literal path, so that path lists the template's operation as well;
 * - links from an operation that creates a record to the operations on it (create → read, edit,
 *   delete, and what lies under it), the record's id taken from the create's answer, for clients
 *   and for Schemathesis's stateful phase (docs/architecture.md#the-api-document).
 */
import type { JsonSchema } from "../../presenters/json-schema";

type Schema = Record<string, unknown>;
type Paths = Record<string, Record<string, Schema>>;

/** A route as the document has placed it: its method and full alias path (`/internal/builds/:build_id`). */
export interface Placed {
	method: string;
	fullPath: string;
}

/** An alias path as an OpenAPI path template: `:name` and the wildcard `*name` are `{name}`. */
export const openApiPath = (aliasPath: string) => aliasPath.replace(/[:*]([A-Za-z_][A-Za-z0-9_]*)/g, "{$1}");

/** The regular expression of an alias path, as moleculer-web matches it: `:name` one segment, `*name` any. */
function aliasPattern(fullPath: string): RegExp {
	const parts = fullPath.split(/([:*][A-Za-z_][A-Za-z0-9_]*)/).map(part => {
		if (part.startsWith(":")) return "[^/]+";
		if (part.startsWith("*")) return ".+";
		return part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
	});
	return new RegExp(`^${parts.join("")}$`);
}

/** Whether `narrow` has a literal segment where `wide` has a parameter. */
function literalWhereParameter(wide: string, narrow: string): boolean {
	const [w, n] = [wide.split("/"), narrow.split("/")];
	return w.some((segment, i) => /^[:*]/.test(segment) && n[i] !== undefined && !/^[:*]/.test(n[i]));
}

/** A path's segments that are literal where the template has a parameter: the template answers it too. */
export function addOverlaps(paths: Paths, placed: Placed[]): void {
	for (const wide of placed.filter(r => /[:*]/.test(r.fullPath))) {
		const matches = aliasPattern(wide.fullPath);
		const method = wide.method.toLowerCase();
		const op = paths[openApiPath(wide.fullPath)][method];
		for (const narrow of placed) {
			const item = paths[openApiPath(narrow.fullPath)];
			if (narrow.fullPath === wide.fullPath || item[method] || !literalWhereParameter(wide.fullPath, narrow.fullPath)) continue;
			// Each of the narrow path's own parameters stands for any value: only a literal of it can meet a template's parameter.
			if (!matches.test(narrow.fullPath.replace(/[:*][A-Za-z_][A-Za-z0-9_]*/g, "\u0000"))) continue;
			const kept = new Set([...narrow.fullPath.matchAll(/[:*]([A-Za-z_][A-Za-z0-9_]*)/g)].map(m => m[1]));
			item[method] = {
				...op,
				operationId: `${String(op.operationId)}_at_${narrow.fullPath.split("/").pop()}`,
				description: `\`${wide.method} ${wide.fullPath}\`, with this path's literal segment as its value. ${describedAs(op)}`.trim(),
				parameters: (op.parameters as Schema[]).filter(p => p.in !== "path" || kept.has(String(p.name))),
			};
		}
	}
}

/** An operation that answers a record it made, with the schema of that answer. */
export interface Create {
	path: string;
	method: string;
	status: string;
	schema: JsonSchema;
}

/** The create of a route, when it is one: a POST whose declared success is an object (the record). */
export function createOf(path: string, method: string, answers: Record<string, unknown> | undefined): Create | undefined {
	if (method !== "POST" || !answers) return undefined;
	for (const [status, answer] of Object.entries(answers)) {
		const schema = (answer as { schema?: JsonSchema }).schema;
		if (/^20[01]$/.test(status) && schema?.type === "object" && schema.properties) return { path, method, status, schema };
	}
	return undefined;
}

const pathParams = (path: string) => [...path.matchAll(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map(m => m[1]);

/**
 * Links from each create's success to the operations on what it made: those under its path and one
 * parameter more (`POST /projects/{id}/labels` → `…/labels/{label_id}`, `…/labels/{label_id}/subscribe`;
 * `POST /projects` → everything under `/projects/{id}` that needs nothing else), that parameter
 * from the answer (the property of its name, else `id`), the others as the create's request had them.
 * A read two segments or more below the record is of a record of its own, which may not exist yet
 * (an integration never set, the latest pipeline of a project without one): it is not linked, as a
 * link says the read finds what the create made.
 */
export function addLinks(paths: Paths, creates: Create[]): void {
	for (const create of creates) {
		const own = pathParams(create.path);
		const links: Record<string, Schema> = {};
		for (const [path, item] of Object.entries(paths)) {
			const rest = path.slice(create.path.length);
			const next = /^\/\{([A-Za-z_][A-Za-z0-9_]*)\}(\/|$)/.exec(rest);
			if (!path.startsWith(create.path) || !next) continue;
			const param = next[1];
			if (pathParams(path).some(p => p !== param && !own.includes(p))) continue;
			const properties = create.schema.properties as Record<string, unknown>;
			const from = param in properties ? param : "id";
			if (!(from in properties)) continue;
			const below = rest.slice(next[0].length).split("/").filter(Boolean).length;
			for (const [method, op] of Object.entries(item)) {
				if (method === "get" && below > 1) continue;
				const id = String(op.operationId);
				links[id] = {
					operationId: id,
					parameters: { ...Object.fromEntries(own.map(p => [p, `$request.path.${p}`])), [param]: `$response.body#/${from}` },
					description: `${method.toUpperCase()} ${path} on what this made.`,
				};
			}
		}
		const response = paths[create.path][create.method.toLowerCase()].responses as Record<string, Schema>;
		if (Object.keys(links).length) response[create.status] = { ...response[create.status], links };
	}
}

const describedAs = (op: Schema): string => (typeof op.description === "string" ? op.description : "");
