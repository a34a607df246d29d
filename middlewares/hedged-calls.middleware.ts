/**
 * Calls to another node that may safely run twice are sent twice when the first goes
 * unanswered for a while. Moleculer sends a request over NATS once and waits for the answer up
 * to the request timeout; when a NATS node dies, a request (or its answer) that was in that
 * node's buffers, or that was published while the callee was moving its subscriptions to
 * another node, is lost, and the client would get a 503 after the whole timeout. Here, when
 * the first attempt has no answer after `hedgeAfterMs`, the same call goes out once more (a
 * copy of the context: same params, meta and request id) and the first answer wins.
 *
 * Only actions that say so: `hedge: true` (reads, and `events.push`, whose event id and JetStream
 * msgID follow from the request so a second publish is stored once), and cached actions
 * (reads by nature) unless they say `hedge: false`. Streams are never sent twice.
 */
import type { Context, Middleware } from "moleculer";
import { Stream } from "stream";

interface HedgeableAction {
	hedge?: boolean;
	cache?: unknown;
}

export const isHedged = (action: HedgeableAction): boolean => action.hedge === true || (!!action.cache && action.hedge !== false);

interface TransitLike {
	removePendingRequest(id: string): void;
}

export function HedgedCallsMiddleware(hedgeAfterMs: number): Middleware {
	let transit: TransitLike | undefined;
	return {
		name: "HedgedCalls",
		created(broker: { transit?: TransitLike }) {
			transit = broker.transit;
		},
		remoteAction(next: (ctx: Context) => Promise<unknown>, action: HedgeableAction) {
			if (!isHedged(action)) return next;
			return function hedged(ctx: Context): Promise<unknown> {
				if (ctx.params instanceof Stream || (ctx as { stream?: unknown }).stream) return next(ctx);
				return new Promise((resolve, reject) => {
					let settled = false;
					let running = 0;
					let firstError: Error | undefined;
					const unanswered = new Set<Context>();
					const attempt = (c: Context) => {
						running++;
						unanswered.add(c);
						next(c).then(
							value => {
								running--;
								unanswered.delete(c);
								if (settled) return;
								settled = true;
								clearTimeout(timer);
								// The attempt that lost may never be answered (its request was lost, which is why
								// it was sent twice); nothing else would ever take it out of the transit's table.
								for (const lost of unanswered) transit?.removePendingRequest(lost.id);
								resolve(value);
							},
							(err: Error) => {
								running--;
								unanswered.delete(c);
								firstError ??= err;
								// An answer, even an error, came back: no reason to send it again.
								if (!settled && (running === 0 || c === ctx)) {
									clearTimeout(timer);
									if (running === 0) {
										settled = true;
										reject(firstError);
									}
								}
							},
						);
					};
					const timer = setTimeout(() => {
						if (!settled) attempt(ctx.copy());
					}, hedgeAfterMs);
					attempt(ctx);
				});
			};
		},
	};
}
