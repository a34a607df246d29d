/**
 * Moleculer's request metrics, with the gateway's HTTP entry point measured more cheaply.
 *
 * Moleculer's own Metrics middleware makes five metric updates per action call (four of them
 * hashing four labels) and keeps a sliding quantile window: about 10 µs, which on a cached GET is
 * a sixth of the whole request. Every action keeps those metrics, except moleculer-web's `rest`
 * action, which every HTTP request passes: it records one histogram observation instead, labelled
 * with the answer's status (`api_http_request_time`, in milliseconds, with its `_count`), which is
 * what an operator reads request rate, errors and latency from. See docs/architecture.md#metrics.
 *
 * It takes the built-in middleware's place in Moleculer's internal list (moleculer.config.ts).
 */
import type { ServerResponse } from "http";
import * as moleculer from "moleculer";
import type { Context, Middleware, ServiceBroker } from "moleculer";

export const HTTP_REQUEST_TIME = "api.http.request.time";

/** The action every HTTP request is (moleculer-web's, in the gateway service). */
const isHttpEntry = (action: { name?: string; rawName?: string; service?: { name?: string } }) => action.rawName === "rest" && action.service?.name === "api";

type Handler = (ctx: Context) => Promise<unknown>;
type BuiltIn = Middleware & { localAction(next: Handler, action: object): Handler };
/** Moleculer's built-in middlewares (exported, though its typings leave them out). */
const builtIns = (moleculer as unknown as { Middlewares: Record<string, (broker: ServiceBroker) => BuiltIn> }).Middlewares;

/**
 * Records one HTTP request in `api_http_request_time`: its time in milliseconds and its status.
 * The gateway's requests that skip moleculer-web (gateway/edge/cached-get-fast-path.ts) are recorded with it too.
 */
export function httpRequestObserver(broker: ServiceBroker): (ms: number, status: number) => void {
	if (!broker.isMetricsEnabled()) return () => undefined;
	// The histogram itself, not its name: no registry look-up per request.
	let histogram: { observe(value: number, labels: object): void } | null = null;
	const statusLabels = new Map<number, { status: string }>();
	const labelsOf = (status: number) => {
		let labels = statusLabels.get(status);
		if (!labels) statusLabels.set(status, (labels = { status: String(status) }));
		return labels;
	};
	return (ms, status) => {
		// Registered by this middleware's `created`: a broker without it records nothing here.
		histogram ??= broker.metrics.getMetric(HTTP_REQUEST_TIME) as unknown as { observe(value: number, labels: object): void } | null;
		histogram?.observe(ms, labelsOf(status));
	};
}

/**
 * A factory: Moleculer calls a middleware given as a function with the broker (its typings only
 * name objects), which the built-in one needs from the start.
 */
export function RequestMetricsMiddleware(): Middleware {
	return ((broker: ServiceBroker) => {
		const builtIn = builtIns.Metrics.call(broker, broker);

		function httpEntry(next: Handler): Handler {
			const observe = httpRequestObserver(broker);
			return function httpRequestMetrics(ctx: Context) {
				const started = performance.now();
				return next(ctx).then(
					result => {
						const res = (ctx.params as { res?: ServerResponse }).res;
						observe(performance.now() - started, res?.statusCode ?? 200);
						return result;
					},
					(err: unknown) => {
						// The gateway's error handler answers after this: its status is known when the answer is sent.
						const res = (ctx.params as { res?: ServerResponse }).res;
						res?.once("close", () => observe(performance.now() - started, res.statusCode));
						throw err;
					},
				);
			};
		}

		return {
			...builtIn,
			name: "Metrics",
			created(this: ServiceBroker) {
				builtIn.created?.call(broker, broker);
				if (!broker.isMetricsEnabled()) return;
				broker.metrics.register({
					name: HTTP_REQUEST_TIME,
					type: "histogram",
					labelNames: ["status"],
					unit: "millisecond",
					description: "HTTP requests answered by the gateway, by status, and their time in milliseconds",
					quantiles: false,
					// Few whole-number buckets: each one is a property update on every request.
					buckets: [1, 5, 25, 100, 500, 2500, 10000],
				});
			},
			localAction(next: Handler, action: object) {
				if (broker.isMetricsEnabled() && isHttpEntry(action)) return httpEntry(next);
				return builtIn.localAction.call(broker, next, action);
			},
		} as Middleware;
	}) as unknown as Middleware;
}
