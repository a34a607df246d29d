/**
 * The correlation id of the request or delivery under way (docs/operations.md#correlation-ids): the
 * request's X-Request-Id (named once, by gateway/server/request-id.ts), carried in the active
 * OpenTelemetry context so that every log line written while it is handled can name it, across
 * processes (in an action call's request id and in a channel message's headers).
 */
import { context, createContextKey, type Context } from "@opentelemetry/api";

const CORRELATION_ID = createContextKey("gitlab.correlation_id");

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
