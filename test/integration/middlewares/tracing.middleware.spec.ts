/**
 * The tracing middleware on real brokers: two nodes over the real NATS (an action call across the
 * transporter is the caller's child, its correlation id its request id), and one node with the
 * durable in-process push channel (the consumer's span is the publisher's child, the message's
 * headers carry the correlation id). Spans are read from the SDK (test/support/span-collector.ts).
 */
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import fs from "fs";
import os from "os";
import path from "path";
import type { ReadableSpan } from "@opentelemetry/sdk-trace";
import { ServiceBroker, type Context } from "moleculer";
import { loadConfig } from "../../../config";
import { correlationId } from "../../../lib/tracing/correlation";
import { startTelemetry, stopTelemetry } from "../../../lib/tracing/telemetry";
import { ChannelsMiddlewares } from "../../../middlewares/channels.middleware";
import { META_TRACEPARENT, TracingMiddleware } from "../../../middlewares/tracing.middleware";
import { waitFor } from "../../support/http";
import { NATS_URL, uniqueNamespace } from "../../support/servers";
import { inSampledTrace, parentIdOf, SpanCollector } from "../../support/span-collector";

const cfg = loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" });
const collector = new SpanCollector();

beforeAll(() => startTelemetry(cfg.tracing, { services: [], nodeID: "test" }, collector));
afterAll(() => stopTelemetry());

