/**
 * The all-in-one default channel adapter: queues in this process, with what the JetStream
 * setup gives a cluster (fan-out to every group, competing handlers inside a group up to
 * maxInFlight, retries with the NAK delay the retry middleware asks for, dead letters that can
 * be listed and replayed). Groups declared up front queue events before their worker
 * subscribes. It is durable only as long as the process lives: a crash loses what is queued,
 * which is why a cluster uses JetStream or Redis.
 */
import { Adapters } from "@moleculer/channels";

const BaseAdapter = Adapters.Base as unknown as new (opts?: object) => any;

interface QueuedMessage {
	seq: number;
	/** Serialized once at publish, so every group gets its own copy. */
	data: Buffer;
	headers: Record<string, string>;
	deliveries: number;
}

interface GroupQueue {
	pending: QueuedMessage[];
	active: number;
	chan: any | null;
	timers: Set<NodeJS.Timeout>;
}

export interface InProcessDeadLetter {
	seq: number;
	channel: string;
	group: string;
	data: Buffer;
	headers: Record<string, string>;
	deadAt: string;
}

/** Raw message handed to handlers: the NATS-like surface the retry middleware uses. */
export interface InProcessRaw {
	headers: Record<string, string>;
	info: { deliveryCount: number };
	nak(delayMs?: number): void;
	working(): void;
}

const MAX_QUEUED_PER_GROUP = 100_000;

export class InProcessChannelAdapter extends BaseAdapter {
	declare opts: any;
	declare logger: any;
	declare serializer: any;
	/** channel name → group → queue */
	readonly queues = new Map<string, Map<string, GroupQueue>>();
	readonly deadLetters: InProcessDeadLetter[] = [];
	private seq = 0;
	private declared: Record<string, string[]>;

	/** @param groups channel (without prefix) → groups that get every message even before they subscribe */
	constructor(opts: object = {}, groups: Record<string, readonly string[]> = {}) {
		super(opts);
		this.declared = Object.fromEntries(Object.entries(groups).map(([c, g]) => [c, [...g]]));
	}

	async connect(): Promise<void> {
		for (const [channel, groups] of Object.entries(this.declared)) for (const g of groups) this.queue(this.addPrefixTopic(channel), g);
		this.connected = true;
	}

	async disconnect(): Promise<void> {
		for (const groups of this.queues.values()) for (const q of groups.values()) for (const t of q.timers) clearTimeout(t);
		this.connected = false;
	}

	private queue(channel: string, group: string): GroupQueue {
		let groups = this.queues.get(channel);
		if (!groups) this.queues.set(channel, (groups = new Map()));
		let q = groups.get(group);
		if (!q) groups.set(group, (q = { pending: [], active: 0, chan: null, timers: new Set() }));
		return q;
	}

	async subscribe(chan: any): Promise<void> {
		if (chan.maxInFlight == null) chan.maxInFlight = this.opts.maxInFlight;
		if (chan.maxRetries == null) chan.maxRetries = this.opts.maxRetries;
		chan.deadLettering = { ...this.opts.deadLettering, ...chan.deadLettering };
		const q = this.queue(chan.name, chan.group);
		q.chan = chan;
		this.initChannelActiveMessages(chan.id, false);
		this.pump(chan.name, chan.group);
	}

	async unsubscribe(chan: any): Promise<void> {
		if (chan.unsubscribing) return;
		chan.unsubscribing = true;
		const q = this.queues.get(chan.name)?.get(chan.group);
		// Graceful stop: let the handlers in progress finish; queued messages stay for a later subscriber.
		while (q && q.active > 0) await new Promise(r => setTimeout(r, 20));
		if (q && q.chan === chan) q.chan = null;
	}

	async publish(channelName: string, payload: unknown, opts: { headers?: Record<string, string>; raw?: boolean } = {}): Promise<void> {
		if (!this.connected) throw new Error("Adapter not yet connected. Skipping publishing.");
		const data: Buffer = opts.raw ? Buffer.from(payload as Buffer) : this.serializer.serialize(payload);
		const groups = this.queues.get(channelName);
		if (!groups?.size) {
			this.logger.warn(`No consumer group on '${channelName}': message dropped`);
			return;
		}
		const seq = ++this.seq;
		for (const [group, q] of groups) {
			if (q.pending.length >= MAX_QUEUED_PER_GROUP) {
				q.pending.shift();
				this.logger.warn(`Group '${group}' on '${channelName}' has ${MAX_QUEUED_PER_GROUP} queued messages: dropped the oldest`);
			}
			q.pending.push({ seq, data, headers: { ...opts.headers }, deliveries: 0 });
			this.pump(channelName, group);
		}
	}

	private pump(channel: string, group: string): void {
		const q = this.queues.get(channel)?.get(group);
		if (!q?.chan || q.chan.unsubscribing || !this.connected) return;
		while (q.pending.length && q.active < (q.chan.maxInFlight ?? 1)) {
			const msg = q.pending.shift()!;
			q.active++;
			void this.deliver(channel, group, q, q.chan, msg).finally(() => {
				q.active--;
				this.pump(channel, group);
			});
		}
	}

	private async deliver(channel: string, group: string, q: GroupQueue, chan: any, msg: QueuedMessage): Promise<void> {
		msg.deliveries++;
		let nakDelay: number | null = null;
		const raw: InProcessRaw = {
			headers: msg.headers,
			info: { deliveryCount: msg.deliveries },
			nak: (delayMs = 0) => void (nakDelay ??= delayMs),
			working: () => undefined,
		};
		this.addChannelActiveMessages(chan.id, [msg.seq]);
		try {
			await chan.handler(this.serializer.deserialize(msg.data), raw);
		} catch (err) {
			if (chan.maxRetries && msg.deliveries < chan.maxRetries) {
				const timer = setTimeout(() => {
					q.timers.delete(timer);
					q.pending.unshift(msg);
					this.pump(channel, group);
				}, nakDelay ?? 0);
				q.timers.add(timer);
			} else if (chan.deadLettering?.enabled) {
				this.deadLetters.push({
					seq: msg.seq,
					channel,
					group,
					data: msg.data,
					headers: { ...msg.headers, "x-original-channel": channel, "x-original-group": group, "x-error-message": String((err as Error)?.message ?? err) },
					deadAt: new Date().toISOString(),
				});
				this.logger.warn(`Moved message ${msg.seq} of '${channel}' (group '${group}') to the dead letters after ${msg.deliveries} deliveries`);
			} else this.logger.error(`Dropped message ${msg.seq} of '${channel}' (group '${group}') after ${msg.deliveries} deliveries`);
		} finally {
			this.removeChannelActiveMessages(chan.id, [msg.seq]);
		}
	}

	parseMessageHeaders(raw: InProcessRaw): Record<string, string> | null {
		return raw?.headers ?? null;
	}
}
