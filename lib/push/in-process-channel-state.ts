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

export class ChannelState {
	readonly messages = new Map<number, StoredMessage>();
	readonly doneKeys = new Set<string>();
	seq = 0;
	/** How many delivery records were left by the last prune. */
	private prunedAt = 0;

	/** In memory only, the records of finished events are dropped now and then (a journal compacts instead). */
	pruneIfGrown(): void {
		if (this.doneKeys.size > 2 * this.prunedAt + 10_000) this.pruneDoneKeys();
	}

	apply(r: JournalRecord): void {
		switch (r.t) {
			case "p":
				this.messages.set(r.s, {
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
				m?.groups.delete(r.g);
				if (m && !m.groups.size) this.messages.delete(r.s);
				break;
			}
			case "k":
				this.doneKeys.add(r.k);
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
		const live = this.liveEvents();
		this.pruneDoneKeys(live);
		for (const key of this.doneKeys) yield JSON.stringify({ t: "k", k: key });
	}

	/** Event id → groups that may still get it: pending, or a dead letter that may be replayed. */
	liveEvents(): Map<string, Set<string>> {
		const live = new Map<string, Set<string>>();
		for (const m of this.messages.values()) {
			if (!m.eventId) continue;
			const set = live.get(m.eventId) ?? new Set<string>();
			for (const g of m.groups.keys()) set.add(g);
			live.set(m.eventId, set);
		}
		return live;
	}

	/** A delivery record matters while its event may be delivered to that group again. */
	pruneDoneKeys(live = this.liveEvents()): void {
		for (const key of this.doneKeys) {
			const parsed = parseDeliveryKey(key);
			if (!parsed || !live.get(parsed.eventId)?.has(parsed.group)) this.doneKeys.delete(key);
		}
		this.prunedAt = this.doneKeys.size;
	}
}