describe("action calls across NATS", () => {
	const namespace = uniqueNamespace("tracing");
	const node = (nodeID: string) =>
		new ServiceBroker({
			nodeID,
			namespace,
			transporter: { type: "NATS", options: { url: NATS_URL } },
			logger: false,
			middlewares: [TracingMiddleware(cfg)],
		});
	let front: ServiceBroker;
	let back: ServiceBroker;

	beforeAll(async () => {
		// Made once the spans go to the collector (the middleware would start an OTLP exporter otherwise).
		[front, back] = [node(`front-${namespace}`), node(`back-${namespace}`)];
		front.createService({
			name: "front",
			actions: {
				async go(ctx: Context<{ fail?: boolean; viaBroker?: boolean }>) {
					const seen = correlationId();
					// A worker calls as the broker (no context of its own): the call keeps the correlation id.
					const answer = ctx.params.viaBroker ? await front.call("back.work") : await ctx.call(ctx.params.fail ? "back.fail" : "back.work");
					return { seen, answer, meta: { ...ctx.meta } };
				},
			},
		});
		back.createService({
			name: "back",
			actions: {
				work: (ctx: Context) => ({ seen: correlationId(), traceparent: (ctx.meta as Record<string, unknown>)[META_TRACEPARENT] }),
				fail: () => Promise.reject(new Error("it broke")),
			},
		});
		await Promise.all([front.start(), back.start()]);
		await front.waitForServices("back", 10000);
		await collector.take();
	});
	afterAll(() => Promise.all([front.stop(), back.stop()]));

	it("makes the callee's span the caller's child, both named by the request id, and leaves no trace in the caller's meta", async () => {
		type Answer = { seen: string; answer: { seen: string; traceparent: string }; meta: object };
		const result = await inSampledTrace(() => front.call<Answer, object>("front.go", {}, { requestID: "req-1" }));
		expect([result.seen, result.answer.seen]).toEqual(["req-1", "req-1"]);
		expect(result.answer.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
		expect(result.meta).toEqual({});
		const spans = await collector.take();
		const caller = spans.find(s => s.name === "front.go")!;
		const callee = spans.find(s => s.name === "back.work")!;
		expect([caller.kind, callee.kind]).toEqual([SpanKind.INTERNAL, SpanKind.SERVER]);
		expect([callee.spanContext().traceId, parentIdOf(callee)]).toEqual([caller.spanContext().traceId, caller.spanContext().spanId]);
		expect(callee.attributes).toEqual({
			"rpc.system": "moleculer",
			"rpc.service": "back",
			"rpc.method": "work",
			correlation_id: "req-1",
			"moleculer.caller.node_id": front.nodeID,
		});
		expect(spans.filter(s => s.name.startsWith("$"))).toEqual([]);
	});

	it("makes no span and carries no trace for a request whose trace is not sampled, yet names it by its request id", async () => {
		type Answer = { seen: string; answer: { seen: string; traceparent?: string } };
		const result = await front.call<Answer, object>("front.go", {}, { requestID: "req-0" });
		expect([result.seen, result.answer.seen, result.answer.traceparent]).toEqual(["req-0", "req-0", undefined]);
		expect(await collector.take()).toEqual([]);
	});

	it("gives a call made with broker.call inside a request the request's id, and makes its span a child of the caller's", async () => {
		type Answer = { answer: { seen: string } };
		const result = await inSampledTrace(() => front.call<Answer, object>("front.go", { viaBroker: true }, { requestID: "req-5" }));
		expect(result.answer.seen).toBe("req-5");
		const spans = await collector.take();
		const callee = spans.find(s => s.name === "back.work")!;
		expect([callee.attributes.correlation_id, parentIdOf(callee)]).toEqual(["req-5", spans.find(s => s.name === "front.go")!.spanContext().spanId]);
	});

	it("marks the span of a call that failed, and the failure reaches the caller", async () => {
		await expect(inSampledTrace(() => front.call("front.go", { fail: true }, { requestID: "req-2" }))).rejects.toThrow("it broke");
		const spans = await collector.take();
		const failed = spans.find(s => s.name === "back.fail")!;
		expect([failed.status, failed.attributes["error.type"]]).toEqual([{ code: SpanStatusCode.ERROR, message: "it broke" }, "Error"]);
		expect(spans.find(s => s.name === "front.go")!.status.code).toBe(SpanStatusCode.ERROR);
	});
});

describe("the push channel", () => {
	const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "glv3-tracing-"));
	const channelConfig = { ...loadConfig({ DATA_DIR: dataDir, PUSH_RETRY_DELAY_MS: "0" }), channels: "", transporter: "" };
	let broker: ServiceBroker;
	const handled: { seen?: string; headers?: unknown }[] = [];

	beforeAll(async () => {
		broker = new ServiceBroker({ logger: false, middlewares: [...ChannelsMiddlewares(channelConfig), TracingMiddleware(cfg)] });
		broker.createService({
			name: "publisher",
			settings: { $channelPublisher: true },
			actions: {
				publish(this: { broker: ServiceBroker & { sendToChannel(c: string, p: unknown, o: object): Promise<void> } }) {
					return this.broker.sendToChannel("push", { id: "event-1", push: { project_id: 5 } }, { msgID: "event-1" });
				},
			},
		});
		broker.createService({
			name: "mailer",
			channels: {
				push: {
					group: "push-mailer",
					handler(msg: unknown, raw: { headers?: unknown }) {
						handled.push({ seen: correlationId(), headers: raw?.headers });
					},
				},
			},
		} as never);
		await broker.start();
		await collector.take();
	});
	afterAll(async () => {
		await broker.stop();
		fs.rmSync(dataDir, { recursive: true, force: true });
	});

	it("carries the trace and the correlation id in the message's headers: the consumer's span is the publisher's child", async () => {
		await inSampledTrace(() => broker.call("publisher.publish", {}, { requestID: "req-3" }));
		await waitFor("the message handled", () => handled.length === 1);
		expect(handled[0]).toEqual({ seen: "req-3", headers: { traceparent: expect.stringMatching(/^00-/), "x-request-id": "req-3" } });
		const spans: ReadableSpan[] = [];
		await waitFor("the consumer's span", async () => {
			spans.push(...(await collector.take()));
			return spans.some(s => s.kind === SpanKind.CONSUMER);
		});
		const action = spans.find(s => s.name === "publisher.publish")!;
		const publish = spans.find(s => s.kind === SpanKind.PRODUCER)!;
		const consume = spans.find(s => s.kind === SpanKind.CONSUMER)!;
		expect([publish.name, parentIdOf(publish), publish.attributes]).toEqual([
			"publish push",
			action.spanContext().spanId,
			{
				"messaging.system": "memory",
				"messaging.operation.type": "send",
				"messaging.destination.name": "push",
				"gitlab.push.event_id": "event-1",
				"gitlab.project.id": 5,
				"messaging.message.id": "event-1",
				correlation_id: "req-3",
			},
		]);
		expect([consume.name, parentIdOf(consume), consume.spanContext().traceId]).toEqual([
			"process push",
			publish.spanContext().spanId,
			publish.spanContext().traceId,
		]);
		expect(consume.attributes).toMatchObject({
			"messaging.consumer.group.name": "push-mailer",
			"messaging.delivery_count": 1,
			"gitlab.push.event_id": "event-1",
		});
	});
});
