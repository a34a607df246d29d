/**
 * Calls to another node that may safely run twice are sent twice when the first goes
 * unanswered for a while. Moleculer sends a request over NATS once and waits for the answer up
 * to the request timeout; when a NATS node dies, a request (or its answer) that was in that
 * node's buffers, or that was published while the callee was moving its subscriptions to
 * another node, is lost, and the client would get a 503 after the whole timeout. Here, when
 * the first attempt has no answer after `hedgeAfterMs`, the same call goes out once more (a
 * copy of the context: same params, meta and request id) and the first answer wins (an error of
 * the first attempt waits for the copy already sent, which may still succeed).
 *
 * Only actions that say so: `hedge: true` (reads, and `events.push`, whose event id and JetStream
 * msgID follow from the request so a second publish is stored once), and cached actions
 * (reads by nature) unless they say `hedge: false`. Streams are never sent twice. Each copy sent
 * counts in `hedged_calls_total{action}` (docs/operations.md#metrics).
 */
import type { Context, Middleware, ServiceBroker } from "moleculer";
import { Stream } from "stream";

/** Remote calls sent a second time, by action. */
export const HEDGED_CALLS = "hedged.calls.total";

interface HedgeableAction {
	name?: string;
	hedge?: boolean;
	cache?: unknown;
}

export const isHedged = (action: HedgeableAction): boolean => action.hedge === true || (!!action.cache && action.hedge !== false);

interface TransitLike {
	removePendingRequest(id: string): void;
}

export function HedgedCallsMiddleware(hedgeAfterMs: number): Middleware {
	let transit: TransitLike | undefined;
	let metrics: ServiceBroker["metrics"] | undefined;
	return {
		name: "HedgedCalls",
		created(broker: ServiceBroker & { transit?: TransitLike }) {
			transit = broker.transit;
			if (!broker.isMetricsEnabled()) return;
			metrics = broker.metrics;
			metrics.register({
				name: HEDGED_CALLS,
				type: "counter",
				labelNames: ["action"],
				description: "Remote calls sent a second time, their first request unanswered",
			});
		},
		remoteAction(next: (ctx: Context) => Promise<unknown>, action: HedgeableAction) {
			if (!isHedged(action)) return next;
			const labels = { action: action.name };
			return function hedged(ctx: Context): Promise<unknown> {
				if (ctx.params instanceof Stream || (ctx as { stream?: unknown }).stream) return next(ctx);
				return new Promise((resolve, reject) => {
					let settled = false;
					let running = 0;
					let firstError: Error | undefined;
					const unanswered = new Set<Context>();
					// An attempt that is never answered (its request was lost, which is why it was sent
					// twice) stays in the transit's table of requests awaiting an answer: Moleculer's own
					// clean-up knows the first attempt's id only, and the request timeout (outside this
					// middleware) ends the call, not the attempts.
					const forget = () => {
						for (const lost of unanswered) transit?.removePendingRequest(lost.id);
						unanswered.clear();
					};
					// Only once a copy is out: the first attempt alone is Moleculer's to clean up.
					let lastResort: NodeJS.Timeout | undefined;
					const settle = (answer: () => void) => {
						settled = true;
						clearTimeout(timer);
						clearTimeout(lastResort);
						forget();
						answer();
					};
					const attempt = (c: Context) => {
						running++;
						unanswered.add(c);
						next(c).then(
							value => {
								running--;
								unanswered.delete(c);
								if (!settled) settle(() => resolve(value));
							},
							(err: Error) => {
								running--;
								unanswered.delete(c);
								const answer = (firstError ??= err);
								if (settled) return;
								// An answer, even an error, came back: no reason to send it again. The first
								// attempt's error waits for a copy already sent (it may still succeed); a copy's
								// error is the answer, as the first attempt, lost, would never give one.
								if (c === ctx) clearTimeout(timer);
								if (running === 0 || c !== ctx) settle(() => reject(answer));
							},
						);
					};
					const timer = setTimeout(() => {
						if (settled) return;
						metrics?.increment(HEDGED_CALLS, labels);
						attempt(ctx.copy());
						// Both attempts lost: the call's timeout ends the call, this forgets the attempts.
						const timeoutMs = ctx.options?.timeout;
						if (timeoutMs && timeoutMs > 0) {
							lastResort = setTimeout(forget, Math.max(0, timeoutMs - hedgeAfterMs));
							lastResort.unref();
						}
					}, hedgeAfterMs);
					attempt(ctx);
				});
			};
		},
	};
}
