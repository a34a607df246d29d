/**
 * Dead letters on the real JetStream and Redis Streams, through `events` on a broker with the real
 * channel adapter, and the stores on their own: listing costs one request per letter however many
 * were replayed in between, a replay id is checked per backend and the entry read is the one
 * removed, two replays of one letter at once store one event (JetStream), a letter whose event is
 * older than its delivery records is not replayed, and Redis letters are trimmed to the retention.
 */
import Redis from "ioredis";
import { ServiceBroker } from "moleculer";
import { connect, headers as natsHeaders, type JetStreamManager, type NatsConnection } from "nats";
import { config } from "../../../config";
import { ChannelsMiddlewares } from "../../../middlewares/channels.middleware";
import { pushNames, REPLAY_WINDOW_MS, RETENTION_MS } from "../../../lib/push/channel";
import { natsDeadLetters, redisDeadLetters } from "../../../lib/push/dead-letters";
import type { PushEvent } from "../../../lib/push/payload";
import { deletePushChannel } from "../../../lib/push/provisioning";
import EventsService from "../../../services/events.service";
import { NATS_URL, REDIS_URL, requireServers, uniqueNamespace } from "../../support/servers";

const GROUP = "push-mailer";
const namespaces: string[] = [];
const brokers: ServiceBroker[] = [];
let nc: NatsConnection;
let jsm: JetStreamManager;
let redis: Redis;

beforeAll(async () => {
	await requireServers("nats", "redis");
	nc = await connect({ servers: NATS_URL });
	jsm = await nc.jetstreamManager();
	redis = new Redis(REDIS_URL);
});

afterAll(async () => {
	await Promise.all(brokers.map(b => b.stop()));
	for (const ns of namespaces) await deletePushChannel(NATS_URL, REDIS_URL, ns);
	await nc.close();
	redis.disconnect();
});

let eventNo = 0;
function event(receivedAt = new Date()): PushEvent {
	return {
		id: `00000000-0000-4000-8000-${String(++eventNo).padStart(12, "0")}`,
		received_at: receivedAt.toISOString(),
		push: { project_id: 1, ref: "refs/heads/master" },
	} as unknown as PushEvent;
}

/** `events` on a broker whose channel is JetStream or Redis Streams, in a namespace of its own. */
async function startEvents(kind: "nats" | "redis") {
	const ns = uniqueNamespace(`dl-${kind}`);
	namespaces.push(ns);
	const broker = new ServiceBroker({
		namespace: ns,
		logger: { type: "Console", options: { level: "error" } },
		middlewares: ChannelsMiddlewares({ ...config, channels: kind === "nats" ? NATS_URL : REDIS_URL, transporter: "", namespace: ns }),
	});
	broker.createService(EventsService);
	brokers.push(broker);
	await broker.start();
	return { broker, names: pushNames(ns) };
}

/** Dead-letters an event as the channels library does; its id. */
async function bury(kind: "nats" | "redis", subject: string, e: PushEvent, id = "*"): Promise<string> {
	const data = Buffer.from(JSON.stringify(e));
	if (kind === "nats") {
		const h = natsHeaders();
		h.set("x-original-group", GROUP);
		h.set("x-original-channel", "push");
		return String((await nc.jetstream().publish(subject, data, { headers: h })).seq);
	}
	const headers = JSON.stringify({ "x-original-group": GROUP, "x-original-channel": "push" });
	return (await redis.xadd(subject, id, "payload", data, "headers", headers))!;
}

const replay = (broker: ServiceBroker, id: string) => broker.call("events.replay", { id });
const list = async (broker: ServiceBroker) => (await broker.call<{ id: string; event_id: string }[], object>("events.deadLetters", {})).map(d => d.event_id);

describe.each(["nats", "redis"] as const)("on %s", kind => {
	let broker: ServiceBroker;
	let names: ReturnType<typeof pushNames>;
	beforeAll(async () => ({ broker, names } = await startEvents(kind)));

	it("answers an id of no store's shape with 400 before looking it up, and an unknown one, or another store's, with 404", async () => {
		for (const id of ["abc", "0", "12345678901234567890", "1-0-0", "1-", "3:", "x:mailer"])
			await expect(replay(broker, id)).rejects.toMatchObject({ code: 400, data: { body: { error: "id is invalid" } } });
		const elsewhere = kind === "nats" ? ["1-0", "3:mailer"] : [String(Date.now()), "3:mailer"];
		for (const id of [kind === "nats" ? "999999" : "1-0", ...elsewhere])
			await expect(replay(broker, id)).rejects.toMatchObject({ code: 404, data: { body: { message: "404 Dead Letter Not Found" } } });
	});

	it("does not replay a letter whose event is older than its delivery records (409), and replays a younger one", async () => {
		const old = event(new Date(Date.now() - REPLAY_WINDOW_MS - 60_000));
		const young = event(new Date(Date.now() - REPLAY_WINDOW_MS + 3600_000));
		const oldId = await bury(kind, names.deadLetterSubject, old);
		const youngId = await bury(kind, names.deadLetterSubject, young);
		// The listing says which is which before anyone tries.
		const listed = await broker.call<{ id: string; replayable: boolean }[], object>("events.deadLetters", {});
		expect(listed.map(d => [d.id, d.replayable])).toEqual([
			[oldId, false],
			[youngId, true],
		]);
		await expect(replay(broker, oldId)).rejects.toMatchObject({ code: 409, data: { body: { message: expect.stringMatching(/too old to replay/) } } });
		expect(await replay(broker, youngId)).toEqual({ id: young.id, group: GROUP, replayed: true });
		expect(await list(broker)).toEqual([old.id]);
	});
});

