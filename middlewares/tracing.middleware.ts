/**
 * Traces and correlation ids through the broker (docs/operations.md#traces):
 * - an action call runs with its request id as the correlation id of its log lines and, in a
 *   sampled trace, in a span of its own, the child of the caller's span: within a process through
 *   the active context, across NATS through `$traceparent` in the call's meta;
 * - a message sent to a channel carries `x-request-id` in its headers and, in a sampled trace,
 *   `traceparent`, in a PRODUCER span; the consumer group's handler runs in a CONSUMER span, the
 *   child of the publisher's.
 * Nothing but the correlation id is made or carried for a trace that is not sampled.
 * The SDK starts with the broker and flushes when it stops (lib/tracing/telemetry.ts).
 */
import { SpanKind, SpanStatusCode, context, trace, type Attributes, type Context as OtelContext, type Span } from "@opentelemetry/api";
import type { Context, Middleware, ServiceBroker } from "moleculer";
import type { Config } from "../config";
import { ATTR } from "../lib/tracing/attributes";
import { correlationId, correlationIdOf, withCorrelationId } from "../lib/tracing/correlation";
import { contextFrom, messageHeaders, TRACEPARENT, traceparentOf } from "../lib/tracing/propagation";
import { recording, startTelemetry, stopTelemetry, tracer, tracingOn } from "../lib/tracing/telemetry";
import { adapterKind } from "./channels.middleware";

/** Where a call's trace context travels in its meta. */
export const META_TRACEPARENT = "$traceparent";

type Handler = (ctx: Context) => Promise<unknown>;
type BrokerCall = (actionName: string, params?: unknown, opts?: { requestID?: string; parentCtx?: unknown }) => Promise<unknown>;
type ActionDef = { name: string; visibility?: string; service?: { name?: string } };
type ChannelHandler = (msg: unknown, raw?: unknown) => Promise<unknown>;
type ChannelDef = { name: string; group?: string };
type SendToChannel = (channel: string, payload: unknown, opts?: { headers?: Record<string, string>; msgID?: string }) => Promise<unknown>;
type Adapter = { parseMessageHeaders?(raw: unknown): Record<string, unknown> | null; addPrefixTopic?(name: string): string };

/** Moleculer's own actions and moleculer-web's entry action (the HTTP span stands for it) get no span. */
const untraced = (action: ActionDef) => action.name.startsWith("$") || (action.name === "api.rest" && action.visibility === "private");

/** A push event's project and id, as span attributes (nothing else of its payload). */
function eventAttributes(payload: unknown): Attributes {
	const event = payload as { id?: unknown; push?: { project_id?: unknown } } | null;
	const attributes: Attributes = {};
	if (typeof event?.id === "string") attributes[ATTR.pushEvent] = event.id;
	if (typeof event?.push?.project_id === "number") attributes[ATTR.project] = event.push.project_id;
	return attributes;
}

/** Ends `span` when `work` settles, marked as failed when it rejects. */
function endWith<T>(span: Span, work: Promise<T>): Promise<T> {
	return work.then(
		result => {
			span.end();
			return result;
		},
		(err: unknown) => {
			span.setAttribute(ATTR.errorType, (err as Error)?.name ?? "Error");
			span.setStatus({ code: SpanStatusCode.ERROR, message: String((err as Error)?.message ?? err).slice(0, 200) });
			span.end();
			throw err;
		},
	);
}

