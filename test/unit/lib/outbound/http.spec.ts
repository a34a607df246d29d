import http from "http";
import type { AddressInfo } from "net";
import { SpanKind } from "@opentelemetry/api";
import { loadConfig } from "../../../../config";
import { checkStatus, closeAgents, requestJson, statusOutcome } from "../../../../lib/outbound/http";
import { startTelemetry, stopTelemetry } from "../../../../lib/tracing/telemetry";
import { inSampledTrace, SpanCollector } from "../../../support/span-collector";
import { PermanentError, TransientError } from "../../../../lib/outbound/errors";

let server: http.Server;
let base: string;
const hits: string[] = [];

beforeAll(async () => {
	server = http.createServer((req, res) => {
		hits.push(`${req.method} ${req.url}`);
		let body = "";
		req.on("data", c => (body += c));
		req.on("end", () => {
			if (req.url === "/slow") return setTimeout(() => res.end("{}"), 2000);
			if (req.url === "/redirect") return res.writeHead(302, { Location: "http://169.254.169.254/" }).end();
			if (req.url === "/down") return res.writeHead(503).end("{}");
			if (req.url === "/missing") return res.writeHead(404).end('{"errors":[]}');
			if (req.url === "/big") return res.end("x".repeat(2 * 1024 * 1024));
			res.writeHead(200, { "Content-Type": "application/json" }).end(
				JSON.stringify({ got: body ? JSON.parse(body) : null, auth: req.headers.authorization ?? null }),
			);
		});
	});
	await new Promise<void>(r => server.listen(0, "127.0.0.1", r));
	base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
	closeAgents();
	server.closeAllConnections();
	await new Promise(r => server.close(r));
});

const call = (path: string, allowLocal = true, extra: Partial<Parameters<typeof requestJson>[0]> = {}) =>
	requestJson({ method: "POST", url: `${base}${path}`, json: { a: 1 }, headers: { Authorization: "Bearer t" }, timeoutMs: 500, allowLocal, ...extra });

describe("outbound HTTP", () => {
	it("sends JSON and reads JSON", async () => {
		const res = await call("/ok");
		expect(res.status).toBe(200);
		expect(res.body).toEqual({ got: { a: 1 }, auth: "Bearer t" });
	});

	it("refuses a loopback IP or name before connecting when local requests are not allowed", async () => {
		const before = hits.length;
		await expect(call("/ok", false)).rejects.toBeInstanceOf(PermanentError);
		await expect(call("/ok", false, { url: `${base.replace("127.0.0.1", "localhost")}/ok` })).rejects.toThrow(/local network/);
		await expect(call("/ok", false, { url: `${base.replace("127.0.0.1", "[::ffff:127.0.0.1]")}/ok` })).rejects.toThrow(/local network/);
		expect(hits.length).toBe(before);
	});

	it("does not follow redirects, and sorts statuses into transient and permanent", async () => {
		const redirect = await call("/redirect");
		expect(redirect.status).toBe(302);
		expect(() => checkStatus(redirect, "x")).toThrow(PermanentError);
		expect(() => checkStatus({ status: 503, body: {}, text: "{}" }, "x")).toThrow(TransientError);
		expect(() => checkStatus({ status: 429, body: {}, text: "" }, "x")).toThrow(TransientError);
		expect(() => checkStatus({ status: 404, body: {}, text: "" }, "x")).toThrow(PermanentError);
		expect(checkStatus({ status: 201, body: {}, text: "" }, "x").status).toBe(201);
	});

	it("times out as a transient failure, and refuses oversized answers", async () => {
		await expect(call("/slow")).rejects.toBeInstanceOf(TransientError);
		await expect(call("/big", true, { timeoutMs: 5000 })).rejects.toBeInstanceOf(PermanentError);
		await expect(call("/ok", true, { url: "http://127.0.0.1:1/" })).rejects.toBeInstanceOf(TransientError);
		await expect(call("/ok", true, { url: "ftp://127.0.0.1/" })).rejects.toBeInstanceOf(PermanentError);
	});

	it("makes each request of a sampled trace a CLIENT span: where it went, its status and outcome; never its headers nor its query", async () => {
		const collector = new SpanCollector();
		startTelemetry(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" }).tracing, { services: [], nodeID: "n" }, collector);
		try {
			await inSampledTrace(() => call("/ok?private_token=secret-in-query"));
			await inSampledTrace(() => call("/redirect"));
			const [ok, redirect] = await collector.take();
			const port = Number(new URL(base).port);
			expect([ok.name, ok.kind, ok.attributes]).toEqual([
				"HTTP POST",
				SpanKind.CLIENT,
				{
					"http.request.method": "POST",
					"server.address": "127.0.0.1",
					"server.port": port,
					"url.path": "/ok",
					"http.response.status_code": 200,
					"gitlab.delivery.outcome": "delivered",
				},
			]);
			expect([redirect.attributes["http.response.status_code"], redirect.attributes["gitlab.delivery.outcome"]]).toEqual([302, "refused"]);
			expect(JSON.stringify([ok.attributes, redirect.attributes])).not.toMatch(/Bearer|secret-in-query/);
		} finally {
			await stopTelemetry();
		}
	});

	it("sorts statuses into delivery outcomes as checkStatus does", () => {
		expect([200, 204, 302, 404, 429, 500, 503].map(statusOutcome)).toEqual(["delivered", "delivered", "refused", "refused", "failed", "failed", "failed"]);
	});
});
