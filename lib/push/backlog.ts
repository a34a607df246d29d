/**
 * A worker group's backlog on JetStream (docs/operations.md#scaling): the events its durable
 * consumer has not delivered yet (`num_pending`) plus those delivered and not yet acknowledged
 * (`num_ack_pending`), the same sum KEDA's nats-jetstream scaler reads from the server's /jsz.
 * Workers export it as the gauge `push_consumer_backlog` (mixins/push-backlog.mixin.ts).
 */
import type { JetStreamManager } from "nats";

/** What JetStream says of a consumer (its ConsumerInfo, or /jsz's consumer_detail). */
export interface ConsumerCounts {
	num_pending: number;
	num_ack_pending: number;
}

export function backlogOf(counts: ConsumerCounts): number {
	return counts.num_pending + counts.num_ack_pending;
}

/** The backlog of `group`'s durable consumer on `stream`, asked of the server. */
export async function readBacklog(manager: Pick<JetStreamManager, "consumers">, stream: string, group: string): Promise<number> {
	return backlogOf(await manager.consumers.info(stream, group));
}