export function TracingMiddleware(cfg: Pick<Config, "tracing" | "services">): Middleware {
	let broker: ServiceBroker;
	const adapter = () => (broker as unknown as { channelAdapter?: Adapter }).channelAdapter;
	let system: string | undefined;
	/** The channel's transport, as `messaging.system` names it. */
	const messagingSystem = () => {
		try {
			return (system ??= adapterKind(adapter()));
		} catch {
			return "unknown";
		}
	};

	/** The caller's context: from the call's meta when it came over the network, else the active one. */
	const callerContext = (ctx: Context): OtelContext => {
		const remote = ctx.nodeID && ctx.nodeID !== broker.nodeID;
		const traceparent = remote ? (ctx.meta as Record<string, unknown>)?.[META_TRACEPARENT] : undefined;
		return typeof traceparent === "string" ? contextFrom({ [TRACEPARENT]: traceparent }) : context.active();
	};

	return {
		name: "Tracing",

		created(b: ServiceBroker) {
			broker = b;
			startTelemetry(cfg.tracing, { services: cfg.services, nodeID: b.nodeID });
		},

		async stopped() {
			await stopTelemetry();
		},

		/** A call made with `broker.call` inside a request or a delivery keeps its correlation id as its request id. */
		call(next: BrokerCall): BrokerCall {
			return (actionName, params, opts) => {
				if (opts?.requestID || opts?.parentCtx) return next(actionName, params, opts);
				const id = correlationId();
				return next(actionName, params, id ? { ...opts, requestID: id } : opts);
			};
		},

		localAction(next: Handler, action: ActionDef): Handler {
			if (!tracingOn() || untraced(action)) return ctx => context.with(withCorrelationId(context.active(), ctx.requestID), next, undefined, ctx);
			const [service, ...method] = action.name.split(".");
			return ctx => {
				const parent = withCorrelationId(callerContext(ctx), ctx.requestID);
				if (!recording(parent)) return context.with(parent, next, undefined, ctx);
				const remote = ctx.nodeID !== broker.nodeID;
				const attributes: Attributes = { [ATTR.rpcSystem]: "moleculer", [ATTR.rpcService]: service, [ATTR.rpcMethod]: method.join(".") };
				if (ctx.requestID) attributes[ATTR.correlationId] = ctx.requestID;
				if (remote && ctx.nodeID) attributes[ATTR.callerNode] = ctx.nodeID;
				const project = (ctx.meta as { projectKey?: string })?.projectKey;
				if (project) attributes[ATTR.project] = project;
				const span = tracer().startSpan(action.name, { kind: remote ? SpanKind.SERVER : SpanKind.INTERNAL, attributes }, parent);
				return endWith(span, context.with(trace.setSpan(parent, span), next, undefined, ctx));
			};
		},

		remoteAction(next: Handler): Handler {
			if (!tracingOn()) return next;
			return ctx => {
				const active = context.active();
				const traceparent = recording(active) && traceparentOf(active);
				if (!traceparent) return next(ctx);
				const meta = ctx.meta as Record<string, unknown>;
				meta[META_TRACEPARENT] = traceparent;
				// Not merged back into the caller's meta with the answer's.
				const forget = () => delete meta[META_TRACEPARENT];
				return next(ctx).then(
					result => (forget(), result),
					(err: unknown) => {
						forget();
						throw err;
					},
				);
			};
		},

		sendToChannel(next: SendToChannel): SendToChannel {
			return (channel, payload, opts = {}) => {
				const active = context.active();
				if (!recording(active)) return next(channel, payload, { ...opts, headers: { ...opts.headers, ...messageHeaders(active) } });
				// The subject as the consumers see it (with the namespace's prefix).
				const destination = adapter()?.addPrefixTopic?.(channel) ?? channel;
				const attributes: Attributes = {
					[ATTR.messagingSystem]: messagingSystem(),
					[ATTR.messagingOperation]: "send",
					[ATTR.messagingDestination]: destination,
					...eventAttributes(payload),
				};
				if (opts.msgID) attributes[ATTR.messagingMessageId] = opts.msgID;
				const id = correlationIdOf(active);
				if (id) attributes[ATTR.correlationId] = id;
				const span = tracer().startSpan(`publish ${destination}`, { kind: SpanKind.PRODUCER, attributes }, active);
				const headers = { ...opts.headers, ...messageHeaders(trace.setSpan(active, span)) };
				return endWith(span, next(channel, payload, { ...opts, headers }));
			};
		},

		localChannel(next: ChannelHandler, chan: ChannelDef): ChannelHandler {
			return (msg, raw) => {
				const parent = contextFrom(raw ? adapter()?.parseMessageHeaders?.(raw) : null);
				if (!recording(parent)) return context.with(parent, next, undefined, msg, raw);
				const attributes: Attributes = {
					[ATTR.messagingSystem]: messagingSystem(),
					[ATTR.messagingOperation]: "process",
					[ATTR.messagingDestination]: chan.name,
					...eventAttributes(msg),
				};
				if (chan.group) attributes[ATTR.messagingGroup] = chan.group;
				const id = correlationIdOf(parent);
				if (id) attributes[ATTR.correlationId] = id;
				const count = (raw as { info?: { deliveryCount?: number } } | undefined)?.info?.deliveryCount;
				if (typeof count === "number") attributes[ATTR.messagingDeliveryCount] = count;
				const span = tracer().startSpan(`process ${chan.name}`, { kind: SpanKind.CONSUMER, attributes }, parent);
				return endWith(span, context.with(trace.setSpan(parent, span), next, undefined, msg, raw));
			};
		},
	} as unknown as Middleware;
}
