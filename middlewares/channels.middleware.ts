/**
 * Durable channels (@moleculer/channels 0.1.8) for the `push` events, from the config:
 * JetStream on the NATS transporter (always the object adapter form: the URL-string form of
 * 0.1.8 silently connects to localhost, docs/architecture.md#channel-adapters), Redis Streams with
 * CHANNELS=redis://…, and the in-process adapter (journaled under DATA_DIR/channels) in the
 * all-in-one default.
 *
 * Two middlewares:
 * - the channels middleware, wrapped so that a node connects only when it runs a publisher or
 *   a consumer, and provisions the stream and every group's consumer first (no event published
 *   before a worker's first start is lost);
 * - ChannelRetry: a failed delivery is NAKed with a growing delay instead of the adapter's
 *   immediate NAK, and long handlers keep telling JetStream they are working (no redelivery
 *   to another replica while one is still busy).
 */
import path from "path";
import { Adapters, Middleware as ChannelsMiddleware } from "@moleculer/channels";
import type { Middleware, ServiceBroker } from "moleculer";
import type { JetStreamClient, JetStreamManager, JsMsg, NatsConnection, NatsError } from "nats";
import type { Config } from "../config";
import { InProcessChannelAdapter } from "../lib/push/in-process-channel-adapter";
import { channelBackend, DEAD_LETTER_QUEUE, natsConnectionOptions, PUSH_CHANNEL, PUSH_GROUPS, retryDelay, type ChannelBackend } from "../lib/push/channel";
import { provisionJetStream, provisionRedis } from "../lib/push/provisioning";

type ChannelsConfig = Pick<
	Config,
	"channels" | "transporter" | "namespace" | "pushMaxInFlight" | "pushMaxDeliveries" | "pushRetryDelayMs" | "pushAckWaitMs" | "pushStreamReplicas" | "dataDir"
>;

/** Services that publish declare `settings.$channelPublisher: true`; consumers have `channels`. */
function usesChannels(broker: ServiceBroker): boolean {
	return broker.services.some(s => !!(s.schema as { channels?: unknown }).channels || !!(s.settings as { $channelPublisher?: boolean })?.$channelPublisher);
}

/** JetStream API calls wait this long for an answer (nats.js: 5 s), for a cluster that is busy or electing leaders. */
const JS_API_TIMEOUT_MS = 15_000;

type ConsumerHandler = (err: NatsError | null, message: JsMsg) => Promise<void>;
const NatsAdapter = Adapters.NATS as unknown as new (opts: object) => {
	connection: NatsConnection;
	manager: JetStreamManager;
	client: JetStreamClient;
	connect(): Promise<void>;
	createConsumerHandler(chan: unknown): ConsumerHandler;
	createStream(name: string, subjects: string[], options: object): Promise<unknown>;
};

/** A message that can tell its server the handler is still working on it (a JetStream message). */
interface WorkingSignal {
	working(): void;
}

function hasWorkingSignal(message: unknown): message is WorkingSignal {
	return !!message && typeof (message as Partial<WorkingSignal>).working === "function";
}

/**
 * The message as the adapter's handler sees it, minus the adapter's "working" signal sent before
 * every message: JetStream started the ack timer when it delivered the message a moment ago, so
 * that signal is one more request to the server per message and group for nothing. Later
 * signals (ChannelRetry's heartbeat during a long handler) go through.
 */
export function withoutFirstWorking<M>(message: M): M {
	if (!hasWorkingSignal(message)) return message;
	const view = Object.create(message) as M & WorkingSignal;
	let first = true;
	view.working = () => {
		if (first) first = false;
		else message.working();
	};
	return view;
}

/** The JetStream adapter with more patience for the JetStream API (subscribing looks the consumer up). */
export class PatientNatsAdapter extends NatsAdapter {
	async connect(): Promise<void> {
		await super.connect();
		this.manager = await this.connection.jetstreamManager({ timeout: JS_API_TIMEOUT_MS });
		this.client = this.connection.jetstream({ timeout: JS_API_TIMEOUT_MS });
	}

	createConsumerHandler(chan: unknown): ConsumerHandler {
		const handle = super.createConsumerHandler(chan);
		return (err, message) => handle(err, withoutFirstWorking(message));
	}

	/**
	 * The streams are provisioned before anyone subscribes, with this project's settings: one that
	 * exists is left as it is. The adapter would add it again with its own settings, which the
	 * server refuses, and log that as an error at every worker's start.
	 */
	async createStream(name: string, subjects: string[], options: object): Promise<unknown> {
		try {
			return await this.manager.streams.info(name);
		} catch {
			return super.createStream(name, subjects, options);
		}
	}
}

interface StreamReader {
	xreadgroupBuffer(...args: unknown[]): Promise<unknown>;
	xgroup(...args: unknown[]): Promise<unknown>;
}
const RedisAdapter = Adapters.Redis as unknown as new (opts: object) => {
	clients: Map<string, StreamReader>;
	logger: { warn(...args: unknown[]): void };
	subscribe(chan: RedisChannel): Promise<void>;
};
interface RedisChannel {
	id: string;
	name: string;
	group: string;
	unsubscribing?: boolean;
}

/** After a failed read, the next one waits this long (the library reads again at once: a loop of errors). */
const READ_RETRY_MS = 1000;

