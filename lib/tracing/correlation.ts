/**
 * The correlation id of the request or delivery under way (docs/operations.md#correlation-ids): the
 * request's X-Request-Id, carried in the active OpenTelemetry context so that every log line
 * written while it is handled can name it, across processes (in an action call's request id and
 * in a channel message's headers).
 */
import { context, createContextKey, type Context } from "@opentelemetry/api";
import type { IncomingHttpHeaders } from "http";

const CORRELATION_ID = createContextKey("gitlab.correlation_id");

/** A request id a client may choose: printable ASCII without spaces, at most this long (else a new one is made). */
export const MAX_REQUEST_ID_LENGTH = 128;
const ACCEPTED_ID = new RegExp(`^[\\x21-\\x7e]{1,${MAX_REQUEST_ID_LENGTH}}$`);

/** The correlation id of what this async flow handles, if any. */
export function correlationId(): string | undefined {
	return context.active().getValue(CORRELATION_ID) as string | undefined;
}

/** `parent` with this correlation id (unchanged without one). */
export function withCorrelationId(parent: Context, id: string | null | undefined): Context {
	return id ? parent.setValue(CORRELATION_ID, id) : parent;
}

/** The correlation id a context carries. */
export function correlationIdOf(ctx: Context): string | undefined {
	return ctx.getValue(CORRELATION_ID) as string | undefined;
}

/**
 * The id a request is known by, chosen once at the edge: X-Correlation-ID, else X-Request-ID (as
 * moleculer-web reads them), when it is a sane id; otherwise a new one.
 */
export function requestIdOf(headers: IncomingHttpHeaders, newId: () => string): string {
	const given = headers["x-correlation-id"] || headers["x-request-id"];
	return typeof given === "string" && ACCEPTED_ID.test(given) ? given : newId();
}
