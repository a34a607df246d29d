import { SpanKind, SpanStatusCode, context, trace } from "@opentelemetry/api";
import { loadConfig } from "../../../../config";
import { PermanentError, TransientError } from "../../../../lib/outbound/errors";
import { outboundCall, outcomeOfError } from "../../../../lib/tracing/outbound-span";
import { startTelemetry, stopTelemetry } from "../../../../lib/tracing/telemetry";
import { inSampledTrace, SpanCollector } from "../../../support/span-collector";

const collector = new SpanCollector();
const on = () => startTelemetry(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" }).tracing, { services: [], nodeID: "n" }, collector);
afterEach(() => stopTelemetry());

describe("outcomeOfError", () => {
	it("is refused for a PermanentError (not retried) and failed for anything else (retried)", () => {
		expect([outcomeOfError(new PermanentError("550")), outcomeOfError(new TransientError("421")), outcomeOfError(new Error("reset"))]).toEqual([
			"refused",
			"failed",
			"failed",
		]);
	});
});

describe("outboundCall", () => {
	it("runs the call of a sampled delivery in a CLIENT span and records its outcome", async () => {
		on();
		const inside = await inSampledTrace(() => outboundCall("IRC send", { "server.port": 6667 }, () => Promise.resolve(!!trace.getSpan(context.active()))));
		await expect(
			inSampledTrace(() => outboundCall("SMTP send", {}, () => Promise.reject(new PermanentError("SMTP: 550 no such user", 550)))),
		).rejects.toThrow("550");
		await expect(
			inSampledTrace(() =>
				outboundCall(
					"SMTP send",
					{},
					() => Promise.reject(new TransientError("SMTP: 421 busy", 421)),
					(_, err) => ({ attributes: { "smtp.response.code": (err as TransientError).status! } }),
				),
			),
		).rejects.toThrow("421");
		const [irc, refused, failed] = await collector.take();
		expect(inside).toBe(true);
		expect([irc.name, irc.kind, irc.attributes, irc.status.code]).toEqual([
			"IRC send",
			SpanKind.CLIENT,
			{ "server.port": 6667, "gitlab.delivery.outcome": "delivered" },
			SpanStatusCode.UNSET,
		]);
		expect([refused.attributes["gitlab.delivery.outcome"], refused.attributes["error.type"], refused.status]).toEqual([
			"refused",
			"PermanentError",
			{ code: SpanStatusCode.ERROR, message: "SMTP: 550 no such user" },
		]);
		expect([failed.attributes["gitlab.delivery.outcome"], failed.attributes["smtp.response.code"]]).toEqual(["failed", 421]);
	});

	it("takes the outcome an answer decides (an HTTP status)", async () => {
		on();
		await inSampledTrace(() =>
			outboundCall(
				"HTTP GET",
				{},
				() => Promise.resolve(404),
				status => ({ attributes: { "http.response.status_code": status! }, outcome: "refused" }),
			),
		);
		const [span] = await collector.take();
		expect([span.attributes["gitlab.delivery.outcome"], span.attributes["http.response.status_code"], span.status.code]).toEqual([
			"refused",
			404,
			SpanStatusCode.ERROR,
		]);
	});

	it("makes no span for a delivery whose trace is not sampled", async () => {
		on();
		expect(await outboundCall("IRC send", {}, () => Promise.resolve(trace.getSpan(context.active())))).toBeUndefined();
		expect(await collector.take()).toEqual([]);
	});

	it("makes no span with tracing off", async () => {
		expect(await outboundCall("IRC send", {}, () => Promise.resolve(trace.getSpan(context.active())))).toBeUndefined();
		expect(await collector.take()).toEqual([]);
	});
});
