/**
 * Where a request enters the gateway (docs/operations.md#traces): it is named once (its correlation
 * id, which moleculer-web and the fast path then answer in X-Request-ID) and, when its trace is
 * sampled, gets the trace's root span, which the action calls it makes are children of. A client's own
 * `traceparent` is not followed: a client could otherwise join our traces to its own or force
 * every request to be sampled.
 *
 * The hook: `tracedRequests(handler)` wraps the gateway's request handler (services/api.service.ts,
 * createServer).
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, context, trace } from "@opentelemetry/api";
import crypto from "crypto";
import type { IncomingMessage, ServerResponse } from "http";
import { ATTR } from "./attributes";
import { requestIdOf, withCorrelationId } from "./correlation";
import { sampleNewTrace, tracer } from "./telemetry";

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** What moleculer-web leaves on a request it routed. */
type RoutedRequest = IncomingMessage & { $alias?: { fullPath?: string }; $ctx?: { meta?: { projectKey?: string } } };

/** The route template of a request moleculer-web did not route itself (the fast path), if any. */
export type RouteOf = (req: IncomingMessage) => string | undefined;

export function tracedRequests(handler: Handler, routeOf: RouteOf = () => undefined): Handler {
	return (req, res) => {
		const id = requestIdOf(req.headers, crypto.randomUUID);
		// The one name of the request downstream: moleculer-web and the fast path read X-Correlation-ID first.
		req.headers["x-correlation-id"] = id;
		const named = withCorrelationId(ROOT_CONTEXT, id);
		if (!sampleNewTrace()) return context.with(named, handler, undefined, req, res);
		const method = req.method ?? "GET";
		const span = tracer().startSpan(method, { kind: SpanKind.SERVER, attributes: { [ATTR.httpMethod]: method, [ATTR.correlationId]: id } }, named);
		res.once("close", () => {
			if (span.isRecording()) {
				const routed = req as RoutedRequest;
				const route = routed.$alias?.fullPath ?? routeOf(req);
				if (route) span.updateName(`${method} ${route}`).setAttribute(ATTR.httpRoute, route);
				const project = routed.$ctx?.meta?.projectKey;
				if (project) span.setAttribute(ATTR.project, project);
				span.setAttribute(ATTR.httpStatus, res.statusCode);
				if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
			}
			span.end();
		});
		context.with(trace.setSpan(named, span), handler, undefined, req, res);
	};
}
