/**
 * The push events one worker process is handling right now. A first attempt writes no claim in
 * the delivery log (mixins/push-worker.mixin.ts), so nothing may run the same event beside it.
 * JetStream hands the event to nobody else while an attempt runs (the ChannelRetry middleware
 * keeps its ack deadline), but a deadline can pass while this process cannot reach NATS (a node
 * of the cluster lost, a reconnect), and the redelivery may come to this same process. So:
 * - a redelivery that reaches this process while an earlier attempt of the same event still runs
 *   here waits for that attempt, then runs with claims, instead of racing it;
 * - an attempt that has waited long enough for a redelivery to be possible (half the ack wait)
 *   before its deliveries start is told so, and claims them like any redelivery.
 */

/** What the channel hands the handler beside the event (JetStream's JsMsg, the in-process adapter's message). */
export interface ChannelMessage {
	info?: { deliveryCount?: number };
}

export interface Attempt {
	/** Which delivery of the message this is (1: the first), when the channel says; unset for one that waited here. */
	deliveryCount?: number;
	/** True when this attempt may no longer assume it is the only one (see above). */
	mayRace(): boolean;
}

export class AttemptsInFlight {
	/** Per event id, the last attempt queued here. */
	private readonly latest = new Map<string, Promise<void>>();

	constructor(private readonly ackWaitMs: number) {}

	/** Runs `handle` for one message of event `eventId`, after any attempt of the same event already running here. */
	async run(eventId: string, message: ChannelMessage | undefined, handle: (attempt: Attempt) => Promise<void>): Promise<void> {
		const receivedAt = Date.now();
		const earlier = this.latest.get(eventId);
		const done = (async () => {
			if (earlier) await earlier;
			await handle({
				deliveryCount: earlier ? undefined : message?.info?.deliveryCount,
				mayRace: () => !!earlier || Date.now() - receivedAt > this.ackWaitMs / 2,
			});
		})();
		const settled = done.then(
			() => undefined,
			() => undefined,
		);
		this.latest.set(eventId, settled);
		try {
			await done;
		} finally {
			if (this.latest.get(eventId) === settled) this.latest.delete(eventId);
		}
	}

	/** Events with an attempt running (or waiting) here. */
	get size(): number {
		return this.latest.size;
	}
}
