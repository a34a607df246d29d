/**
 * One route's operation in the OpenAPI document (gateway/openapi/openapi.ts builds the document from them),
 * in phases: what the route takes (parameters, request body), what it answers (responses), and the
 * notes a reader needs (docs/architecture.md#the-api-document).
 */
import { parametersOf, paramsShape, requestBodyOf } from "./openapi-params";
import { operationSummary } from "./openapi-summaries";
import type { NamedSchemas } from "./named-schemas";
import type { ActionDefinition, Mount, OpenApiOptions } from "./types";
import type { JsonSchema } from "../../presenters/json-schema";
import type { Answers } from "../routes/answers";
import type { AliasTarget, RouteKind } from "../routes/types";

const ACCESS_LEVELS: Record<number, string> = { 10: "guest", 20: "reporter", 30: "developer", 40: "master", 50: "owner" };

type Schema = Record<string, unknown>;

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

interface OperationInput {
	kind: RouteKind;
	how: Mount;
	method: string;
	aliasPath: string;
	fullPath: string;
	name: string | null;
	action: ActionDefinition | undefined;
	target: AliasTarget;
	tag: string;
	/** What the route's table declares it answers (none: a general success). */
	answers: Answers | undefined;
	/** What it takes, where its action reads its input itself (gateway/routes/types.ts). */
	takes: JsonSchema | undefined;
	named: NamedSchemas;
	opts: OpenApiOptions;
}

/** What every phase reads of the route: its action's parameters, split by where they travel. */
function routeShape({ how, method, aliasPath, action, target, takes }: OperationInput) {
	const shape = paramsShape(how, method, aliasPath, action, takes);
	// A function serving a file (a download); one that takes a body describes it like an action.
	return { ...shape, isFunction: typeof target === "function" && !shape.hasBody };
}

type RouteShape = ReturnType<typeof routeShape>;

const PAGE_HEADERS = ["X-Total", "X-Total-Pages", "X-Per-Page", "X-Page", "X-Next-Page", "X-Prev-Page", "Link"];

const SUCCESS: Record<number, string> = { 200: "Success.", 201: "Created.", 202: "Accepted: done later.", 204: "Done: no content." };

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
			...(answer.schema ? { content: { [type]: { schema: named.use(answer.schema) } } } : {}),
		};
	}
	return out;
}

/** The general success (unless the route declares its own), the refusals any such route can give, then the declared answers. */
function responsesOf(input: OperationInput, shape: RouteShape, parameters: Schema[], requestBody: Schema | undefined): Record<string, unknown> {
	const { kind, how, action, answers, named, opts } = input;
	const { rest, inPath, isProject, paginated, isFunction } = shape;
	const pageHeaders = paginated ? Object.fromEntries(PAGE_HEADERS.map(h => [h, { $ref: `#/components/headers/${h}` }])) : undefined;
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
	// Wrong shared secrets are limited per address whatever the request limit (gateway/edge/rate-limit.ts).
	if (how.security === "secret") responses["429"] = ref(opts.rateLimitPerMinute > 0 ? "RateLimited" : "SecretGuessing");
	if (kind !== "docs") responses["503"] = ref("Unavailable");
	if (answers) Object.assign(responses, declared(answers, named, pageHeaders));
	return responses;
}

/** What a reader of the operation needs that its schema does not say. */
function notesOf({ name, action }: OperationInput, { isFunction, paginated }: RouteShape): string[] {
	const notes: string[] = [];
	if (name && !action) notes.push("No node of the cluster offered this action when the document was generated: only its path parameters are shown.");
	if (action?.auth === "optional") notes.push("Without a token it answers for public projects (and their public records) only.");
	if (typeof action?.access === "number") notes.push(`Needs ${ACCESS_LEVELS[action.access] ?? `level ${action.access}`} access to the project or more.`);
	if (isFunction) notes.push("A file, streamed by the gateway.");
	if (paginated) notes.push("A page of the list: `page` (from 1) and `per_page`, with the pagination headers.");
	return notes;
}

/** An alias function's own details (`fn.openapi`) over the generated ones. */
function withOwnDetails(op: Schema, target: AliasTarget, isFunction: boolean): Schema {
	const extra = isFunction ? (target as DescribedFunction).openapi : undefined;
	if (!extra) return op;
	const merged: Schema = { ...op, ...extra };
	// Its own responses replace the general success, and keep the errors.
	if (extra.responses) {
		const errors = Object.fromEntries(Object.entries(op.responses as Schema).filter(([status]) => status !== "2XX"));
		merged.responses = { ...(extra.responses as Schema), ...errors };
	}
	return merged;
}

export function operation(input: OperationInput): Schema {
	const { how, method, aliasPath, fullPath, name, action, target, tag } = input;
	const shape = routeShape(input);
	const parameters = parametersOf(how, shape);
	const requestBody = requestBodyOf(how, shape);
	const responses = responsesOf(input, shape, parameters, requestBody);
	const notes = notesOf(input, shape);
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
	return withOwnDetails(op, target, shape.isFunction);
}