it("stores one event when one JetStream dead letter is replayed twice at once", async () => {
	const { broker, names } = await startEvents("nats");
	const id = await bury("nats", names.deadLetterSubject, event());
	// Both replays have read the letter before either publishes (and then removes it).
	const send = broker.sendToChannel.bind(broker);
	let release!: () => void;
	const bothRead = new Promise<void>(r => (release = r));
	let sends = 0;
	broker.sendToChannel = async (...args: Parameters<typeof send>) => {
		if (++sends === 2) release();
		await bothRead;
		return send(...args);
	};
	expect(await Promise.all([replay(broker, id), replay(broker, id)])).toEqual([
		expect.objectContaining({ replayed: true }),
		expect.objectContaining({ replayed: true }),
	]);
	expect((await jsm.streams.info(names.stream)).state.messages).toBe(1);
	expect(await list(broker)).toEqual([]);
});

it("lists JetStream letters with one request each, however many were deleted between them", async () => {
	const ns = uniqueNamespace("dl-list");
	namespaces.push(ns);
	const names = pushNames(ns);
	await jsm.streams.add({ name: names.deadLetterStream, subjects: [names.deadLetterSubject] });
	const events = Array.from({ length: 40 }, () => event());
	const seqs: string[] = [];
	for (const e of events) seqs.push(await bury("nats", names.deadLetterSubject, e));
	// Replays removed all but the first and the last two.
	for (const seq of seqs.slice(1, -2)) await jsm.streams.deleteMessage(names.deadLetterStream, Number(seq));
	let requests = 0;
	const counting = {
		streams: new Proxy(jsm.streams, {
			get: (target, prop, receiver) => {
				const value = Reflect.get(target, prop, receiver) as unknown;
				if (typeof value !== "function") return value;
				return (...args: unknown[]) => (requests++, (value as (...a: unknown[]) => unknown).apply(target, args));
			},
		}),
	} as unknown as JetStreamManager;
	const store = natsDeadLetters({ manager: counting }, ns);

	const all = await store.list(100);
	expect(all.map(d => [d.id, d.event_id, d.group])).toEqual([0, 38, 39].map(i => [seqs[i], events[i].id, GROUP]));
	// One per letter, and one that finds nothing more.
	expect(requests).toBe(4);
	requests = 0;
	expect((await store.list(2)).map(d => d.event_id)).toEqual([events[0].id, events[38].id]);
	expect(requests).toBe(2);
});

describe("Redis dead letters", () => {
	const serializer = { deserialize: (data: Buffer) => JSON.parse(data.toString()) as unknown };
	const storeOf = (prefix: string) => redisDeadLetters({ clients: new Map([["Pub", redis]]), serializer }, prefix);

	it("takes and removes exactly the entry named by a whole id; a partial id names none", async () => {
		const ns = uniqueNamespace("dl-exact");
		namespaces.push(ns);
		const key = pushNames(ns).deadLetterSubject;
		const ms = Date.now() - 1000;
		// `<ms>-0` was replayed already: only `<ms>-1` is left, which XRANGE `<ms>` would find.
		const e = event();
		await bury("redis", key, e, `${ms}-1`);
		const store = storeOf(ns);
		expect(store.validId(String(ms))).toBe(false);
		expect(await store.take(String(ms))).toBeNull();
		expect(await store.remove(String(ms))).toBe(false);
		const letter = await store.take(`${ms}-1`);
		expect(letter).toMatchObject({ id: `${ms}-1`, group: GROUP, event: { id: e.id } });
		expect(await store.remove(letter!.id)).toBe(true);
		expect(await store.list(10)).toEqual([]);
	});

	it("trims letters kept longer than the retention", async () => {
		const ns = uniqueNamespace("dl-trim");
		namespaces.push(ns);
		const key = pushNames(ns).deadLetterSubject;
		const now = Date.now();
		const [expired, kept] = [event(), event()];
		await bury("redis", key, expired, `${now - RETENTION_MS - 60_000}-0`);
		await bury("redis", key, kept, `${now - RETENTION_MS + 60_000}-0`);
		const store = storeOf(ns);
		expect((await store.list(10)).map(d => d.event_id)).toEqual([kept.id]);
		expect(await redis.xlen(key)).toBe(1);
		await bury("redis", key, event(), `${now - 1000}-0`);
		expect(await store.trim!(now + 120_000)).toBe(1);
		expect(await redis.xlen(key)).toBe(1);
	});
});
