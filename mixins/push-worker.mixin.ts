/**
 * What every integration worker shares: its own consumer group on the durable `push` channel,
 * the integration's settings (active, event flags, secrets decrypted: push-settings.mixin.ts), and
 * idempotent delivery. A worker only says which deliveries a push needs (`deliveries(event, settings)`:
 * one per target, e.g. a recipient or a task comment); for each one this mixin
 * - skips it when the delivery log says it was delivered already (its target is claimed first;
 *   only an event's surely first delivery, on the in-process channel, has nothing to skip),
 * - runs it, and records it as delivered (the record lives where the events live),
 * - treats a PermanentError (4xx, refused target) as final: logged, not retried,
 * - and fails the message when any delivery failed otherwise, so the channel retries it with
 *   backoff and finally dead-letters it. Deliveries done in an earlier attempt are not repeated.
 */
import type { Service, ServiceSchema, ServiceSettingSchema } from "moleculer";
import { config } from "../config";
import { PushBacklogMixin } from "./push-backlog.mixin";
import { PushSettingsMixin, type IntegrationSettings, type PushSettingsMethods } from "./push-settings.mixin";
import { deliveryKey, MemoryDeliveryLog, RedisDeliveryLog, type ClaimResult, type DeliveryLog, type DeliveryLogOptions } from "../lib/push/delivery-log";
import { InProcessChannelAdapter } from "../lib/push/in-process-channel-adapter";
import { KvDeliveryLog } from "../lib/push/kv-delivery-log";
import { serviceModule } from "../lib/moleculer/service-module";
import { findIntegration } from "../lib/integrations/catalogue";
import { handlesEvent } from "../lib/integrations/settings";
import { PermanentError } from "../lib/outbound/errors";
import {
	channelBackendIfValid,
	type ChannelBackend,
	DEAD_LETTER_QUEUE,
	DELIVERY_RECORD_MS,
	nanos,
	PUSH_CHANNEL,
	pushNames,
	slowestDeliveryMs,
	type PushGroup,
} from "../lib/push/channel";
import type { PushEvent } from "../lib/push/payload";
import { AttemptsInFlight, type Attempt, type ChannelMessage } from "../lib/push/attempts-in-flight";

export interface Delivery {
	/** What the delivery goes to (recipient, channel URI, task action): with the event id, its idempotency key. */
	target: string;
	/** How logs name it, when the target holds a secret (an IRC server password, a channel key); else the target. */
	label?: string;
	run(): Promise<void>;
}

export type { IntegrationSettings } from "./push-settings.mixin";

/** What a worker provides: the deliveries one push event needs (one per target). */
export interface PushWorkerMethods {
	deliveries(event: PushEvent, settings: IntegrationSettings): Delivery[] | Promise<Delivery[]>;
}

export interface PushWorkerOptions {
	group: PushGroup;
	slug: string;
	/** Run the deliveries of one event at the same time (independent targets) rather than in order. */
	parallel?: boolean;
}

/** What the mixin keeps on the worker instance. */
interface PushWorkerVars {
	/** Set when the worker starts. */
	deliveryPrefix: string;
	deliveryLog: DeliveryLog;
	/** Where the events live, read once (null: a configuration the channels middleware refuses). */
	backend: ChannelBackend | null;
	attempts: AttemptsInFlight;
}

/**
 * One event's deliveries under way: their keys and claims, what failed (the channel retries the
 * event for those), and each record's outcome, taken at once (null, or its error): a record that
 * fails while a later delivery is still running must not be an unhandled rejection, which ends the process.
 */
interface EventRun {
	event: PushEvent;
	keys: string[];
	claims: PromiseSettledResult<ClaimResult>[];
	failures: string[];
	records: Promise<Error | null>[];
}

interface PushWorkerMixinMethods extends PushWorkerMethods, PushSettingsMethods {
	claimDelivery(log: DeliveryLog, key: string): Promise<ClaimResult>;
	handlePush(event: PushEvent, attempt: Attempt): Promise<void>;
	acceptsEvent(event: PushEvent): boolean;
	claimAll(keys: string[], first: boolean): Promise<PromiseSettledResult<ClaimResult>[]>;
	runDelivery(run: EventRun, d: Delivery, i: number): Promise<void>;
	recordDelivered(run: EventRun, key: string): void;
	failForRetry(run: EventRun, count: number): Promise<void>;
}

