/**
 * Any error that reaches the gateway, as the status and body GitLab 8.x would send.
 * Pure, so the whole mapping is unit-tested.
 */
import type { ErrorBody } from "../../lib/api/errors";

interface AnyError {
	name?: string;
	message?: string;
	code?: number | string;
	type?: string;
	status?: number;
	/** A GitLab error's `{ body, headers }`, or a validator's list of failures. */
	data?: unknown;
}

/** What lib/api/errors.ts puts in a GitLab error's data. */
function gitlabData(err: AnyError): { body: ErrorBody; headers?: Record<string, string> } | null {
	if (err?.type !== "GITLAB_API_ERROR" || typeof err.data !== "object" || err.data === null) return null;
	const data = err.data as { body?: ErrorBody; headers?: Record<string, string> };
	return data.body ? { body: data.body, headers: data.headers } : null;
}

/**
 * fastest-validator failures as Grape's parameter errors: one message per parameter (the first
 * rule it broke; `scope[2]` is `scope`), in the order they were found.
 */
function validationBody(data: unknown): ErrorBody {
	const items = Array.isArray(data) ? (data as { type?: string; field?: string }[]) : [];
	const messages = new Map<string, string>();
	for (const item of items) {
		const field = String(item.field ?? "params")
			.replace(/^params\./, "")
			.replace(/\[\d+\]$/, "");
		if (messages.has(field)) continue;
		if (item.type === "required") messages.set(field, `${field} is missing`);
		else if (item.type === "enumValue" || item.type === "equalValue") messages.set(field, `${field} does not have a valid value`);
		else messages.set(field, `${field} is invalid`);
	}
	return { error: [...messages.values()].join(", ") || "400 Bad request" };
}

const UNAVAILABLE = new Set([
	"SERVICE_NOT_FOUND",
	"SERVICE_NOT_AVAILABLE",
	"REQUEST_TIMEOUT",
	"REQUEST_SKIPPED",
	"BAD_GATEWAY",
	"QUEUE_FULL",
	"REQUEST_REJECTED",
]);
const UNAVAILABLE_NAMES = new Set([
	"BrokerDisconnectedError",
	"ServiceNotAvailableError",
	"ServiceNotFoundError",
	"RequestTimeoutError",
	"RequestSkippedError",
	"RequestRejectedError",
	"QueueIsFullError",
	"ServiceUnavailableError",
]);

export interface HttpError {
	status: number;
	body: ErrorBody;
	/** Extra response headers (Retry-After). */
	headers?: Record<string, string>;
	unexpected: boolean;
}

export function toHttpError(err: AnyError): HttpError {
	const gitlab = gitlabData(err);
	if (gitlab) return { status: Number(err.code), body: gitlab.body, headers: gitlab.headers, unexpected: false };
	if (err?.name === "ValidationError" || err?.type === "VALIDATION_ERROR") return { status: 400, body: validationBody(err.data), unexpected: false };
	// The HTTP layer's errors: a body too large, an encoding or charset not taken, a body that does not parse.
	if (err?.type === "entity.too.large" || err?.status === 413 || err?.code === 413)
		return { status: 413, body: { message: "413 Request Entity Too Large" }, unexpected: false };
	if (err?.status === 415 || err?.code === 415 || (typeof err?.type === "string" && err.type.endsWith(".unsupported")))
		return { status: 415, body: { message: "415 Unsupported Media Type" }, unexpected: false };
	if (typeof err?.type === "string" && err.type.startsWith("entity."))
		return { status: 400, body: { message: '400 (Bad request) "body" is invalid' }, unexpected: false };
	if (UNAVAILABLE.has(String(err?.type)) || UNAVAILABLE_NAMES.has(String(err?.name)) || err?.code === 503)
		return { status: 503, body: { message: "503 Service Unavailable" }, unexpected: false };
	if (err?.type === "NOT_FOUND" || err?.name === "NotFoundError") return { status: 404, body: { error: "404 Not Found" }, unexpected: false };
	if (err?.name === "UnAuthorizedError" || err?.code === 401) return { status: 401, body: { message: "401 Unauthorized" }, unexpected: false };
	if (err?.name === "ForbiddenError" || err?.code === 403) return { status: 403, body: { message: "403 Forbidden" }, unexpected: false };
	if (err?.name === "RateLimitExceededError" || err?.type === "RATE_LIMIT_EXCEEDED" || err?.code === 429)
		return { status: 429, body: { message: "429 Too Many Requests" }, unexpected: false };
	// A URIError comes of decoding what the client sent (a malformed percent-escape).
	if (err?.name === "BadRequestError" || err?.name === "URIError" || err?.code === 400)
		return { status: 400, body: { message: "400 Bad request" }, unexpected: false };
	if (err?.code === 405) return { status: 405, body: { message: "405 Method Not Allowed" }, unexpected: false };
	// Any other client error of the HTTP layer (an http-errors object with a 4xx status).
	if (typeof err?.status === "number" && err.status >= 400 && err.status < 500)
		return { status: 400, body: { message: "400 Bad request" }, unexpected: false };
	return { status: 500, body: { message: "500 Internal Server Error" }, unexpected: true };
}
