/**
 * The all-in-one default channel adapter: queues in this process with what JetStream gives a
 * cluster (fan-out to groups, competing handlers, retries, dead letters), durable under a
 * directory through its journal (./append-log.ts; its state ./in-process-channel-state.ts), and
 * bounded. docs/architecture.md#in-process-channel.
 */
import path from "path";
import { Adapters } from "@moleculer/channels";
import type { Channel } from "@moleculer/channels/types/src";
import type { Logger } from "moleculer";
import { AppendLog } from "./append-log";
import type { ClaimResult, DeliveryLog } from "./delivery-log";
import { ChannelState, newGroupStates, type JournalRecord, type StoredMessage } from "./in-process-channel-state";
import { DeadLetterShelf, deadLetterOf, type InProcessDeadLetter } from "./in-process-dead-letters";

export type { InProcessDeadLetter };

const BaseAdapter = Adapters.Base;

/** A subscription as the channels middleware hands it over; its handler takes the payload and the raw message. */
type Subscription = Omit<Channel, "handler"> & { handler: (payload: unknown, raw: InProcessRaw) => Promise<unknown> };

interface GroupQueue {
	pending: StoredMessage[];
	active: number;
	chan: Subscription | null;
	timers: Set<NodeJS.Timeout>;
}

/** Raw message handed to handlers: the NATS-like surface the retry middleware uses. */
export interface InProcessRaw {
	headers: Record<string, string>;
	info: { deliveryCount: number };
	nak(delayMs?: number): void;
	working(): void;
}

export interface InProcessChannelOptions {
	/** Journal directory; without one, events live in memory only. */
	dir?: string;
	maxDeadLetters?: number;
	/** Payload bytes the dead letters may hold; by default as many as `maxPendingBytes`. */
	maxDeadLetterBytes?: number;
	maxQueued?: number;
	maxPendingBytes?: number;
}

const MAX_DEAD_LETTERS = 10_000;
const MAX_QUEUED_PER_GROUP = 100_000;
const MAX_PENDING_BYTES = 256 * 1024 * 1024;
/** Compact once the journal is this big and four times the live state. */
const COMPACT_MIN_BYTES = 8 * 1024 * 1024;
const RECORD_OVERHEAD = 160;
/** A delivery record in the journal. */
const DONE_RECORD_BYTES = 120;

class ChannelFull extends Error {
	constructor(what: string) {
		super(`the in-process channel is full (${what}): try again later`);
		this.name = "ChannelFull";
	}
}

const messageBytes = (m: StoredMessage) => Math.ceil(m.data.length * 1.34) + RECORD_OVERHEAD;

export class InProcessChannelAdapter extends BaseAdapter {
	// The library's declarations name Moleculer 0.14 types that 0.15 no longer exports.
	declare logger: Logger;
	declare serializer: { serialize(payload: unknown): Buffer; deserialize(data: Buffer): unknown };
	/** channel name → group → queue */
	readonly queues = new Map<string, Map<string, GroupQueue>>();
	private readonly state = new ChannelState();
	private readonly claimed = new Set<string>();
	private declared: Record<string, string[]>;
	private log: AppendLog | null = null;
	private liveBytes = 0;
	private pendingBytes = 0;
	private readonly shelf: DeadLetterShelf;
	private compacting: Promise<void> | null = null;
	private readonly limits: Required<Omit<InProcessChannelOptions, "dir">>;

	/**
	 * @param groups channel (without prefix) → groups that get every message even before they subscribe
	 * @param options journal directory and bounds
	 */
	constructor(
		opts: object = {},
		groups: Record<string, readonly string[]> = {},
		private readonly options: InProcessChannelOptions = {},
	) {
		super(opts);
		// The base class sets `connected` itself; this adapter is connected once `connect` has run.
		this.connected = false;
		this.declared = Object.fromEntries(Object.entries(groups).map(([c, g]) => [c, [...g]]));
		const maxPendingBytes = options.maxPendingBytes ?? MAX_PENDING_BYTES;
		this.limits = {
			maxDeadLetters: options.maxDeadLetters ?? MAX_DEAD_LETTERS,
			maxDeadLetterBytes: options.maxDeadLetterBytes ?? maxPendingBytes,
			maxQueued: options.maxQueued ?? MAX_QUEUED_PER_GROUP,
			maxPendingBytes,
		};
		this.shelf = new DeadLetterShelf(this.limits.maxDeadLetters, this.limits.maxDeadLetterBytes);
	}

