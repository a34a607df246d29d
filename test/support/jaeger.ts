/**
 * A real trace collector for the tests: Jaeger v2's all-in-one (OTLP/HTTP in, memory storage, the
 * query API out) on free loopback ports, from the binary `.ci/build-jaeger` builds into its cache
 * (JAEGER_BIN names another). Its span trees are read back the way Jaeger's UI reads them
 * (`GET /api/traces`), see docs/operations.md#traces.
 */
import fs from "fs";
import os from "os";
import path from "path";
import { PEER_CACHE } from "./peer-cache";
import { freePort, startProcess, stopProcess, type ManagedProcess } from "./processes";

export const JAEGER_BIN = process.env.JAEGER_BIN || path.join(PEER_CACHE, "bin/jaeger");

/** A span as Jaeger's query API returns it, with its process's service name. */
export interface JaegerSpan {
	traceID: string;
	spanID: string;
	operationName: string;
	references: { refType: string; traceID: string; spanID: string }[];
	tags: { key: string; type: string; value: unknown }[];
	processID: string;
	/** Microseconds since the epoch. */
	startTime: number;
	/** Microseconds. */
	duration: number;
	service: string;
	kind: string;
}

export interface JaegerTrace {
	traceID: string;
	spans: JaegerSpan[];
}

/** The collector's own configuration: every listener on loopback, nothing kept on disk, no telemetry port of its own. */
function configYaml(ports: { otlp: number; query: number; queryGrpc: number; health: number }, maxTraces: number): string {
	return `service:
  extensions: [jaeger_storage, jaeger_query, healthcheckv2]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: ${maxTraces}
  jaeger_query:
    storage:
      traces: memstore
    http:
      endpoint: 127.0.0.1:${ports.query}
    grpc:
      endpoint: 127.0.0.1:${ports.queryGrpc}
  healthcheckv2:
    use_v2: true
    http:
      endpoint: 127.0.0.1:${ports.health}
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:${ports.otlp}
processors:
  batch:
    timeout: 200ms
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
`;
}

export class Jaeger {
	private constructor(
		readonly proc: ManagedProcess,
		private readonly dir: string,
		/** What OTEL_EXPORTER_OTLP_ENDPOINT names (OTLP/HTTP; traces go to its /v1/traces). */
		readonly otlpEndpoint: string,
		readonly queryUrl: string,
	) {}

	/** `maxTraces`: how many traces its memory keeps (the oldest go first). */
	static async start(opts: { maxTraces?: number } = {}): Promise<Jaeger> {
		if (!fs.existsSync(JAEGER_BIN))
			throw new Error(
				`Jaeger is not built at ${JAEGER_BIN}: bash .ci/build-jaeger builds it from its Go module (needs Go; \`npm test\` does it), or set JAEGER_BIN`,
			);
		const ports = { otlp: await freePort(), query: await freePort(), queryGrpc: await freePort(), health: await freePort() };
		const dir = fs.mkdtempSync(path.join(os.tmpdir(), "glv3-jaeger-"));
		const config = path.join(dir, "jaeger.yaml");
		fs.writeFileSync(config, configYaml(ports, opts.maxTraces ?? 100_000));
		const queryUrl = `http://127.0.0.1:${ports.query}`;
		const proc = await startProcess({
			name: "jaeger",
			command: JAEGER_BIN,
			args: [`--config=file:${config}`],
			env: { PATH: process.env.PATH ?? "" },
			ready: async () => (await fetch(`${queryUrl}/api/services`, { signal: AbortSignal.timeout(2000) })).ok,
			readyTimeoutMs: 60000,
			pollMs: 200,
		});
		return new Jaeger(proc, dir, `http://127.0.0.1:${ports.otlp}`, queryUrl);
	}

	/** Traces with a span of `service` carrying every tag given (Jaeger's tag search). */
	async find(service: string, tags: Record<string, string>): Promise<JaegerTrace[]> {
		const query = new URLSearchParams({ service, tags: JSON.stringify(tags), limit: "20", lookback: "1h" });
		const res = await fetch(`${this.queryUrl}/api/traces?${query.toString()}`, { signal: AbortSignal.timeout(5000) });
		if (!res.ok) throw new Error(`Jaeger query answered ${res.status}: ${await res.text()}`);
		return ((await res.json()) as { data: RawTrace[] | null }).data?.map(withServices) ?? [];
	}

	/** One trace by id, as the query API returns it (null: not there yet). */
	async trace(traceID: string): Promise<{ raw: unknown; trace: JaegerTrace } | null> {
		const res = await fetch(`${this.queryUrl}/api/traces/${traceID}`, { signal: AbortSignal.timeout(5000) });
		if (res.status === 404) return null;
		if (!res.ok) throw new Error(`Jaeger query answered ${res.status}: ${await res.text()}`);
		const raw = (await res.json()) as { data: RawTrace[] };
		return raw.data?.length ? { raw, trace: withServices(raw.data[0]) } : null;
	}

	async stop(): Promise<void> {
		await stopProcess(this.proc, "SIGTERM", 5000);
		fs.rmSync(this.dir, { recursive: true, force: true });
	}
}

interface RawTrace {
	traceID: string;
	spans: Omit<JaegerSpan, "service" | "kind">[];
	processes: Record<string, { serviceName: string }>;
}

function withServices(t: RawTrace): JaegerTrace {
	return {
		traceID: t.traceID,
		spans: t.spans.map(s => ({
			...s,
			service: t.processes[s.processID]?.serviceName ?? "?",
			kind: (s.tags.find(tag => tag.key === "span.kind")?.value as string | undefined) ?? "internal",
		})),
	};
}

/** A span's tag value. */
export const tag = (span: JaegerSpan, key: string): unknown => span.tags.find(t => t.key === key)?.value;

/** The span a span is the child of (none: the root). */
export const parentOf = (span: JaegerSpan, all: JaegerSpan[]): JaegerSpan | undefined => {
	const ref = span.references.find(r => r.refType === "CHILD_OF");
	return ref ? all.find(s => s.spanID === ref.spanID) : undefined;
};

/** Tags worth showing in a tree (the rest are the SDK's own or repeat the operation's name). */
const SHOWN_TAGS =
	/^(correlation_id|http\.route|http\.response\.status_code|gitlab\.|messaging\.(destination\.name|consumer\.group\.name|delivery_count)|server\.port|irc\.target|smtp\.)/;

/**
 * The span tree as indented lines (`service: operation [kind] 1.2 ms {tags}`), children in start
 * order: what docs/operations.md shows.
 */
export function spanTree(t: JaegerTrace): string[] {
	const lines: string[] = [];
	const children = (parent?: JaegerSpan) =>
		t.spans.filter(s => (parent ? parentOf(s, t.spans) === parent : !parentOf(s, t.spans))).sort((a, b) => a.startTime - b.startTime);
	const walk = (s: JaegerSpan, depth: number) => {
		const tags = s.tags.filter(tag => SHOWN_TAGS.test(tag.key)).map(tag => `${tag.key}=${JSON.stringify(tag.value)}`);
		const ms = (s.duration / 1000).toFixed(1);
		lines.push(`${"  ".repeat(depth)}${s.service}: ${s.operationName} [${s.kind}] ${ms} ms${tags.length ? ` {${tags.join(", ")}}` : ""}`);
		for (const c of children(s)) walk(c, depth + 1);
	};
	for (const root of children()) walk(root, 0);
	return lines;
}
