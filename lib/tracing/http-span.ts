/**
 * Where a request enters the gateway (docs/operations.md#traces): its correlation id is the
 * request's one id (gateway/server/request-id.ts, which the answer's X-Request-ID and moleculer-web's
 * context read too) and, when its trace is sampled, it gets the trace's root span, which the action
 * calls it makes are children of. A client's own `traceparent` is not followed: a client could
 * otherwise join our traces to its own or force every request to be sampled.
 *
 * The hook: the hardened server wraps its one guarded entry in `tracedRequests` (gateway/server/http-server.ts),
 * so every request Node hands over passes here once, the fast path's and the refused ones included.
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, context, trace } from "@opentelemetry/api";
import type { IncomingMessage, ServerResponse } from "http";
import { ATTR } from "./attributes";
import { withCorrelationId } from "./correlation";
import { sampleNewTrace, tracer } from "./telemetry";

type Handler<A extends unknown[], R> = (req: IncomingMessage, res: ServerResponse, ...rest: A) => R;

/** What moleculer-web leaves on a request it routed. */
type RoutedRequest = IncomingMessage & { $alias?: { fullPath?: string }; $ctx?: { meta?: { projectKey?: string } } };

export interface RequestNames {
	/** The request's one id. */
	requestId(req: IncomingMessage): string;
	/** The route template of a request moleculer-web did not route itself (the fast path, OPTIONS, a refusal), if any; never throws. */
	routeOf(req: IncomingMessage): string | undefined;
}

export function tracedRequests<A extends unknown[], R>(handler: Handler<A, R>, names: RequestNames): Handler<A, R> {
	return (req, res, ...rest) => {
		const id = names.requestId(req);
		const named = withCorrelationId(ROOT_CONTEXT, id);
		if (!sampleNewTrace()) return context.with(named, handler, undefined, req, res, ...rest);
		const method = req.method ?? "GET";
		const span = tracer().startSpan(method, { kind: SpanKind.SERVER, attributes: { [ATTR.httpMethod]: method, [ATTR.correlationId]: id } }, named);
		res.once("close", () => {
			if (span.isRecording()) {
				const routed = req as RoutedRequest;
				const route = routed.$alias?.fullPath ?? names.routeOf(req);
				if (route) span.updateName(`${method} ${route}`).setAttribute(ATTR.httpRoute, route);
				const project = routed.$ctx?.meta?.projectKey;
				if (project) span.setAttribute(ATTR.project, project);
				span.setAttribute(ATTR.httpStatus, res.statusCode);
				if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
			}
			span.end();
		});
		return context.with(trace.setSpan(named, span), handler, undefined, req, res, ...rest);
	};
}