	/** Dead letters, oldest first. */
	get deadLetters(): readonly InProcessDeadLetter[] {
		return this.shelf.letters;
	}

	get durable(): boolean {
		return !!this.options.dir;
	}

	async connect(): Promise<void> {
		for (const [channel, groups] of Object.entries(this.declared)) for (const g of groups) this.queue(this.addPrefixTopic(channel), g);
		if (this.options.dir) await this.recover(path.join(this.options.dir, "journal.log"));
		this.connected = true;
	}

	async disconnect(): Promise<void> {
		for (const groups of this.queues.values()) for (const q of groups.values()) for (const t of q.timers) clearTimeout(t);
		this.connected = false;
		await this.compacting;
		await this.log?.close();
		this.log = null;
	}

	/** Reads the journal back: queues what each group had not finished, dead letters, delivery records. */
	private async recover(file: string): Promise<void> {
		const { log, records, skipped } = await AppendLog.open<JournalRecord>(file);
		if (skipped) this.logger.warn(`Skipped ${skipped} unreadable record(s) of ${file}`);
		for (const r of records) this.state.apply(r);
		const ordered = [...this.state.messages.values()].sort((a, b) => a.seq - b.seq);
		let pending = 0;
		for (const m of ordered) {
			this.liveBytes += messageBytes(m);
			for (const [group, state] of m.groups) {
				if (state.dead) this.shelf.add(deadLetterOf(m, group, state));
				else {
					// Counts as delivered once: it may have been in the middle of it, so the worker checks its records.
					state.deliveries = Math.max(state.deliveries, 1);
					this.queue(m.channel, group).pending.push(m);
					pending++;
				}
			}
			if ([...m.groups.values()].some(s => !s.dead)) this.pendingBytes += m.data.length;
		}
		this.log = log;
		// Bounds lowered since the journal was written hold from the start.
		this.trimDeadLetters();
		await this.compact();
		if (pending || this.deadLetters.length)
			this.logger.info(`Recovered ${pending} pending deliveries and ${this.deadLetters.length} dead letters from ${file}`);
	}

	private compact(): Promise<void> {
		if (!this.log) return Promise.resolve();
		this.compacting ??= this.log
			.compact(() => this.state.snapshot())
			.catch(err => this.logger.error(`Compacting the channel journal failed: ${(err as Error).message}`))
			.finally(() => (this.compacting = null));
		return this.compacting;
	}

	private maybeCompact(): void {
		// The delivery records of an event go when its last group finishes with it (ChannelState);
		// any that came after that, now and then.
		this.state.pruneIfGrown();
		const log = this.log;
		if (!log || this.compacting) return;
		// What a compaction would keep: the unfinished events and the delivery records they still need.
		const live = this.liveBytes + this.state.doneKeys.size * DONE_RECORD_BYTES;
		if (log.bytes > COMPACT_MIN_BYTES && log.bytes > 4 * live) void this.compact();
	}

	/** Appends a record whose loss only repeats work (a redelivery): not waited for. */
	private note(record: JournalRecord): void {
		this.log?.append(record).catch(err => this.logger.error(`Writing the channel journal failed: ${(err as Error).message}`));
	}

	private queue(channel: string, group: string): GroupQueue {
		let groups = this.queues.get(channel);
		if (!groups) this.queues.set(channel, (groups = new Map<string, GroupQueue>()));
		let q = groups.get(group);
		if (!q) groups.set(group, (q = { pending: [], active: 0, chan: null, timers: new Set() }));
		return q;
	}

