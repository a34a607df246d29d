/**
 * A span exporter that keeps what it is given, for tests that read the spans a process made
 * (lib/tracing/telemetry.ts takes it in place of the OTLP exporter). Flush first: the SDK's batch
 * processor hands spans over every few seconds.
 */
import { ROOT_CONTEXT, TraceFlags, context, trace, type Context } from "@opentelemetry/api";
import { ExportResultCode, type ExportResult } from "@opentelemetry/core";
import crypto from "crypto";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace";
import { flushTelemetry } from "../../lib/tracing/telemetry";

export class SpanCollector implements SpanExporter {
	readonly spans: ReadableSpan[] = [];

	export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
		this.spans.push(...spans);
		done({ code: ExportResultCode.SUCCESS });
	}

	shutdown(): Promise<void> {
		return Promise.resolve();
	}

	/** Every span ended so far, once exported; forgotten here afterwards. */
	async take(): Promise<ReadableSpan[]> {
		await flushTelemetry();
		return this.spans.splice(0);
	}
}

/** A span's parent span id, if any. */
export const parentIdOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;

/** A context under a sampled span of another process (not recorded here): what a sampled request's work runs in. */
export function sampledContext(): Context {
	const spanContext = { traceId: crypto.randomBytes(16).toString("hex"), spanId: crypto.randomBytes(8).toString("hex"), traceFlags: TraceFlags.SAMPLED };
	return trace.setSpanContext(ROOT_CONTEXT, spanContext);
}

/** Runs `fn` as part of a sampled trace. */
export const inSampledTrace = <T>(fn: () => T): T => context.with(sampledContext(), fn);