type PushWorkerService = Service & PushWorkerVars & PushWorkerMixinMethods;

/** A claim must outlast the slowest delivery (lib/push/channel.ts). */
const claimMs = () => slowestDeliveryMs(config);

/**
 * The delivery records live where the events live, so that losing one store never loses the
 * records of events the other still holds: a JetStream bucket beside the push stream, Redis
 * beside Redis Streams, the in-process channel's journal in the all-in-one process.
 */
function deliveryLogFor(broker: { namespace?: string; channelAdapter?: unknown }, backend: ChannelBackend | null, opts: DeliveryLogOptions): DeliveryLog {
	if (backend?.kind === "nats") {
		const names = pushNames(broker.namespace ?? "");
		return new KvDeliveryLog(backend.url, {
			...opts,
			bucket: names.deliveryBucket,
			aliveBucket: names.workersBucket,
			replicas: config.pushStreamReplicas,
			// A worker that died is noticed about when JetStream hands its events to another replica.
			aliveMs: config.pushAckWaitMs,
		});
	}
	if (backend?.kind === "redis") return new RedisDeliveryLog(backend.url, opts);
	const adapter = broker.channelAdapter;
	return adapter instanceof InProcessChannelAdapter ? adapter.deliveryLog : new MemoryDeliveryLog(opts);
}