	subscribe(channel: Channel): Promise<void> {
		const chan = channel as Subscription;
		if (chan.maxInFlight == null) chan.maxInFlight = this.opts.maxInFlight;
		if (chan.maxRetries == null) chan.maxRetries = this.opts.maxRetries;
		chan.deadLettering = { ...this.opts.deadLettering, ...chan.deadLettering };
		const q = this.queue(chan.name, chan.group);
		q.chan = chan;
		this.initChannelActiveMessages(chan.id, false);
		this.pump(chan.name, chan.group);
		return Promise.resolve();
	}

	async unsubscribe(channel: Channel): Promise<void> {
		const chan = channel as Subscription;
		if (chan.unsubscribing) return;
		chan.unsubscribing = true;
		const q = this.queues.get(chan.name)?.get(chan.group);
		// Graceful stop: let the handlers in progress finish; queued messages stay for a later subscriber.
		while (q && q.active > 0) await new Promise(r => setTimeout(r, 20));
		if (q && q.chan === chan) q.chan = null;
	}

	/** Resolves once the event is queued for every group (and, when durable, in the journal). */
	async publish(channelName: string, payload: unknown, opts: { headers?: Record<string, string>; raw?: boolean } = {}): Promise<void> {
		if (!this.connected) throw new Error("Adapter not yet connected. Skipping publishing.");
		const data: Buffer = opts.raw ? Buffer.from(payload as Buffer) : this.serializer.serialize(payload);
		const groups = this.queues.get(channelName);
		if (!groups?.size) {
			this.logger.warn(`No consumer group on '${channelName}': message dropped`);
			return;
		}
		for (const [group, q] of groups) {
			if (q.pending.length >= this.limits.maxQueued) throw new ChannelFull(`${q.pending.length} events waiting for '${group}'`);
		}
		if (this.pendingBytes + data.length > this.limits.maxPendingBytes) throw new ChannelFull(`${this.pendingBytes} bytes of events waiting`);
		const id = (payload as { id?: unknown } | null)?.id;
		const m: StoredMessage = {
			seq: ++this.state.seq,
			channel: channelName,
			data,
			headers: { ...opts.headers },
			eventId: !opts.raw && typeof id === "string" ? id : null,
			groups: newGroupStates(groups.keys()),
		};
		// In the live state first (a compaction meanwhile keeps it), handed to the groups once on the disk.
		this.state.add(m);
		this.liveBytes += messageBytes(m);
		this.pendingBytes += m.data.length;
		if (this.log) {
			try {
				await this.log.append({ t: "p", s: m.seq, c: m.channel, i: m.eventId, h: m.headers, d: m.data.toString("base64"), g: [...m.groups.keys()] });
			} catch (err) {
				// Not stored: it counts against no bound (else failed appends would fill the channel for good).
				this.pendingBytes -= m.data.length;
				this.forget(m);
				throw err;
			}
		}
		for (const [group, q] of groups) {
			if (!m.groups.has(group)) continue;
			q.pending.push(m);
			this.pump(channelName, group);
		}
	}

	private forget(m: StoredMessage): void {
		if (!this.state.remove(m)) return;
		this.liveBytes -= messageBytes(m);
	}

	/** A group is finished with a message (delivered, dropped, or its dead letter removed). */
	private finish(m: StoredMessage, group: string): void {
		const state = m.groups.get(group);
		if (!state || !this.state.finishGroup(m, group)) return;
		if (![...m.groups.values()].some(s => !s.dead) && !state.dead) this.pendingBytes -= m.data.length;
		if (!m.groups.size) this.forget(m);
		this.note({ t: "a", s: m.seq, g: group });
		this.maybeCompact();
	}

	private pump(channel: string, group: string): void {
		const q = this.queues.get(channel)?.get(group);
		if (!q?.chan || q.chan.unsubscribing || !this.connected) return;
		while (q.pending.length && q.active < (q.chan.maxInFlight ?? 1)) {
			const msg = q.pending.shift()!;
			// Finished meanwhile (e.g. its dead letter was removed): nothing to deliver.
			if (!msg.groups.has(group)) continue;
			q.active++;
			void this.deliver(channel, group, q, q.chan, msg).finally(() => {
				q.active--;
				this.pump(channel, group);
			});
		}
	}

