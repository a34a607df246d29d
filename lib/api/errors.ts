/**
 * GitLab 8.x error bodies as Moleculer errors. The body travels in `data.body` so that it
 * survives the transporter; the gateway writes it out unchanged with the error's code.
 */
import { Errors } from "moleculer";

export type ErrorBody = { message: string | Record<string, string[]> } | { error: string };

export class ApiError extends Errors.MoleculerClientError {
	/** `headers`: response headers the answer needs (Retry-After on a 429). */
	constructor(code: number, body: ErrorBody, headers?: Record<string, string>) {
		const text = "message" in body ? (typeof body.message === "string" ? body.message : JSON.stringify(body.message)) : body.error;
		super(text, code, "GITLAB_API_ERROR", headers ? { body, headers } : { body });
	}
}

/** `404 Label Not Found`; without a resource, `404 Not Found`. */
export const notFound = (resource?: string) => new ApiError(404, { message: resource ? `404 ${resource} Not Found` : "404 Not Found" });
/** No such route, as Grape answers it (`{"error":"404 Not Found"}`): for a path only some values of which are routes (v4's PUT of an integration). */
export const routeNotFound = () => new ApiError(404, { error: "404 Not Found" });
/** ActiveRecord::RecordNotFound from a `.find`: `404 Not found`, lower-case "found" (GitLab 8). */
export const recordNotFound = () => new ApiError(404, { message: "404 Not found" });
/** A path's routes do not take the request's method: Grape's answer, with the methods they take in `Allow`. */
export const methodNotAllowed = (allow: string) => new ApiError(405, { error: "405 Not Allowed" }, { Allow: allow });
export const unauthorized = () => new ApiError(401, { message: "401 Unauthorized" });
/** `403 Forbidden`, or `403 Forbidden  - reason` (two spaces, as GitLab joins them). */
export const forbidden = (reason?: string) => new ApiError(403, { message: reason ? `403 Forbidden  - ${reason}` : "403 Forbidden" });
export const conflict = (message: string) => new ApiError(409, { message });
export const badRequest = (message = "400 Bad Request") => new ApiError(400, { message });
/** Grape parameter errors: `{"error":"name is missing"}`. */
export const paramError = (error: string) => new ApiError(400, { error });
export const missing = (...params: string[]) => paramError(params.map(p => `${p} is missing`).join(", "));
export const invalidValue = (param: string) => paramError(`${param} does not have a valid value`);
/** Model validation errors: `{"message":{"color":["must be a valid color code"]}}`. */
export const validation = (errors: Record<string, string[]>) => new ApiError(400, { message: errors });
/** `render_api_error!(message, 422)`: `{"message":"Access level is not known"}`. */
export const unprocessable = (message: string) => new ApiError(422, { message });
export const tooLarge = () => new ApiError(413, { message: "413 Request Entity Too Large" });
export const requestTimeout = () => new ApiError(408, { message: "408 Request Timeout" });
/** An `Expect` other than `100-continue`, which no route meets. */
export const expectationFailed = () => new ApiError(417, { message: "417 Expectation Failed" });
export const RETRY_AFTER_HEADER = "Retry-After";
/** `429 Too Many Requests`, with Retry-After in whole seconds (at least 1). */
export const tooManyRequests = (retryAfterMs: number) =>
	new ApiError(429, { message: "429 Too Many Requests" }, { [RETRY_AFTER_HEADER]: String(Math.max(1, Math.ceil(retryAfterMs / 1000))) });
export const unavailable = () => new ApiError(503, { message: "503 Service Unavailable" });
