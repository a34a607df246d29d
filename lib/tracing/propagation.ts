/**
 * Trace context and correlation id across processes (docs/operations.md#traces): W3C `traceparent`
 * in an action call's meta and in a channel message's headers, the correlation id beside it in
 * `x-request-id` (an action call carries it as its request id already).
 */
import { ROOT_CONTEXT, trace, type Context, type TextMapGetter } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { correlationIdOf, withCorrelationId } from "./correlation";

const REQUEST_ID_HEADER = "x-request-id";
export const TRACEPARENT = "traceparent";

const w3c = new W3CTraceContextPropagator();

type Carrier = Record<string, unknown>;

/** Header names as the carrier spells them (NATS keeps a header's case): looked up without case. */
const getter: TextMapGetter<Carrier> = {
	keys: carrier => Object.keys(carrier),
	get(carrier, key) {
		const found = Object.keys(carrier).find(k => k.toLowerCase() === key);
		const value = found === undefined ? undefined : carrier[found];
		return typeof value === "string" ? value : undefined;
	},
};

/** The `traceparent` of a context's span, when it has one. */
export function traceparentOf(ctx: Context): string | undefined {
	if (!trace.getSpanContext(ctx)) return undefined;
	const carrier: Record<string, string> = {};
	w3c.inject(ctx, carrier, { set: (c: Record<string, string>, k: string, v: string) => (c[k] = v) });
	return carrier[TRACEPARENT];
}

/** Headers for a message sent from `ctx`: its trace context and its correlation id. */
export function messageHeaders(ctx: Context): Record<string, string> {
	const headers: Record<string, string> = {};
	const traceparent = traceparentOf(ctx);
	if (traceparent) headers[TRACEPARENT] = traceparent;
	const id = correlationIdOf(ctx);
	if (id) headers[REQUEST_ID_HEADER] = id;
	return headers;
}

/** The context a message's (or a call's) carrier names: its remote parent span and its correlation id, on `base`. */
export function contextFrom(carrier: Carrier | null | undefined, base: Context = ROOT_CONTEXT): Context {
	if (!carrier) return base;
	const withParent = getter.get(carrier, TRACEPARENT) ? w3c.extract(base, carrier, getter) : base;
	const id = getter.get(carrier, REQUEST_ID_HEADER);
	return withCorrelationId(withParent, typeof id === "string" ? id : undefined);
}
