/**
 * OpenTelemetry in this process (docs/operations.md#traces). The active context (AsyncLocalStorage)
 * is always kept: it carries the correlation id of what is being handled, for the logs. Spans are
 * made only when config names an OTLP endpoint: then a tracer provider exports them in batches over
 * OTLP/HTTP; without one, no span is ever started (`tracingOn()` is false).
 *
 * Sampling is decided once per trace, where it starts (the gateway's request, `sampleNewTrace`), and
 * the whole trace follows: a span is made only under a sampled one (`recording`). The SDK's own
 * samplers decide after making the span's ids and attributes, some microseconds a span even when
 * it is dropped; deciding first leaves an unsampled request with no span at all
 * (docs/operations.md#what-tracing-costs).
 */
import { context, trace, TraceFlags, type Context, type Tracer } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { AlwaysOnSampler, BatchSpanProcessor, ParentBasedSampler, TracerProvider, type SpanExporter } from "@opentelemetry/sdk-trace";
import type { Config } from "../../config";

export type TracingConfig = Config["tracing"];

/** What the resource of this process's spans says. */
export interface ProcessIdentity {
	/** SERVICES of the process (empty: every service, the all-in-one process). */
	services: string[];
	nodeID: string;
}

const TRACER_NAME = "gitlab-v3";
const SERVICE_NAMESPACE = "gitlab-v3";

let provider: TracerProvider | null = null;
/** Brokers (and tests) that started it and have not stopped it yet. */
let users = 0;
let contextKept = false;
let cachedTracer: Tracer | null = null;
let sampleRoot: () => boolean = () => false;

/**
 * Whether a new trace is recorded, as OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG say. Every
 * trace starts at the gateway (a client's traceparent is not followed), so each sampler and its
 * parentbased_ form decide alike: always, never, or at the ratio.
 */
export function rootSampling(cfg: Pick<TracingConfig, "sampler" | "samplerRatio">): () => boolean {
	switch (cfg.sampler) {
		case "always_off":
		case "parentbased_always_off":
			return () => false;
		case "traceidratio":
		case "parentbased_traceidratio": {
			const ratio = cfg.samplerRatio;
			return () => Math.random() < ratio;
		}
		default:
			return () => true;
	}
}

/** OTEL_SERVICE_NAME, else the services the process runs ("api", "push-mailer"; "gitlab-v3" for all of them). */
export function serviceNameFor(cfg: Pick<TracingConfig, "serviceName">, services: string[]): string {
	if (cfg.serviceName) return cfg.serviceName;
	return services.length ? services.map(s => s.split("/").pop()).join("+") : SERVICE_NAMESPACE;
}

/**
 * Keeps the active context from now on and, with an endpoint (or an exporter given by a test),
 * starts exporting spans. Once per process: brokers in the same process share it, and the last
 * one to stop flushes it.
 */
export function startTelemetry(cfg: TracingConfig, identity: ProcessIdentity, exporter?: SpanExporter): void {
	if (!contextKept) {
		context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
		contextKept = true;
	}
	if (provider) users++;
	if (provider || (!cfg.tracesUrl && !exporter)) return;
	users = 1;
	const resource = resourceFromAttributes({
		...cfg.resourceAttributes,
		"service.name": serviceNameFor(cfg, identity.services),
		"service.namespace": SERVICE_NAMESPACE,
		"service.instance.id": cfg.resourceAttributes["service.instance.id"] ?? identity.nodeID,
	});
	sampleRoot = rootSampling(cfg);
	provider = new TracerProvider({
		// A root span is made once sampleNewTrace() has said yes; the spans under it follow it.
		sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }),
		resource,
		spanProcessors: [new BatchSpanProcessor({ exporter: exporter ?? new OTLPTraceExporter({ url: cfg.tracesUrl }) })],
	});
	trace.setGlobalTracerProvider(provider);
	cachedTracer = null;
}

/** Whether spans are made in this process. */
export function tracingOn(): boolean {
	return provider !== null;
}

/** Whether the trace a request starts is to be recorded (tracing on, and the sampler says so). */
export function sampleNewTrace(): boolean {
	return provider !== null && sampleRoot();
}

/** Whether spans are made under `ctx`: tracing is on and its span is a sampled one. */
export function recording(ctx: Context): boolean {
	const parent = provider && trace.getSpanContext(ctx);
	return !!parent && (parent.traceFlags & TraceFlags.SAMPLED) !== 0;
}

/** The project's tracer (a no-op one while tracing is off). */
export function tracer(): Tracer {
	return (cachedTracer ??= trace.getTracer(TRACER_NAME));
}

/** Exports the spans ended so far (the batch processor would send them within seconds). */
export async function flushTelemetry(): Promise<void> {
	await provider?.forceFlush();
}

/** Once its last user stops: sends what is still buffered (a stopping process), then stops making spans. */
export async function stopTelemetry(): Promise<void> {
	if (--users > 0) return;
	users = 0;
	const stopping = provider;
	provider = null;
	cachedTracer = null;
	if (!stopping) return;
	trace.disable();
	await stopping.shutdown();
}