	private async deliver(channel: string, group: string, q: GroupQueue, chan: Subscription, msg: StoredMessage): Promise<void> {
		const state = msg.groups.get(group)!;
		state.deliveries++;
		let nakDelay: number | null = null;
		const raw: InProcessRaw = {
			headers: msg.headers,
			info: { deliveryCount: state.deliveries },
			nak: (delayMs = 0) => void (nakDelay ??= delayMs),
			working: () => undefined,
		};
		this.addChannelActiveMessages(chan.id, [msg.seq]);
		try {
			await chan.handler(this.serializer.deserialize(msg.data), raw);
			this.finish(msg, group);
		} catch (err) {
			if (chan.maxRetries && state.deliveries < chan.maxRetries) {
				this.note({ t: "f", s: msg.seq, g: group, n: state.deliveries });
				const timer = setTimeout(() => {
					q.timers.delete(timer);
					q.pending.unshift(msg);
					this.pump(channel, group);
				}, nakDelay ?? 0);
				q.timers.add(timer);
			} else if (chan.deadLettering?.enabled) {
				this.bury(msg, group, err instanceof Error ? err.message : String(err));
				this.logger.warn(`Moved message ${msg.seq} of '${channel}' (group '${group}') to the dead letters after ${state.deliveries} deliveries`);
			} else {
				this.finish(msg, group);
				this.logger.error(`Dropped message ${msg.seq} of '${channel}' (group '${group}') after ${state.deliveries} deliveries`);
			}
		} finally {
			this.removeChannelActiveMessages(chan.id, [msg.seq]);
		}
	}

	/**
	 * Makes a message a dead letter of one group. It no longer counts against `maxPendingBytes`
	 * but against `maxDeadLetterBytes`: the oldest dead letters go when there are too many or they
	 * hold too much.
	 */
	private bury(m: StoredMessage, group: string, error: string): void {
		const state = m.groups.get(group)!;
		state.dead = { at: new Date().toISOString(), error };
		if (![...m.groups.values()].some(s => !s.dead)) this.pendingBytes -= m.data.length;
		this.note({ t: "x", s: m.seq, g: group, e: error, at: state.dead.at });
		this.shelf.add(deadLetterOf(m, group, state));
		this.trimDeadLetters();
	}

	/** Drops the oldest dead letters, with a warning each, while there are too many or they hold too much. */
	private trimDeadLetters(): void {
		for (let found = this.shelf.overflowing(); found; found = this.shelf.overflowing()) {
			const { oldest, over } = found;
			this.removeDeadLetter(oldest.seq, oldest.group);
			const which = `message ${oldest.seq} of '${oldest.channel}', group '${oldest.group}', dead since ${oldest.deadAt}`;
			this.logger.warn(`${over}: dropped the oldest (${which})`);
		}
	}

	/** Removes a dead letter (replayed, or dropped); false when there is none. */
	removeDeadLetter(seq: number, group: string): boolean {
		if (!this.shelf.remove(seq, group)) return false;
		const m = this.state.messages.get(seq);
		if (m) this.finish(m, group);
		return true;
	}

	/**
	 * The workers' delivery records on this journal: a claim is held in memory (one process), a
	 * delivery made is on the disk before `complete` resolves, so that an event delivered again
	 * after a restart skips it. Kept while the event may still come back to that group.
	 */
	readonly deliveryLog: DeliveryLog = {
		claim: (key: string): Promise<ClaimResult> => {
			if (this.state.doneKeys.has(key)) return Promise.resolve("done");
			if (this.claimed.has(key)) return Promise.resolve("busy");
			this.claimed.add(key);
			return Promise.resolve("go");
		},
		complete: async (key: string): Promise<void> => {
			this.state.addDone(key);
			this.claimed.delete(key);
			await this.log?.append({ t: "k", k: key });
		},
		release: (key: string): Promise<void> => {
			this.claimed.delete(key);
			return Promise.resolve();
		},
		close: (): Promise<void> => Promise.resolve(),
	};

	parseMessageHeaders(raw: InProcessRaw): Record<string, string> {
		return raw.headers;
	}
}
