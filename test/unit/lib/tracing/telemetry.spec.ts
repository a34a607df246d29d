import { ROOT_CONTEXT, SpanKind, TraceFlags, context, trace } from "@opentelemetry/api";
import { loadConfig } from "../../../../config";
import { correlationIdOf } from "../../../../lib/tracing/correlation";
import { recording, rootSampling, sampleNewTrace, serviceNameFor, startTelemetry, stopTelemetry, tracer, tracingOn } from "../../../../lib/tracing/telemetry";
import { SpanCollector } from "../../../support/span-collector";

const tracing = (env: Record<string, string> = {}) => loadConfig(env).tracing;
const on = (env: Record<string, string> = {}) => tracing({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", ...env });

afterEach(() => stopTelemetry());

describe("rootSampling", () => {
	const draws = (sampler: string, arg = "1") => {
		const sample = rootSampling(tracing({ OTEL_TRACES_SAMPLER: sampler, OTEL_TRACES_SAMPLER_ARG: arg }));
		let yes = 0;
		for (let i = 0; i < 20000; i++) if (sample()) yes++;
		return yes / 20000;
	};

	it("records every trace, none, or the ratio of them, as OTEL_TRACES_SAMPLER says (a parentbased_ sampler as its root's)", () => {
		expect([draws("always_on"), draws("parentbased_always_on"), draws("always_off"), draws("parentbased_always_off")]).toEqual([1, 1, 0, 0]);
		// 20,000 draws: five standard deviations are 0.015 at 0.25 and 0.0035 at 0.01.
		expect(Math.abs(draws("traceidratio", "0.25") - 0.25)).toBeLessThan(0.015);
		expect(Math.abs(draws("parentbased_traceidratio", "0.01") - 0.01)).toBeLessThan(0.0035);
		expect(draws("parentbased_traceidratio", "0")).toBe(0);
	});
});

describe("serviceNameFor", () => {
	it("is OTEL_SERVICE_NAME, else the services the process runs, else the whole service's name", () => {
		expect(serviceNameFor({ serviceName: "" }, ["workers/push-mailer"])).toBe("push-mailer");
		expect(serviceNameFor({ serviceName: "" }, ["accounts", "labels"])).toBe("accounts+labels");
		expect(serviceNameFor({ serviceName: "" }, [])).toBe("gitlab-v3");
		expect(serviceNameFor({ serviceName: "edge" }, ["api"])).toBe("edge");
	});
});

describe("startTelemetry", () => {
	const under = (traceFlags: TraceFlags) =>
		recording(trace.setSpanContext(ROOT_CONTEXT, { traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "b7ad6b7169203331", traceFlags }));

	it("without an endpoint makes no spans, yet keeps the active context for the correlation ids", () => {
		startTelemetry(tracing(), { services: ["api"], nodeID: "n1" });
		expect([tracingOn(), sampleNewTrace(), under(TraceFlags.SAMPLED)]).toEqual([false, false, false]);
		expect(tracer().startSpan("x").isRecording()).toBe(false);
		expect(correlationIdOf(context.active())).toBeUndefined();
	});

	it("with an endpoint exports the spans of sampled traces, their resource naming the process", async () => {
		const collector = new SpanCollector();
		startTelemetry(on({ OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=test" }), { services: ["workers/irc-sender"], nodeID: "irc-1" }, collector);
		expect([tracingOn(), sampleNewTrace()]).toEqual([true, true]);
		const span = tracer().startSpan("IRC send", { kind: SpanKind.CLIENT });
		context.with(trace.setSpan(context.active(), span), () => tracer().startSpan("child").end());
		span.end();
		const [child, parent] = await collector.take();
		expect([parent.name, child.name, child.parentSpanContext?.spanId]).toEqual(["IRC send", "child", parent.spanContext().spanId]);
		expect(parent.resource.attributes).toMatchObject({
			"service.name": "irc-sender",
			"service.namespace": "gitlab-v3",
			"service.instance.id": "irc-1",
			"deployment.environment": "test",
		});
	});

	it("starts a trace only when the sampler says so, and records spans only under a sampled one", async () => {
		startTelemetry(on({ OTEL_TRACES_SAMPLER: "always_off" }), { services: [], nodeID: "n" }, new SpanCollector());
		expect(sampleNewTrace()).toBe(false);
		expect([under(TraceFlags.SAMPLED), under(TraceFlags.NONE), recording(ROOT_CONTEXT)]).toEqual([true, false, false]);
		await stopTelemetry();
		expect([tracingOn(), under(TraceFlags.SAMPLED), sampleNewTrace()]).toEqual([false, false, false]);
	});

	it("is shared by the brokers of one process: spans are made until the last of them stops", async () => {
		const collector = new SpanCollector();
		startTelemetry(on(), { services: [], nodeID: "a" }, collector);
		startTelemetry(on(), { services: [], nodeID: "b" });
		await stopTelemetry();
		expect(tracingOn()).toBe(true);
		tracer().startSpan("still").end();
		expect((await collector.take()).map(s => s.name)).toEqual(["still"]);
		await stopTelemetry();
		expect(tracingOn()).toBe(false);
	});
});
