/**
 * The API description's shared parts (gateway/openapi/openapi.ts): how callers authenticate, GitLab's
 * error bodies, the pagination headers, and the refusals operations refer to by name.
 */
import { RETRY_AFTER_HEADER } from "../../lib/api/errors";
import type { OpenApiOptions } from "./types";
import { LIMIT_HEADERS } from "../edge/rate-limit";

type Schema = Record<string, unknown>;

/** GitLab 8's error bodies. */
export const ERROR_SCHEMAS: Record<string, Schema> = {
	Message: { type: "object", properties: { message: { type: "string" } }, required: ["message"] },
	ParameterError: { type: "object", properties: { error: { type: "string" } }, required: ["error"], examples: [{ error: "name is missing" }] },
	ValidationErrors: {
		type: "object",
		properties: { message: { type: "object", additionalProperties: { type: "array", items: { type: "string" } } } },
		required: ["message"],
		examples: [{ message: { color: ["must be a valid color code"] } }],
	},
};

export function components(opts: OpenApiOptions): Schema {
	const json = (schema: Schema) => ({ "application/json": { schema } });
	const message = (example: string) => json({ $ref: "#/components/schemas/Message", examples: [{ message: example }] });
	return {
		securitySchemes: {
			privateToken: { type: "apiKey", in: "header", name: "PRIVATE-TOKEN", description: "A user's private token (20 characters)." },
			privateTokenQuery: { type: "apiKey", in: "query", name: "private_token" },
			bearer: { type: "http", scheme: "bearer", description: "The private token as `Authorization: Bearer <token>`." },
			sharedSecret: { type: "apiKey", in: "header", name: "Gitlab-Shared-Secret", description: "INTERNAL_API_SECRET of the service." },
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
			RuleRefusal: {
				description:
					"Bad parameters, as BadRequest; or parameters that break a rule no schema can state, which GitLab answers 400 too: one that " +
					"depends on what is stored (a name or path already taken, a visibility above the project's, a file the snippet does not " +
					"have), one over two values (a commit's short_id begins its id; total_commits_count counts at least the commits sent), or " +
					"a value only the service makes (an SSH key that parses, a keyset cursor it issued).",
				content: json({
					oneOf: [
						{ $ref: "#/components/schemas/ParameterError" },
						{ $ref: "#/components/schemas/ValidationErrors" },
						{ $ref: "#/components/schemas/Message" },
					],
				}),
			},
			MethodNotAllowed: {
				description: "The path's routes do not take this method (GitLab's Grape answers alike); `Allow` lists those they take, as OPTIONS does.",
				headers: { Allow: { schema: { type: "string" }, description: "The path's methods: `OPTIONS, GET, HEAD, POST`" } },
				content: json({ $ref: "#/components/schemas/ParameterError", examples: [{ error: "405 Not Allowed" }] }),
			},
			Unauthorized: { description: "No token, or an unknown one.", content: message("401 Unauthorized") },
			WrongSecret: { description: "No Gitlab-Shared-Secret, or a wrong one.", content: message("401 Unauthorized") },
			Forbidden: { description: "The caller's access to the project is not enough.", content: message("403 Forbidden") },
			NotFound: {
				description:
					"No such project or record, or one the caller may not see (`message`); or no route for the path, " +
					"as when a parameter's value cuts it short (`error`: `404 Not Found`).",
				content: json({
					oneOf: [{ $ref: "#/components/schemas/Message" }, { $ref: "#/components/schemas/ParameterError" }],
					examples: [{ message: "404 Project Not Found" }],
				}),
			},
			InternalOffOrNotFound: {
				description: "The internal API is off (INTERNAL_API_SECRET unset), or no such record.",
				content: message("404 Not Found"),
			},
			HeadTooLarge: {
				description: "The request line and headers are longer than the server reads.",
				content: message("431 Request Header Fields Too Large"),
			},
			KeysetUnsupported: {
				description: "Keyset pages are offered for `order_by=id` only (GitLab's answer for any other order).",
				content: message("Keyset pagination is not yet available for this type of request"),
			},
			NotModified: { description: "Nothing changed (already subscribed, or not subscribed)." },
			TooLarge: { description: "The body is larger than the gateway accepts.", content: message("413 Request Entity Too Large") },
			UnsupportedType: {
				description: "A body in an encoding or a charset the gateway does not take.",
				content: message("415 Unsupported Media Type"),
			},
			Conflict: {
				description: "It exists already, or it was changed by another request meanwhile, again and again (try again).",
				content: message("Label already exists"),
			},
			Unprocessable: { description: "A value the model does not know.", content: message("Access level is not known") },
			RateLimited: {
				description:
					(opts.rateLimitPerMinute > 0
						? `More than ${opts.rateLimitPerMinute} requests in a minute from one token (or, without one, one address). `
						: "") + "Signing in and making users also meet it after too many failed sign-ins, or with too many passwords waiting to be hashed.",
				headers: Object.fromEntries([...LIMIT_HEADERS, RETRY_AFTER_HEADER].map(h => [h, { schema: { type: "string" } }])),
				content: message("429 Too Many Requests"),
			},
			SecretGuessing: {
				description: "Too many wrong Gitlab-Shared-Secret from this address within a minute (a right one is still taken).",
				headers: { [RETRY_AFTER_HEADER]: { schema: { type: "string" } } },
				content: message("429 Too Many Requests"),
			},
			Unavailable: {
				description: "The service behind the route is not reachable or did not answer in time.",
				content: message("503 Service Unavailable"),
			},
		},
	};
}
