/**
 * What the in-process channel knows, as its journal replays it (lib/push/in-process-channel-adapter.ts):
 * the events not finished by every group, where each group stands with them, the workers' delivery
 * records, the last sequence number. Pure state, no I/O: the adapter appends the records and
 * compacts the journal to `snapshot()`.
 */
import { parseDeliveryKey } from "./delivery-log";

/** One event and, per group that has not finished with it, where it stands. */
export interface StoredMessage {
	seq: number;
	channel: string;
	/** Serialized once at publish; every group delivers the same bytes. */
	data: Buffer;
	headers: Record<string, string>;
	/** The payload's `id` (a push event's id), which the delivery records are keyed by. */
	eventId: string | null;
	groups: Map<string, GroupState>;
}

export interface GroupState {
	deliveries: number;
	dead: { at: string; error: string } | null;
}

/** A new event's state in each of its groups: not delivered yet. */
export function newGroupStates(groups: Iterable<string>): Map<string, GroupState> {
	return new Map([...groups].map(g => [g, { deliveries: 0, dead: null }]));
}

/** Journal records: publish, a failed delivery, finished (done, dropped or dead letter removed), dead-lettered, a delivery made, the sequence. */
export type JournalRecord =
	| { t: "p"; s: number; c: string; i: string | null; h: Record<string, string>; d: string; g: string[] }
	| { t: "f"; s: number; g: string; n: number }
	| { t: "a"; s: number; g: string }
	| { t: "x"; s: number; g: string; e: string; at: string }
	| { t: "k"; k: string }
	| { t: "s"; s: number };

/** What a delivery record belongs to: an event in one group (see parseDeliveryKey). */
const deliveryOf = (group: string, eventId: string) => `${group}\u0000${eventId}`;

export class ChannelState {
	readonly messages = new Map<number, StoredMessage>();
	/** The workers' delivery records kept: those of an event that may still come to that group. */
	readonly doneKeys = new Set<string>();
	seq = 0;
	/** Event and group → how many unfinished events with that id the group has (a replay is a second one). */
	private readonly live = new Map<string, number>();
	/** Event and group → its delivery records, so that they go when the group is finished with it. */
	private readonly doneOf = new Map<string, string[]>();
	/** How many delivery records were left by the last prune. */
	private prunedAt = 0;

	/**
	 * Records whose event was finished already when they came (none from the workers of this
	 * process, which record before they finish) are dropped now and then.
	 */
	pruneIfGrown(): void {
		if (this.doneKeys.size > 2 * this.prunedAt + 10_000) this.pruneDoneKeys();
	}

	/** An unfinished event, in each of its groups. */
	add(m: StoredMessage): void {
		const old = this.messages.get(m.seq);
		this.messages.set(m.seq, m);
		for (const g of m.groups.keys()) this.mark(m.eventId, g, 1);
		if (old && old !== m) for (const g of old.groups.keys()) this.mark(old.eventId, g, -1);
	}

	/** A group is finished with an event; false when it was already. The event stays until `remove`. */
	finishGroup(m: StoredMessage, group: string): boolean {
		if (!m.groups.delete(group)) return false;
		this.mark(m.eventId, group, -1);
		return true;
	}

	/** Forgets an event (finished by every group, or never stored); false when it was not there. */
	remove(m: StoredMessage): boolean {
		if (this.messages.get(m.seq) !== m) return false;
		this.messages.delete(m.seq);
		for (const g of m.groups.keys()) this.mark(m.eventId, g, -1);
		return true;
	}

	/** A delivery made (a worker's `complete`). */
	addDone(key: string): void {
		if (this.doneKeys.has(key)) return;
		this.doneKeys.add(key);
		const parsed = parseDeliveryKey(key);
		if (!parsed) return;
		const id = deliveryOf(parsed.group, parsed.eventId);
		const keys = this.doneOf.get(id);
		if (keys) keys.push(key);
		else this.doneOf.set(id, [key]);
	}

	/** Counts an event in or out of a group; its delivery records go with the last one out. */
	private mark(eventId: string | null, group: string, delta: 1 | -1): void {
		if (eventId === null) return;
		const id = deliveryOf(group, eventId);
		const n = (this.live.get(id) ?? 0) + delta;
		if (n > 0) return void this.live.set(id, n);
		this.live.delete(id);
		for (const key of this.doneOf.get(id) ?? []) this.doneKeys.delete(key);
		this.doneOf.delete(id);
	}

	apply(r: JournalRecord): void {
		switch (r.t) {
			case "p":
				this.add({
					seq: r.s,
					channel: r.c,
					data: Buffer.from(r.d, "base64"),
					headers: r.h,
					eventId: r.i,
					groups: newGroupStates(r.g),
				});
				this.seq = Math.max(this.seq, r.s);
				break;
			case "f": {
				const state = this.messages.get(r.s)?.groups.get(r.g);
				if (state) state.deliveries = r.n;
				break;
			}
			case "x": {
				const state = this.messages.get(r.s)?.groups.get(r.g);
				if (state) state.dead = { at: r.at, error: r.e };
				break;
			}
			case "a": {
				const m = this.messages.get(r.s);
				if (m && this.finishGroup(m, r.g) && !m.groups.size) this.remove(m);
				break;
			}
			case "k":
				this.addDone(r.k);
				break;
			case "s":
				this.seq = Math.max(this.seq, r.s);
				break;
		}
	}

	/** The live state as journal records: the sequence, every unfinished event, and the delivery records still needed. */
	*snapshot(): Generator<string> {
		yield JSON.stringify({ t: "s", s: this.seq });
		for (const m of [...this.messages.values()].sort((a, b) => a.seq - b.seq)) {
			yield JSON.stringify({ t: "p", s: m.seq, c: m.channel, i: m.eventId, h: m.headers, d: m.data.toString("base64"), g: [...m.groups.keys()] });
			for (const [g, state] of m.groups) {
				if (state.deliveries) yield JSON.stringify({ t: "f", s: m.seq, g, n: state.deliveries });
				if (state.dead) yield JSON.stringify({ t: "x", s: m.seq, g, e: state.dead.error, at: state.dead.at });
			}
		}
		this.pruneDoneKeys();
		for (const key of this.doneKeys) yield JSON.stringify({ t: "k", k: key });
	}

	/** A delivery record matters while its event may be delivered to that group again: pending, or a dead letter that may be replayed. */
	pruneDoneKeys(): void {
		for (const key of this.doneKeys) {
			const parsed = parseDeliveryKey(key);
			const id = parsed && deliveryOf(parsed.group, parsed.eventId);
			if (id && this.live.has(id)) continue;
			this.doneKeys.delete(key);
			if (id) this.doneOf.delete(id);
		}
		this.prunedAt = this.doneKeys.size;
	}
}