/**
 * Redis Streams, where a consumer group that is gone is made again. A Redis that restarted without
 * its data (or a replica promoted without the groups) answers every read `NOGROUP`: the library
 * logged the error and read again at once, thousands of lines a second, and consumed nothing more.
 */
export class RegroupingRedisAdapter extends RedisAdapter {
	async subscribe(chan: RedisChannel): Promise<void> {
		await super.subscribe(chan);
		const client = this.clients.get(chan.id);
		if (!client) return;
		const read = client.xreadgroupBuffer.bind(client);
		client.xreadgroupBuffer = async (...args: unknown[]) => {
			try {
				return await read(...args);
			} catch (err) {
				if (chan.unsubscribing) throw err;
				if (/^NOGROUP/.test((err as Error).message)) {
					// From the stream's start: what was published since the data was lost.
					await client.xgroup("CREATE", chan.name, chan.group, "0", "MKSTREAM").catch(() => undefined);
					this.logger.warn(`The consumer group '${chan.group}' of '${chan.name}' was gone (Redis lost its data?): made again.`);
					return null;
				}
				await new Promise(resolve => setTimeout(resolve, READ_RETRY_MS));
				throw err;
			}
		};
	}
}

/** The adapter for a backend: for NATS, options in object form (the URL-string form of 0.1.8 ignores the URL). */
export function adapterFor(backend: ChannelBackend, cfg: ChannelsConfig): object {
	const common = {
		maxInFlight: cfg.pushMaxInFlight,
		maxRetries: cfg.pushMaxDeliveries,
		deadLettering: { enabled: true, queueName: DEAD_LETTER_QUEUE },
	};
	switch (backend.kind) {
		case "nats":
			// Reconnecting without end, as the transporter does (nats.js gives up after 10 tries, 2 s apart).
			return new PatientNatsAdapter({
				...common,
				nats: { connectionOptions: { ...natsConnectionOptions(backend.url), name: "channels", maxReconnectAttempts: -1 } },
			});
		case "redis":
			return new RegroupingRedisAdapter({ ...common, redis: { url: backend.url } });
		default:
			// Durable: its journal under DATA_DIR (events, their state per group, dead letters, delivery records).
			return new InProcessChannelAdapter(common, { [PUSH_CHANNEL]: PUSH_GROUPS }, { dir: path.join(cfg.dataDir, "channels") });
	}
}

async function provision(backend: ChannelBackend, broker: ServiceBroker, cfg: ChannelsConfig): Promise<void> {
	const prefix = broker.namespace ?? "";
	if (backend.kind === "nats")
		await provisionJetStream(backend.url, { prefix, maxInFlight: cfg.pushMaxInFlight, ackWaitMs: cfg.pushAckWaitMs, replicas: cfg.pushStreamReplicas });
	else if (backend.kind === "redis") await provisionRedis(backend.url, { prefix });
}

/**
 * What ChannelRetry uses of a raw message, when the adapter's message has it (JetStream's JsMsg and
 * the in-process adapter's message do; a Redis stream entry does not).
 */
interface RetryableMessage {
	info?: { deliveryCount?: number };
	nak?(delayMs?: number): void;
	working?(): void;
}

export function ChannelsMiddlewares(cfg: ChannelsConfig): Middleware[] {
	// A configuration without a durable store only fails the nodes that need one.
	let backend: ChannelBackend = { kind: "memory" };
	let misconfigured: Error | null = null;
	try {
		backend = channelBackend(cfg);
	} catch (err) {
		misconfigured = err as Error;
	}
	const inner = ChannelsMiddleware({ adapter: adapterFor(backend, cfg), context: false } as never);
	let active = false;

	const channels = {
		...inner,
		name: "Channels",
		async started(broker: ServiceBroker) {
			if (!usesChannels(broker)) return;
			if (misconfigured) throw misconfigured;
			await provision(backend, broker, cfg);
			await inner.started();
			active = true;
		},
		async stopped() {
			if (!active) return;
			await inner.stopped();
			active = false;
		},
	};

	const retry = {
		name: "ChannelRetry",
		localChannel(next: (msg: unknown, raw: RetryableMessage | undefined) => Promise<unknown>, chan: { maxRetries?: number }) {
			const heartbeatMs = Math.max(500, Math.floor(cfg.pushAckWaitMs / 3));
			return async (msg: unknown, raw: RetryableMessage | undefined) => {
				const timer = hasWorkingSignal(raw) ? setInterval(() => raw.working(), heartbeatMs) : null;
				try {
					return await next(msg, raw);
				} catch (err) {
					const count = raw?.info?.deliveryCount;
					// The adapter's own NAK that follows is a no-op: a JetStream message takes the first ack/nak only.
					if (count && typeof raw?.nak === "function" && chan.maxRetries && count < chan.maxRetries) raw.nak(retryDelay(cfg.pushRetryDelayMs, count));
					throw err;
				} finally {
					if (timer) clearInterval(timer);
				}
			};
		},
	};

	return [channels, retry];
}

/** The adapter class of a broker's channel middleware, for the dead-letter tools. */
export function adapterKind(adapter: unknown): ChannelBackend["kind"] {
	if (adapter instanceof InProcessChannelAdapter) return "memory";
	if (adapter instanceof (Adapters.NATS as unknown as new () => object)) return "nats";
	if (adapter instanceof (Adapters.Redis as unknown as new () => object)) return "redis";
	throw new Error("unknown channel adapter");
}