export function PushWorkerMixin(opts: PushWorkerOptions): Partial<ServiceSchema> {
	const def = findIntegration(opts.slug)!;
	const schema: Partial<ServiceSchema<ServiceSettingSchema, PushWorkerMixinMethods, PushWorkerVars>> = {
		mixins: [PushSettingsMixin(opts.slug), PushBacklogMixin(opts.group)],

		created() {
			this.backend = channelBackendIfValid(config);
			// Only the in-process channel's delivery count is exact; JetStream can deliver a message again
			// as a first delivery (lib/push/attempts-in-flight.ts). Elsewhere every attempt claims.
			this.attempts = new AttemptsInFlight(config.pushAckWaitMs, { trustsFirstDelivery: this.backend?.kind === "memory" });
		},

		channels: {
			[PUSH_CHANNEL]: {
				group: opts.group,
				maxInFlight: config.pushMaxInFlight,
				maxRetries: config.pushMaxDeliveries,
				deadLettering: { enabled: true, queueName: DEAD_LETTER_QUEUE },
				// Only used if the consumer was not provisioned (see lib/push/provisioning.ts).
				nats: { consumerOptions: { config: { deliver_policy: "all", ack_wait: nanos(config.pushAckWaitMs) } } },
				// Redis Streams: from the start of the stream; a failed or orphaned message is reclaimed after this idle time.
				redis: { startID: "0", minIdleTime: Math.max(config.pushRetryDelayMs, claimMs(), 1000), claimInterval: 500 },
				async handler(this: PushWorkerService, event: PushEvent, raw?: ChannelMessage) {
					await this.attempts.run(String(event?.id), raw, attempt => this.handlePush(event, attempt));
				},
			},
		},

		started() {
			this.deliveryPrefix = `${this.broker.namespace || "gitlab"}:`;
			this.deliveryLog = deliveryLogFor(this.broker, this.backend, {
				prefix: this.deliveryPrefix,
				pendingMs: claimMs(),
				doneMs: DELIVERY_RECORD_MS,
			});
		},

		async stopped() {
			await (this.deliveryLog as DeliveryLog | undefined)?.close();
		},

		methods: {
			/**
			 * Claims a delivery; while another live worker holds it (a redelivery racing the first
			 * attempt), waits for that one to finish rather than failing the message at once.
			 */
			async claimDelivery(log: DeliveryLog, key: string) {
				const deadline = Date.now() + claimMs();
				for (;;) {
					const claim = await log.claim(key);
					if (claim !== "busy" || Date.now() > deadline) return claim;
					await new Promise(r => setTimeout(r, 250));
				}
			},

			/** `attempt`: whether this is surely the event's first delivery to this group (lib/push/attempts-in-flight.ts). */
			async handlePush(event: PushEvent, attempt: Attempt): Promise<void> {
				if (!this.acceptsEvent(event)) return;
				const push = event.push;
				const settings: IntegrationSettings | null = await this.loadSettings(push.project_id);
				if (!handlesEvent(def, settings, push.object_kind)) return;

				const deliveries: Delivery[] = await this.deliveries(event, settings!);
				const keys = deliveries.map(d => deliveryKey(this.deliveryPrefix, opts.group, event.id, d.target));
				const claims = await this.claimAll(keys, !event.replay_group && attempt.surelyFirst());
				const run: EventRun = { event, keys, claims, failures: [], records: [] };
				if (opts.parallel) await Promise.all(deliveries.map((d, i) => this.runDelivery(run, d, i)));
				else for (const [i, d] of deliveries.entries()) await this.runDelivery(run, d, i);
				await this.failForRetry(run, deliveries.length);
			},

			/** A well-formed event for this group: a replayed dead letter is for the group that failed it only. */
			acceptsEvent(event: PushEvent): boolean {
				if (!event || typeof event.id !== "string" || !event.push) {
					this.logger.error("Dropped a malformed push event", event && (event as { id?: unknown }).id);
					return false;
				}
				return !event.replay_group || event.replay_group === opts.group;
			},

			/**
			 * An event's surely first delivery to this group (an exact count, not a replay, not late: see
			 * lib/push/attempts-in-flight.ts) has nothing recorded and nobody else working on it: no claim,
			 * one write per delivery. Any other claims every target at once (one round trip for the event).
			 */
			async claimAll(keys: string[], first: boolean): Promise<PromiseSettledResult<ClaimResult>[]> {
				if (first) return keys.map(() => ({ status: "fulfilled", value: "go" }));
				return Promise.allSettled(keys.map(key => this.claimDelivery(this.deliveryLog, key)));
			},

			/** Runs one claimed delivery and records it; a PermanentError is final (recorded, not retried), another failure releases the claim. */
			async runDelivery(run: EventRun, d: Delivery, i: number): Promise<void> {
				const { event, keys, claims, failures } = run;
				const shown = d.label ?? d.target;
				const claim = claims[i];
				if (claim.status === "rejected") return void failures.push(`${shown}: ${(claim.reason as Error)?.message ?? claim.reason}`);
				if (claim.value === "done") return;
				if (claim.value === "busy") return void failures.push(`${shown}: in progress elsewhere`);
				try {
					await d.run();
					this.recordDelivered(run, keys[i]);
				} catch (err) {
					if (err instanceof PermanentError) {
						this.logger.warn(`Push ${event.id}, project ${event.push.project_id}: ${shown} not delivered (${err.message}); not retried`);
						this.recordDelivered(run, keys[i]);
					} else {
						await this.deliveryLog.release(keys[i]).catch(() => undefined);
						failures.push(`${shown}: ${(err as Error).message}`);
					}
				}
			},

			/** Records a delivery as done without holding up the next one; all are awaited before the event is acknowledged. */
			recordDelivered(run: EventRun, key: string): void {
				run.records.push(
					this.deliveryLog.complete(key).then(
						() => null,
						(err: unknown) => (err instanceof Error ? err : new Error(String(err))),
					),
				);
			},

			/** Once every record is in: any failure fails the message, so that the channel retries it with backoff, then dead-letters it. */
			async failForRetry(run: EventRun, count: number): Promise<void> {
				const { event, failures } = run;
				const unrecorded = (await Promise.all(run.records)).filter(err => err !== null);
				if (unrecorded.length) failures.push(`${unrecorded.length} deliveries made but not recorded: ${unrecorded[0].toString()}`);

				if (failures.length) {
					this.logger.warn(
						`Push ${event.id}, project ${event.push.project_id}: ${failures.length} deliveries failed, will retry: ${failures.join("; ")}`,
					);
					throw new Error(`${failures.length} of ${count} deliveries failed`);
				}
			},
		},
	};
	return serviceModule(schema);
}
