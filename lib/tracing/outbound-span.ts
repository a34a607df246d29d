/**
 * One span per outbound call a worker makes (docs/operations.md#traces): HTTP to the task tracker,
 * an SMTP send, an IRC send. It records where the call went and what became of the delivery,
 * never what was sent nor any credential.
 */
import { SpanKind, SpanStatusCode, context, trace, type Attributes } from "@opentelemetry/api";
import { PermanentError } from "../outbound/errors";
import { ATTR, type DeliveryOutcome } from "./attributes";
import { recording, tracer } from "./telemetry";

/** What a settled call adds to its span: attributes, and the outcome when the answer decides it (an HTTP status). */
interface CallResult {
	attributes?: Attributes;
	outcome?: DeliveryOutcome;
}

/** The outcome of a call that threw: a PermanentError is refused for good, anything else is retried. */
export function outcomeOfError(err: unknown): DeliveryOutcome {
	return err instanceof PermanentError ? "refused" : "failed";
}

/** What a settled call adds to its span: from its result, or from the error it threw. */
export type Describe<T> = (result: T | undefined, err?: unknown) => CallResult;

/** Runs `call` inside a CLIENT span named `name`, when the delivery's trace is sampled. */
export async function outboundCall<T>(name: string, attributes: Attributes, call: () => Promise<T>, describe?: Describe<T>): Promise<T> {
	if (!recording(context.active())) return call();
	const span = tracer().startSpan(name, { kind: SpanKind.CLIENT, attributes });
	try {
		const result = await context.with(trace.setSpan(context.active(), span), call);
		const described = describe?.(result) ?? {};
		if (described.attributes) span.setAttributes(described.attributes);
		const outcome = described.outcome ?? "delivered";
		span.setAttribute(ATTR.deliveryOutcome, outcome);
		if (outcome !== "delivered") span.setStatus({ code: SpanStatusCode.ERROR });
		return result;
	} catch (err) {
		const described = describe?.(undefined, err) ?? {};
		if (described.attributes) span.setAttributes(described.attributes);
		span.setAttribute(ATTR.deliveryOutcome, outcomeOfError(err));
		span.setAttribute(ATTR.errorType, (err as Error)?.name ?? "Error");
		span.setStatus({ code: SpanStatusCode.ERROR, message: String((err as Error)?.message ?? err).slice(0, 200) });
		throw err;
	} finally {
		span.end();
	}
}
