/**
 * What KEDA's nats-jetstream scaler reads, done as it does it (kedacore/keda,
 * pkg/scalers/nats_jetstream_scaler.go, on a single server): GET
 * `/jsz?acc=<account>&consumers=true&config=true` on the monitoring endpoint, the account's stream
 * by name, its consumer by name, and the lag `num_pending + num_ack_pending`. Where the consumer is
 * not found the scaler does not fail: it takes the stream's last sequence as the lag, and scales to
 * the maximum. Here that is an error, so a wrong name fails the test that reads it.
 */

/** A nats-jetstream trigger's metadata (k8s/components/keda-workers/scaledobjects.yaml). */
export interface NatsJetStreamTrigger {
	natsServerMonitoringEndpoint: string;
	account: string;
	stream: string;
	consumer: string;
	lagThreshold: string;
}

interface Jsz {
	account_details?: {
		name: string;
		stream_detail?: { name: string; state: { last_seq: number }; consumer_detail?: { name: string; num_pending: number; num_ack_pending: number }[] }[];
	}[];
}

/** The /jsz URL the scaler asks (monitoring endpoint as host:port, as the trigger gives it). */
export const jszUrl = (endpoint: string, account: string) => `http://${endpoint}/jsz?acc=${account}&consumers=true&config=true`;

/** The trigger's lag on the server at `endpoint` (host:port); throws where the scaler would fall back or fail. */
export async function scalerLag(endpoint: string, trigger: Pick<NatsJetStreamTrigger, "account" | "stream" | "consumer">): Promise<number> {
	const res = await fetch(jszUrl(endpoint, trigger.account), { signal: AbortSignal.timeout(5000) });
	if (!res.ok) throw new Error(`/jsz answered ${res.status}`);
	const jsz = (await res.json()) as Jsz;
	const account = jsz.account_details?.find(a => a.name === trigger.account);
	const stream = account?.stream_detail?.find(s => s.name === trigger.stream);
	if (!stream) throw new Error(`KEDA finds no stream ${trigger.stream} in account ${trigger.account} (it reports "stream not found")`);
	const consumer = stream.consumer_detail?.find(c => c.name === trigger.consumer);
	if (!consumer)
		throw new Error(
			`KEDA finds no consumer ${trigger.consumer} on stream ${trigger.stream}: ` +
				`it would take the stream's last sequence (${stream.state.last_seq}) as the lag`,
		);
	return consumer.num_pending + consumer.num_ack_pending;
}
