/**
 * The durable channel `push` (docs/architecture.md#push-channel): which adapter carries it, its names on
 * JetStream and Redis, the consumer groups, and the retry schedule. Pure, from the config.
 *
 * Names follow @moleculer/channels 0.1.8: the channel and the dead-letter queue get the broker
 * namespace as prefix (`ns.push`), and a JetStream stream name is that with `.` → `_`.
 */
import { withoutCredentials } from "../../config/credentials";

export const PUSH_CHANNEL = "push";
export const DEAD_LETTER_QUEUE = "DEAD_PUSH";

/** Every worker's consumer group. Provisioned up front so no group misses an early event. */
export const PUSH_GROUPS = ["task-tracker-commenter", "push-mailer", "irc-sender"] as const;
export type PushGroup = (typeof PUSH_GROUPS)[number];

/** How long events and dead letters are kept (and delivery records remembered). */
export const RETENTION_MS = 7 * 24 * 3600 * 1000;
export const MAX_RETAINED_EVENTS = 1_000_000;
const MAX_RETRY_DELAY_MS = 60_000;
/** How long a worker remembers a delivery it made, counted from when it made it. */
export const DELIVERY_RECORD_MS = RETENTION_MS + MAX_RETRY_DELAY_MS;
/**
 * A dead letter is replayed only while its event is younger than this (docs/architecture.md#dead-letters):
 * every delivery made of it, made after it was received, is then still on record for a day more,
 * which covers the replay's own retries, a worker group that is down meanwhile and clock skew.
 */
export const REPLAY_WINDOW_MS = DELIVERY_RECORD_MS - 24 * 3600 * 1000;

/** Whether a dead letter whose event was received at `receivedAt` (ISO) may still be replayed at `now`. */
export function replayable(receivedAt: unknown, now: number): boolean {
	const at = typeof receivedAt === "string" ? Date.parse(receivedAt) : NaN;
	return Number.isFinite(at) && now - at < REPLAY_WINDOW_MS;
}

export type ChannelBackend = { kind: "nats"; url: string } | { kind: "redis"; url: string } | { kind: "memory" };

export interface ChannelConfig {
	channels: string;
	transporter: string;
	namespace: string;
}

/**
 * CHANNELS wins; otherwise JetStream on a NATS transporter, Redis Streams on a Redis
 * transporter, and the in-process adapter when there is no transporter (all-in-one).
 * A TCP transporter has no durable store to share: CHANNELS must then be set.
 */
export function channelBackend(cfg: ChannelConfig): ChannelBackend {
	const pick = (url: string): ChannelBackend | null => {
		if (/^nats:\/\//i.test(url)) return { kind: "nats", url };
		if (/^rediss?:\/\//i.test(url)) return { kind: "redis", url };
		return null;
	};
	if (cfg.channels) {
		const b = pick(cfg.channels);
		if (b) return b;
		throw new Error(`CHANNELS=${withoutCredentials(cfg.channels)}: expected a nats://, redis:// or rediss:// URL`);
	}
	if (!cfg.transporter) return { kind: "memory" };
	const b = pick(cfg.transporter);
	if (b) return b;
	throw new Error("TRANSPORTER is neither NATS nor Redis: set CHANNELS=nats://… or redis://… for the durable push channel");
}

/**
 * The backend, or null when the configuration names none that works: for code that only adapts to
 * the backend (the channels middleware refuses to start a node that needs a channel then).
 */
export function channelBackendIfValid(cfg: ChannelConfig): ChannelBackend | null {
	try {
		return channelBackend(cfg);
	} catch {
		return null;
	}
}

function prefixed(prefix: string, name: string): string {
	return prefix ? `${prefix}.${name}` : name;
}

/** The JetStream stream that holds a channel (or the dead-letter queue). */
const streamName = (subject: string) => subject.split(".").join("_");

export interface PushNames {
	/** Subject / Redis stream key of the channel. */
	channel: string;
	stream: string;
	deadLetterSubject: string;
	deadLetterStream: string;
	/** JetStream key-value buckets of the workers' delivery records and of their heartbeats. */
	deliveryBucket: string;
	workersBucket: string;
}

export function pushNames(prefix: string): PushNames {
	const channel = prefixed(prefix, PUSH_CHANNEL);
	const deadLetterSubject = prefixed(prefix, DEAD_LETTER_QUEUE);
	const stream = streamName(channel);
	return {
		channel,
		stream,
		deadLetterSubject,
		deadLetterStream: streamName(deadLetterSubject),
		deliveryBucket: `${stream}_deliveries`,
		workersBucket: `${stream}_workers`,
	};
}

/**
 * The longest one delivery may take (several outbound steps, paced IRC lines): a worker's claim on
 * a delivery lasts this long, and a worker's stop waits this long (the Kubernetes grace periods).
 */
export function slowestDeliveryMs(settings: { outboundTimeoutMs: number; ircMessageIntervalMs: number }): number {
	return 4 * settings.outboundTimeoutMs + 10 * settings.ircMessageIntervalMs;
}

/** Delay before delivery n+1 after delivery n failed: first, then 4x each time, at most a minute. */
export function retryDelay(firstMs: number, deliveryCount: number): number {
	return Math.min(MAX_RETRY_DELAY_MS, firstMs * 4 ** Math.max(0, deliveryCount - 1));
}

export interface NatsConnectionOptions {
	servers: string[];
	user?: string;
	pass?: string;
	token?: string;
	noAsyncTraces: boolean;
}

/**
 * NATS server list and credentials from a `nats://[user:pass@]host:port[,…]` URL, for the
 * channel's own connections (adapter, delivery log, provisioning). Without async traces: the
 * client would otherwise capture two stack traces for every request (each JetStream publish and
 * key-value write): a few percent of a push worker's CPU in its profile. A timeout's error still
 * says what timed out, only not from which line of ours.
 */
export function natsConnectionOptions(url: string): NatsConnectionOptions {
	const parts = url
		.split(",")
		.map(s => s.trim())
		.filter(Boolean);
	const first = new URL(parts[0]);
	const opts: NatsConnectionOptions = { servers: parts.map(p => new URL(p).host), noAsyncTraces: true };
	if (first.username && first.password) {
		opts.user = decodeURIComponent(first.username);
		opts.pass = decodeURIComponent(first.password);
	} else if (first.username) opts.token = decodeURIComponent(first.username);
	return opts;
}

export const nanos = (ms: number) => ms * 1_000_000;
