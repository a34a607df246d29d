/**
 * Dead letters of the `push` channel: a push event a worker group gave up on after
 * PUSH_MAX_DELIVERIES deliveries. They can be listed and replayed. A replay publishes the event
 * again on `push` with `replay_group` set, so only the group that failed acts on it (the others
 * acknowledge it at once, and their delivery records would skip it anyway), then removes the
 * dead letter.
 *
 * Where they live depends on the adapter: the JetStream stream `<ns>_DEAD_PUSH`, the Redis
 * stream `<ns>.DEAD_PUSH`, or the in-process adapter's journal (at most MAX_DEAD_LETTERS).
 */
import type { Redis } from "ioredis";
import type { JetStreamManager, StoredMsg } from "nats";
import type { PushEvent } from "./payload";
import { pushNames } from "./channel";
import type { InProcessChannelAdapter } from "./in-process-channel-adapter";

export interface DeadLetter {
	/** Opaque id for replay: the JetStream sequence, the Redis stream id, or the in-process sequence. */
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
	/** The event and group of one dead letter, or null. */
	take(id: string): Promise<{ event: PushEvent; group: string } | null>;
	remove(id: string): Promise<boolean>;
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

/** JetStream: read by sequence number with the adapter's manager. */
export function natsDeadLetters(adapter: { manager: JetStreamManager }, prefix: string): DeadLetterStore {
	const stream = pushNames(prefix).deadLetterStream;
	const headersOf = (msg: StoredMsg): Record<string, string> => {
		const out: Record<string, string> = {};
		if (msg.header) for (const k of msg.header.keys()) out[k.toLowerCase()] = msg.header.get(k);
		return out;
	};
	const get = async (seq: number): Promise<StoredMsg | null> => {
		try {
			return await adapter.manager.streams.getMessage(stream, { seq });
		} catch {
			return null;
		}
	};
	return {
		async list(limit) {
			let info;
			try {
				info = await adapter.manager.streams.info(stream);
			} catch {
				return [];
			}
			const out: DeadLetter[] = [];
			for (let seq = info.state.first_seq; seq <= info.state.last_seq && out.length < limit && info.state.messages > 0; seq++) {
				const msg = await get(seq);
				if (msg) out.push(describe(String(seq), parse(msg.data), headersOf(msg)));
			}
			return out;
		},
		async take(id) {
			const msg = /^\d+$/.test(id) ? await get(Number(id)) : null;
			if (!msg) return null;
			return { event: parse(msg.data) as PushEvent, group: headersOf(msg)["x-original-group"] ?? "" };
		},
		async remove(id) {
			try {
				return await adapter.manager.streams.deleteMessage(stream, Number(id));
			} catch {
				return false;
			}
		},
	};
}

/** Redis Streams: XRANGE/XDEL on the dead-letter stream with the adapter's publishing client. */
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
	return {
		async list(limit) {
			const entries: [Buffer, Buffer[]][] = await client().xrangeBuffer(key, "-", "+", "COUNT", limit);
			return entries.map(e => {
				const f = fields(e);
				return describe(e[0].toString(), f.payload ? parse(f.payload) : null, f.headers);
			});
		},
		async take(id) {
			const entries: [Buffer, Buffer[]][] = await client().xrangeBuffer(key, id, id);
			if (!entries.length) return null;
			const f = fields(entries[0]);
			return f.payload ? { event: parse(f.payload) as PushEvent, group: f.headers["x-original-group"] ?? "" } : null;
		},
		async remove(id) {
			return (await client().xdel(key, id)) > 0;
		},
	};
}

export function memoryDeadLetters(adapter: InProcessChannelAdapter): DeadLetterStore {
	const find = (id: string) => adapter.deadLetters.findIndex(d => `${d.seq}:${d.group}` === id);
	return {
		list(limit) {
			return Promise.resolve(adapter.deadLetters.slice(0, limit).map(d => describe(`${d.seq}:${d.group}`, parse(d.data), d.headers)));
		},
		take(id) {
			const i = find(id);
			const letter = i < 0 ? null : adapter.deadLetters[i];
			return Promise.resolve(letter && { event: parse(letter.data) as PushEvent, group: letter.group });
		},
		remove(id) {
			const i = find(id);
			if (i < 0) return Promise.resolve(false);
			const letter = adapter.deadLetters[i];
			return Promise.resolve(adapter.removeDeadLetter(letter.seq, letter.group));
		},
	};
}
