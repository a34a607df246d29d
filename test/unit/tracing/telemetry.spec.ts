import { SpanKind, context, trace } from "@opentelemetry/api";
import { loadConfig } from "../../../config";
import { correlationIdOf } from "../../../lib/tracing/correlation";
import { samplerFor, serviceNameFor, startTelemetry, stopTelemetry, tracer, tracingOn } from "../../../lib/tracing/telemetry";
import { SpanCollector } from "../../support/span-collector";

const tracing = (env: Record<string, string> = {}) => loadConfig(env).tracing;

afterEach(() => stopTelemetry());

describe("samplerFor", () => {
	it("makes the sampler each OTEL_TRACES_SAMPLER names, with OTEL_TRACES_SAMPLER_ARG as the ratio", () => {
		const named = (sampler: string, arg = "1") => samplerFor(tracing({ OTEL_TRACES_SAMPLER: sampler, OTEL_TRACES_SAMPLER_ARG: arg })).toString();
		expect(named("always_on")).toBe("AlwaysOnSampler");
		expect(named("always_off")).toBe("AlwaysOffSampler");
		expect(named("traceidratio", "0.25")).toBe("TraceIdRatioBased{0.25}");
		expect(named("parentbased_traceidratio", "0.01")).toMatch(/^ParentBased\{root=TraceIdRatioBased\{0.01\}, /);
		expect(named("parentbased_always_off")).toMatch(/^ParentBased\{root=AlwaysOffSampler, /);
		expect(samplerFor(tracing()).toString()).toMatch(/^ParentBased\{root=AlwaysOnSampler, /);
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
	it("without an endpoint makes no spans, yet keeps the active context for the correlation ids", () => {
		startTelemetry(tracing(), { services: ["api"], nodeID: "n1" });
		expect(tracingOn()).toBe(false);
		expect(tracer().startSpan("x").isRecording()).toBe(false);
		const key = context.active();
		expect(correlationIdOf(key)).toBeUndefined();
	});

	it("with an endpoint exports sampled spans, their resource naming the process", async () => {
		const collector = new SpanCollector();
		const cfg = tracing({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=test" });
		startTelemetry(cfg, { services: ["workers/irc-sender"], nodeID: "irc-1" }, collector);
		expect(tracingOn()).toBe(true);
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

	it("is shared by the brokers of one process: spans are made until the last of them stops", async () => {
		const collector = new SpanCollector();
		const cfg = tracing({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" });
		startTelemetry(cfg, { services: [], nodeID: "a" }, collector);
		startTelemetry(cfg, { services: [], nodeID: "b" });
		await stopTelemetry();
		expect(tracingOn()).toBe(true);
		tracer().startSpan("still").end();
		expect((await collector.take()).map(s => s.name)).toEqual(["still"]);
		await stopTelemetry();
		expect(tracingOn()).toBe(false);
	});

	it("samples nothing with always_off, and stops making spans once stopped", async () => {
		const collector = new SpanCollector();
		startTelemetry(
			tracing({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", OTEL_TRACES_SAMPLER: "always_off" }),
			{ services: [], nodeID: "n" },
			collector,
		);
		tracer().startSpan("dropped").end();
		expect(await collector.take()).toEqual([]);
		await stopTelemetry();
		expect(tracingOn()).toBe(false);
	});
});
