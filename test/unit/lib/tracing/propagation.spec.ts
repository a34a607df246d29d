import { ROOT_CONTEXT, TraceFlags, trace } from "@opentelemetry/api";
import { correlationIdOf, withCorrelationId } from "../../../../lib/tracing/correlation";
import { contextFrom, messageHeaders, traceparentOf } from "../../../../lib/tracing/propagation";

const spanContext = { traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "b7ad6b7169203331", traceFlags: TraceFlags.SAMPLED };
const withSpan = trace.setSpanContext(ROOT_CONTEXT, spanContext);

describe("messageHeaders", () => {
	it("carries the span's traceparent and the correlation id", () => {
		expect(messageHeaders(withCorrelationId(withSpan, "req-7"))).toEqual({
			traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
			"x-request-id": "req-7",
		});
	});

	it("carries only what there is: nothing from an empty context", () => {
		expect(messageHeaders(ROOT_CONTEXT)).toEqual({});
		expect(messageHeaders(withCorrelationId(ROOT_CONTEXT, "req-7"))).toEqual({ "x-request-id": "req-7" });
		expect(traceparentOf(ROOT_CONTEXT)).toBeUndefined();
	});
});

describe("contextFrom", () => {
	it("reads back what messageHeaders wrote, as a remote parent", () => {
		const ctx = contextFrom(messageHeaders(withCorrelationId(withSpan, "req-7")));
		expect(trace.getSpanContext(ctx)).toEqual({ ...spanContext, isRemote: true });
		expect(correlationIdOf(ctx)).toBe("req-7");
	});

	it("finds the headers whatever their case (NATS keeps the sender's)", () => {
		const ctx = contextFrom({ Traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "X-Request-Id": "req-8" });
		expect([trace.getSpanContext(ctx)?.spanId, correlationIdOf(ctx)]).toEqual(["b7ad6b7169203331", "req-8"]);
	});

	it("ignores a malformed traceparent and values that are not text, and gives the base for no carrier", () => {
		const ctx = contextFrom({ traceparent: "00-zz-yy-01", "x-request-id": ["a", "b"] });
		expect([trace.getSpanContext(ctx), correlationIdOf(ctx)]).toEqual([undefined, undefined]);
		const base = withCorrelationId(ROOT_CONTEXT, "base");
		expect(contextFrom(null, base)).toBe(base);
	});
});
