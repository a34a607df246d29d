/**
 * Dead letters of the `push` channel: a push event a worker group gave up on after
 * PUSH_MAX_DELIVERIES deliveries. They can be listed and replayed. A replay publishes the event
 * again on `push` with `replay_group` set, so only the group that failed acts on it (the others
 * acknowledge it at once, and their delivery records would skip it anyway), then removes the
 * dead letter.
 *
 * Where they live depends on the adapter: the JetStream stream `<ns>_DEAD_PUSH`, the Redis
 * stream `<ns>.DEAD_PUSH`, or the in-process adapter's journal (at most MAX_DEAD_LETTERS).
 *
 * On JetStream and Redis the workers' delivery records expire, so a letter whose event is older
 * than REPLAY_WINDOW_MS is not replayed (it would repeat deliveries that were made); the
 * in-process journal keeps an event's records while its dead letter exists
 * (docs/architecture.md#dead-letters).
 */
import type { Redis } from "ioredis";
import type { JetStreamManager, StoredMsg } from "nats";
import type { PushEvent } from "./payload";
import { pushNames, replayable, RETENTION_MS } from "./channel";
import type { InProcessChannelAdapter } from "./in-process-channel-adapter";

interface DeadLetter {
	/** Opaque id for replay: the JetStream sequence, the Redis stream id, or the in-process sequence and group. */
	id: string;
	group: string;
	channel: string;
	event_id: string | null;
	project_id: number | null;
	ref: string | null;
	received_at: string | null;
	error: string | null;
}

export interface DeadLetterStore {
	list(limit: number): Promise<DeadLetter[]>;
	/** Whether `id` has the shape of this store's ids (checked before any look-up). */
	validId(id: string): boolean;
	/** One dead letter: its own id (the entry read, to remove exactly that one), event and group; or null. */
	take(id: string): Promise<{ id: string; event: PushEvent; group: string } | null>;
	remove(id: string): Promise<boolean>;
	/** Whether replaying an event received at `receivedAt` cannot repeat a delivery made of it now (its records still exist). */
	canReplay(receivedAt: string | null, now: number): boolean;
	/** Drops the letters kept longer than the retention, where the store does not do it itself (Redis). */
	trim?(now: number): Promise<number>;
}

function describe(id: string, payload: unknown, headers: Record<string, string | undefined>): DeadLetter {
	const event = (payload ?? {}) as Partial<PushEvent>;
	return {
		id,
		group: headers["x-original-group"] ?? "",
		channel: headers["x-original-channel"] ?? "",
		event_id: typeof event.id === "string" ? event.id : null,
		project_id: typeof event.push?.project_id === "number" ? event.push.project_id : null,
		ref: typeof event.push?.ref === "string" ? event.push.ref : null,
		received_at: typeof event.received_at === "string" ? event.received_at : null,
		error: headers["x-error-message"] ?? null,
	};
}

/** A stored payload as JSON, or null (a dead letter is shown whatever its bytes are). */
const parse = (data: Uint8Array | Buffer): unknown => {
	try {
		return JSON.parse(Buffer.from(data).toString("utf8"));
	} catch {
		return null;
	}
};

/** Records expire on JetStream and Redis: only a letter whose event is young enough is replayed. */
const withinRecords = (receivedAt: string | null, now: number) => replayable(receivedAt, now);

/** A JetStream API "404": no such message (or no such stream). */
const absent = (err: unknown) => (err as { code?: string } | null)?.code === "404";

/**
 * JetStream: read with the adapter's manager. Listing asks for the next message from a sequence
 * number on, so it costs one request per letter however many were deleted in between.
 */
/**
 * A dead letter's id, whichever store keeps it: a JetStream sequence (`42`), a Redis stream id
 * (`1717171717171-0`), an in-process one (`3:mailer`). One this deployment's store does not use
 * names nothing (404); anything else is no id (400).
 */
export const DEAD_LETTER_ID = /^([1-9]\d{0,14}|\d{1,19}-\d{1,19}|[1-9]\d*:[A-Za-z0-9_.-]+)$/;

