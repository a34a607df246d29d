/**
 * The push events one worker process is handling right now, and whether an attempt may count as
 * an event's first (mixins/push-worker.mixin.ts): a first attempt writes no claim in the delivery
 * log, which is only sound while nothing else can run the same event.
 * - Only a channel whose delivery count is exact may say "first" at all: the in-process channel
 *   (its journal counts). JetStream can hand a message out again as a first delivery: with a
 *   node of a 3-node cluster killed, two of three consumers delivered a recent event a second
 *   time with no failure in between (a consumer's new leader behind on acknowledgements). Redis
 *   Streams gives no count. On both, every attempt claims.
 * - A redelivery that reaches this process while an attempt of the same event still runs here
 *   waits for that attempt, then runs with claims (finding its deliveries recorded), instead of
 *   racing it or polling a claim it holds.
 * - A first attempt that only reaches its deliveries half an ack wait after its message came is
 *   not surely first any more, and claims like a redelivery.
 */

/** What the channel hands the handler beside the event (JetStream's JsMsg, the in-process adapter's message). */
export interface ChannelMessage {
	info?: { deliveryCount?: number };
}

export interface Attempt {
	/**
	 * Whether this is surely the message's first delivery with nothing else running its event: an
	 * exact count of 1, no earlier attempt waited for here, not late (see above). Asked when the
	 * deliveries start.
	 */
	surelyFirst(): boolean;
}

export interface AttemptsOptions {
	/** Whether the channel's delivery count of 1 surely means the first delivery (the in-process channel's journal). */
	trustsFirstDelivery: boolean;
}

export class AttemptsInFlight {
	/** Per event id, the last attempt queued here. */
	private readonly latest = new Map<string, Promise<void>>();

	constructor(
		private readonly ackWaitMs: number,
		private readonly opts: AttemptsOptions,
	) {}

	/** Runs `handle` for one message of event `eventId`, after any attempt of the same event already running here. */
	async run(eventId: string, message: ChannelMessage | undefined, handle: (attempt: Attempt) => Promise<void>): Promise<void> {
		const receivedAt = Date.now();
		const earlier = this.latest.get(eventId);
		const countSaysFirst = this.opts.trustsFirstDelivery && message?.info?.deliveryCount === 1 && !earlier;
		const done = (async () => {
			if (earlier) await earlier;
			await handle({ surelyFirst: () => countSaysFirst && Date.now() - receivedAt <= this.ackWaitMs / 2 });
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
