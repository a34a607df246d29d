import { SpanKind, SpanStatusCode, context, trace } from "@opentelemetry/api";
import { EventEmitter } from "events";
import http, { type IncomingMessage, type ServerResponse } from "http";
import type { AddressInfo } from "net";
import { loadConfig } from "../../../../config";
import { requestIdOf } from "../../../../gateway/server/request-id";
import { correlationId } from "../../../../lib/tracing/correlation";
import { tracedRequests } from "../../../../lib/tracing/http-span";
import { startTelemetry, stopTelemetry } from "../../../../lib/tracing/telemetry";
import { SpanCollector } from "../../../support/span-collector";

const collector = new SpanCollector();
let server: http.Server;
let base: string;
/** What the handler saw of each request: its one id, the correlation id of its context, its span. */
const seen: { id: string; correlation?: string; inSpan: boolean }[] = [];
let made = 0;
const requestId = (req: IncomingMessage) => requestIdOf(req, () => `new-${++made}`);

/** A gateway's handler: routed ones carry moleculer-web's $alias and $ctx. */
function handler(req: IncomingMessage & { $alias?: object; $ctx?: object }, res: ServerResponse) {
	seen.push({ id: requestId(req), correlation: correlationId(), inSpan: !!trace.getSpan(context.active()) });
	if (req.url === "/routed") Object.assign(req, { $alias: { fullPath: "/api/v3/projects/:id/labels" }, $ctx: { meta: { projectKey: "7" } } });
	res.statusCode = req.url === "/broken" ? 503 : 200;
	res.end("ok");
}

async function start(): Promise<void> {
	const routeOf = (req: IncomingMessage) => (req.url === "/fast" ? "/api/v3/user" : undefined);
	server = http.createServer(tracedRequests(handler, { requestId, routeOf }));
	await new Promise<void>(r => server.listen(0, "127.0.0.1", r));
	base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

afterEach(async () => {
	seen.length = 0;
	made = 0;
	await new Promise(r => server.close(r));
	await stopTelemetry();
});

describe("with tracing on", () => {
	beforeEach(async () => {
		startTelemetry(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" }).tracing, { services: ["api"], nodeID: "api-1" }, collector);
		await start();
	});

	it("names each request once and makes the trace's root span: route, project, status", async () => {
		await fetch(`${base}/routed`, { method: "POST", headers: { "X-Request-ID": "req-1" } });
		await fetch(`${base}/fast`, { headers: { "X-Correlation-ID": "corr-2", "X-Request-ID": "req-2" } });
		await fetch(`${base}/broken`);
		const spans = await collector.take();
		expect(spans.map(s => [s.name, s.kind, s.attributes["http.response.status_code"], s.status.code])).toEqual([
			["POST /api/v3/projects/:id/labels", SpanKind.SERVER, 200, SpanStatusCode.UNSET],
			["GET /api/v3/user", SpanKind.SERVER, 200, SpanStatusCode.UNSET],
			["GET", SpanKind.SERVER, 503, SpanStatusCode.ERROR],
		]);
		expect(spans[0].attributes).toEqual({
			"http.request.method": "POST",
			correlation_id: "req-1",
			"http.route": "/api/v3/projects/:id/labels",
			"gitlab.project.id": "7",
			"http.response.status_code": 200,
		});
		expect(seen.map(s => [s.id, s.correlation, s.inSpan])).toEqual([
			["req-1", "req-1", true],
			["corr-2", "corr-2", true],
			["new-1", "new-1", true],
		]);
		expect(spans.map(s => s.attributes.correlation_id)).toEqual(["req-1", "corr-2", "new-1"]);
		expect(spans.every(s => !s.parentSpanContext)).toBe(true);
	});

	it("hands the handler's other arguments on and returns what it returns, inside the request's span", async () => {
		const traced = tracedRequests((_req: IncomingMessage, _res: ServerResponse, arrival: string) => Promise.resolve([arrival, correlationId()]), {
			requestId,
			routeOf: () => "/api/v3/projects/:id",
		});
		const res = Object.assign(new EventEmitter(), { statusCode: 417 }) as unknown as ServerResponse;
		const answer = traced({ headers: { "x-request-id": "req-5" }, method: "PUT" } as unknown as IncomingMessage, res, "checkExpectation");
		res.emit("close");
		expect(await answer).toEqual(["checkExpectation", "req-5"]);
		const [span] = await collector.take();
		expect([span.name, span.attributes["http.response.status_code"]]).toEqual(["PUT /api/v3/projects/:id", 417]);
	});

	it("starts a trace of its own whatever traceparent a client sends", async () => {
		const foreign = "0af7651916cd43dd8448eb211c80319c";
		await fetch(`${base}/routed`, { headers: { traceparent: `00-${foreign}-b7ad6b7169203331-01` } });
		const [span] = await collector.take();
		expect([span.spanContext().traceId === foreign, span.parentSpanContext]).toEqual([false, undefined]);
	});
});

describe("with tracing on and the request's trace not sampled", () => {
	beforeEach(async () => {
		const cfg = loadConfig({
			OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318",
			OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
			OTEL_TRACES_SAMPLER_ARG: "0",
		});
		startTelemetry(cfg.tracing, { services: ["api"], nodeID: "api-1" }, collector);
		await start();
	});

	it("names the request and makes no span at all", async () => {
		await fetch(`${base}/routed`, { headers: { "X-Request-ID": "req-4" } });
		expect(seen).toEqual([{ id: "req-4", correlation: "req-4", inSpan: false }]);
		expect(await collector.take()).toEqual([]);
	});
});

describe("with tracing off", () => {
	beforeEach(async () => {
		startTelemetry(loadConfig({}).tracing, { services: ["api"], nodeID: "api-1" });
		await start();
	});

	it("still names the request for the logs and moleculer-web, and makes no span", async () => {
		await fetch(`${base}/routed`, { headers: { "X-Request-ID": "req-3" } });
		expect(seen).toEqual([{ id: "req-3", correlation: "req-3", inSpan: false }]);
		expect(await collector.take()).toEqual([]);
	});
});