export function natsDeadLetters(adapter: { manager: JetStreamManager }, prefix: string): DeadLetterStore {
	const { deadLetterStream: stream, deadLetterSubject: subject } = pushNames(prefix);
	const headersOf = (msg: StoredMsg): Record<string, string> => {
		const out: Record<string, string> = {};
		if (msg.header) for (const k of msg.header.keys()) out[k.toLowerCase()] = msg.header.get(k);
		return out;
	};
	// `next_by_subj`: the first message at or after `seq` (nats-server 2.9+).
	const get = async (query: { seq: number; next_by_subj?: string }): Promise<StoredMsg | null> => {
		try {
			return await adapter.manager.streams.getMessage(stream, query);
		} catch (err) {
			if (absent(err)) return null;
			throw err;
		}
	};
	const validId = (id: string) => /^[1-9]\d{0,14}$/.test(id);
	return {
		async list(limit) {
			const out: DeadLetter[] = [];
			for (let seq = 1; out.length < limit;) {
				const msg = await get({ seq, next_by_subj: subject });
				if (!msg) break;
				out.push(describe(String(msg.seq), parse(msg.data), headersOf(msg)));
				seq = msg.seq + 1;
			}
			return out;
		},
		validId,
		async take(id) {
			const msg = validId(id) ? await get({ seq: Number(id) }) : null;
			if (!msg) return null;
			return { id: String(msg.seq), event: parse(msg.data) as PushEvent, group: headersOf(msg)["x-original-group"] ?? "" };
		},
		async remove(id) {
			try {
				return await adapter.manager.streams.deleteMessage(stream, Number(id));
			} catch {
				return false;
			}
		},
		canReplay: withinRecords,
	};
}

/**
 * Redis Streams: XRANGE/XDEL on the dead-letter stream with the adapter's publishing client. The
 * channels library adds letters without a bound, so they are trimmed here to the retention
 * (JetStream's max_age on its dead-letter stream), counted from when they became dead letters.
 */
export function redisDeadLetters(
	adapter: { clients: Map<string, Redis>; serializer: { deserialize(data: Buffer): unknown } },
	prefix: string,
): DeadLetterStore {
	const key = pushNames(prefix).deadLetterSubject;
	const client = (): Redis => {
		const pub = adapter.clients.get("Pub");
		if (!pub) throw new Error("the Redis channel adapter is not connected");
		return pub;
	};
	const fields = (entry: [Buffer, Buffer[]]) => {
		const map = new Map<string, Buffer>();
		for (let i = 0; i + 1 < entry[1].length; i += 2) map.set(entry[1][i].toString(), entry[1][i + 1]);
		const headersRaw = map.get("headers");
		return { payload: map.get("payload"), headers: (headersRaw ? adapter.serializer.deserialize(headersRaw) : {}) as Record<string, string> };
	};
	// A whole stream id: a partial one ("<ms>") would make XRANGE and XDEL name different entries.
	const validId = (id: string) => /^\d{1,19}-\d{1,19}$/.test(id);
	const trim = async (now: number) => client().xtrim(key, "MINID", Math.max(0, now - RETENTION_MS));
	return {
		async list(limit) {
			// Exact to the retention when listed (the hourly trim bounds the rest); never fails the listing.
			await trim(Date.now()).catch(() => 0);
			const entries: [Buffer, Buffer[]][] = await client().xrangeBuffer(key, "-", "+", "COUNT", limit);
			return entries.map(e => {
				const f = fields(e);
				return describe(e[0].toString(), f.payload ? parse(f.payload) : null, f.headers);
			});
		},
		validId,
		async take(id) {
			if (!validId(id)) return null;
			const entries: [Buffer, Buffer[]][] = await client().xrangeBuffer(key, id, id);
			if (!entries.length) return null;
			const f = fields(entries[0]);
			return f.payload ? { id: entries[0][0].toString(), event: parse(f.payload) as PushEvent, group: f.headers["x-original-group"] ?? "" } : null;
		},
		async remove(id) {
			return validId(id) && (await client().xdel(key, id)) > 0;
		},
		canReplay: withinRecords,
		trim,
	};
}

export function memoryDeadLetters(adapter: InProcessChannelAdapter): DeadLetterStore {
	const find = (id: string) => adapter.deadLetters.findIndex(d => `${d.seq}:${d.group}` === id);
	return {
		list(limit) {
			return Promise.resolve(adapter.deadLetters.slice(0, limit).map(d => describe(`${d.seq}:${d.group}`, parse(d.data), d.headers)));
		},
		validId: id => /^[1-9]\d*:[A-Za-z0-9_.-]+$/.test(id),
		take(id) {
			const i = find(id);
			const letter = i < 0 ? null : adapter.deadLetters[i];
			return Promise.resolve(letter && { id, event: parse(letter.data) as PushEvent, group: letter.group });
		},
		remove(id) {
			const i = find(id);
			if (i < 0) return Promise.resolve(false);
			const letter = adapter.deadLetters[i];
			return Promise.resolve(adapter.removeDeadLetter(letter.seq, letter.group));
		},
		// The journal keeps an event's delivery records while a dead letter of it exists.
		canReplay: () => true,
	};
}
