/**
 * The in-process channel with its journal, on a real broker and real files: what a group had not
 * finished is delivered after a restart and what it had finished is not, delivery records come
 * back while their event may still be delivered and are dropped once it cannot, dead letters
 * survive restarts and are bounded, and a publish the journal could not store takes no room.
 */
import crypto from "crypto";
import fs from "fs";
import os from "os";
import path from "path";
import { Middleware as ChannelsMiddleware } from "@moleculer/channels";
import { ServiceBroker } from "moleculer";
import { deliveryKey } from "../../../lib/push/delivery-log";
import { InProcessChannelAdapter } from "../../../lib/push/in-process-channel-adapter";
import { waitFor } from "../../support/http";

type Handler = (msg: { id: string }) => Promise<void>;

let dir: string;
const brokers: ServiceBroker[] = [];
/** The adapter of the broker started last (its handlers run before `start` returns). */
let current: InProcessChannelAdapter;

beforeEach(() => {
	dir = fs.mkdtempSync(path.join(os.tmpdir(), "glv3-channel-"));
});

afterEach(async () => {
	await Promise.all(brokers.splice(0).map(b => b.stop()));
	fs.rmSync(dir, { recursive: true, force: true });
});

/** A broker with the journaled adapter and a consumer for each group given a handler. */
async function start(
	handlers: Partial<Record<"g1" | "g2", Handler>>,
	opts: { maxDeadLetters?: number; maxDeadLetterBytes?: number; maxRetries?: number; maxPendingBytes?: number } = {},
) {
	const warnings: string[] = [];
	const adapter = new InProcessChannelAdapter(
		{ maxInFlight: 4, maxRetries: opts.maxRetries ?? 3, deadLettering: { enabled: true, queueName: "DEAD" } },
		{ push: ["g1", "g2"] },
		{ dir, maxDeadLetters: opts.maxDeadLetters, maxDeadLetterBytes: opts.maxDeadLetterBytes, maxPendingBytes: opts.maxPendingBytes },
	);
	current = adapter;
	const broker = new ServiceBroker({
		logger: { type: "Console", options: { level: "error" } },
		middlewares: [ChannelsMiddleware({ adapter, context: false } as never)],
	});
	for (const [group, handler] of Object.entries(handlers)) broker.createService({ name: `consumer-${group}`, channels: { push: { group, handler } } });
	brokers.push(broker);
	await broker.start();
	// The adapter's warnings (dropped dead letters, recovery) are what an operator reads.
	const logger = (adapter as any).logger;
	const warn = logger.warn.bind(logger);
	logger.warn = (...args: unknown[]) => (warnings.push(args.join(" ")), warn(...args));
	return { broker, adapter, warnings };
}

const stop = async (broker: ServiceBroker) => {
	brokers.splice(brokers.indexOf(broker), 1);
	await broker.stop();
};

it("delivers after a restart what a group had not finished, not what it had, and keeps delivery records while they matter", async () => {
	const seen = { g1: [] as string[], g2: [] as string[] };
	const key = deliveryKey("t:", "g2", "e0", "mail:dev@example.com");
	/** What g2's worker would find in the records when e0 comes to it. */
	const found: string[] = [];
	const record =
		(g: "g1" | "g2"): Handler =>
		async msg => {
			seen[g].push(msg.id);
			if (g === "g2" && msg.id === "e0") found.push(await current.deliveryLog.claim(key));
		};

	// g2 has not started yet: its events wait in the journal. A delivery of e0 to g2 was made (recorded) before the stop.
	const first = await start({ g1: record("g1") });
	for (let i = 0; i < 5; i++) await first.broker.sendToChannel("push", { id: `e${i}` });
	await waitFor("g1's deliveries", () => seen.g1.length === 5);
	expect(await first.adapter.deliveryLog.claim(key)).toBe("go");
	await first.adapter.deliveryLog.complete(key);
	await stop(first.broker);

	const second = await start({ g1: record("g1"), g2: record("g2") });
	await waitFor("g2's deliveries", () => seen.g2.length === 5);
	expect(seen.g2).toEqual(["e0", "e1", "e2", "e3", "e4"]);
	expect(seen.g1).toHaveLength(5);
	expect(found).toEqual(["done"]);
	// g2 is finished with e0: the record is no longer needed, and goes at once.
	expect(await second.adapter.deliveryLog.claim(key)).toBe("go");
	await second.adapter.deliveryLog.release(key);
	await stop(second.broker);

	// Everything finished: the journal is compacted at the next start.
	const third = await start({ g1: record("g1"), g2: record("g2") });
	await new Promise(r => setTimeout(r, 200));
	expect([seen.g1.length, seen.g2.length]).toEqual([5, 5]);
	expect(await third.adapter.deliveryLog.claim(key)).toBe("go");
	expect(fs.readFileSync(path.join(dir, "journal.log"), "utf8").trim().split("\n")).toEqual([expect.stringMatching(/^\{"t":"s","s":5\}$/)]);
});

it("keeps dead letters across restarts, at most maxDeadLetters of them (the oldest dropped with a warning)", async () => {
	const failing: Handler = () => Promise.reject(new Error("peer down"));
	const first = await start({ g1: failing, g2: () => Promise.resolve() }, { maxDeadLetters: 3, maxRetries: 2 });
	for (let i = 0; i < 5; i++) await first.broker.sendToChannel("push", { id: `d${i}` });
	await waitFor("five dead letters' worth of failures", () => first.warnings.filter(w => /Moved message/.test(w)).length === 5);
	const ids = (adapter: InProcessChannelAdapter) => adapter.deadLetters.map(d => JSON.parse(d.data.toString()).id);
	expect(ids(first.adapter)).toEqual(["d2", "d3", "d4"]);
	expect(first.adapter.deadLetters[0]).toMatchObject({ group: "g1", headers: { "x-original-group": "g1", "x-error-message": "peer down" } });
	expect(first.warnings.filter(w => /More than 3 dead letters: dropped the oldest/.test(w))).toHaveLength(2);
	await stop(first.broker);

	const second = await start({ g2: () => Promise.resolve() }, { maxDeadLetters: 3 });
	expect(ids(second.adapter)).toEqual(["d2", "d3", "d4"]);
	expect(second.adapter.removeDeadLetter(second.adapter.deadLetters[1].seq, "g1")).toBe(true);
	await stop(second.broker);

	const third = await start({}, { maxDeadLetters: 3 });
	expect(ids(third.adapter)).toEqual(["d2", "d4"]);
});

it("counts no room for a publish the journal failed to store: once the disk works again, publishing does too", async () => {
	// g1 never consumes here: whatever was published stays pending and counts against maxPendingBytes.
	const { broker, adapter } = await start({}, { maxPendingBytes: 1000 });
	const log = (adapter as any).log as { append(record: unknown): Promise<void> };
	const append = log.append.bind(log);
	log.append = () => Promise.reject(new Error("ENOSPC: no space left on device"));
	const payload = { id: "x", pad: "p".repeat(100) };
	// Well over maxPendingBytes in total: each is refused for the disk, never for a full channel.
	for (let i = 0; i < 30; i++) await expect(broker.sendToChannel("push", payload)).rejects.toThrow("ENOSPC");
	log.append = append;
	await broker.sendToChannel("push", { ...payload, id: "stored" });
	expect(
		adapter.queues
			.get("push")
			?.get("g1")
			?.pending.map(m => JSON.parse(m.data.toString()).id),
	).toEqual(["stored"]);
});

it("keeps the delivery records of a dead letter across restarts and while its replay is pending, then drops them", async () => {
	const key = deliveryKey("t:", "g1", "d0", "mail:dev@example.com");
	// g1 makes its delivery, records it, then fails on another target: a dead letter at once.
	const failing: Handler = async () => {
		if ((await current.deliveryLog.claim(key)) === "go") await current.deliveryLog.complete(key);
		throw new Error("peer down");
	};
	const first = await start({ g1: failing, g2: () => Promise.resolve() }, { maxRetries: 1 });
	await first.broker.sendToChannel("push", { id: "d0" });
	await waitFor("the dead letter", () => first.adapter.deadLetters.length === 1);
	expect(await first.adapter.deliveryLog.claim(key)).toBe("done");
	await stop(first.broker);

	// The journal is compacted at the start: the letter still needs its record.
	const second = await start({ g2: () => Promise.resolve() });
	expect(second.adapter.deadLetters).toHaveLength(1);
	expect(await second.adapter.deliveryLog.claim(key)).toBe("done");
	// A replay (events.service): the event published again, then the letter removed. g1 is not consuming now.
	await second.broker.sendToChannel("push", { id: "d0", replay_group: "g1" });
	expect(second.adapter.removeDeadLetter(second.adapter.deadLetters[0].seq, "g1")).toBe(true);
	expect(await second.adapter.deliveryLog.claim(key)).toBe("done");
	await stop(second.broker);

	const third = await start({ g1: () => Promise.resolve(), g2: () => Promise.resolve() });
	const state = (third.adapter as any).state as { doneKeys: Set<string>; messages: Map<number, unknown> };
	await waitFor("the replay's delivery", () => state.messages.size === 0);
	expect(state.doneKeys.size).toBe(0);
	expect(await third.adapter.deliveryLog.claim(key)).toBe("go");
});

// Its timeout: 2,500 events written durably and handled twice take minutes on a busy 2-core machine (a guard against a hang, not a measure).
it("drops an event's delivery records once its groups are finished with it: a steady stream leaves none, and its journal is compacted", async () => {
	// As push-worker does: a record per target, here 20 targets per event and group.
	const targets = 20;
	let handled = 0;
	const deliver =
		(group: "g1" | "g2"): Handler =>
		async msg => {
			for (let i = 0; i < targets; i++) await current.deliveryLog.complete(deliveryKey("t:", group, msg.id, `mail:user${i}@example.com`));
			handled++;
		};
	const { broker, adapter } = await start({ g1: deliver("g1"), g2: deliver("g2") });
	const state = (adapter as any).state as { doneKeys: Set<string>; messages: Map<number, unknown> };
	const journal = () => ((adapter as any).log as { bytes: number }).bytes;
	let mostKeys = 0;
	let compactions = 0;
	let last = journal();
	// About 10 MB of journal: past the 8 MiB under which it is never compacted.
	const events = 2500;
	// The wait below ends with the test: after a timeout it must not spin on in the suite's process.
	const deadline = Date.now() + 290_000;
	for (let sent = 0; sent < events;) {
		const batch = Array.from({ length: 100 }, () => crypto.randomUUID());
		await Promise.all(batch.map(id => broker.sendToChannel("push", { id, pad: "p".repeat(100) })));
		sent += batch.length;
		while (handled < 2 * sent) {
			if (Date.now() > deadline) throw new Error(`${handled} of ${2 * sent} deliveries handled when the test's time was up`);
			mostKeys = Math.max(mostKeys, state.doneKeys.size);
			await new Promise(r => setImmediate(r));
		}
		if (journal() < last) compactions++;
		last = journal();
	}
	await (adapter as any).compacting;
	if (journal() < last) compactions++;
	expect(state.messages.size).toBe(0);
	// Before: every record of every event stayed (2 × 20 × 2500 = 100,000), so the journal never looked worth compacting.
	expect(state.doneKeys.size).toBe(0);
	// At most the records of the events being handled (4 at a time per group).
	expect(mostKeys).toBeLessThanOrEqual(2 * 4 * targets);
	expect(compactions).toBeGreaterThanOrEqual(1);
	expect(journal()).toBeLessThan(8 * 1024 * 1024);
}, 300000);

it("bounds the bytes the dead letters hold, apart from the events waiting: the oldest are dropped with a warning", async () => {
	const failing: Handler = () => Promise.reject(new Error("peer down"));
	const pad = "d".repeat(3000);
	// maxDeadLetterBytes is maxPendingBytes by default: room for three of these letters.
	const first = await start({ g1: failing, g2: () => Promise.resolve() }, { maxRetries: 1, maxPendingBytes: 10_000 });
	for (let i = 0; i < 10; i++) {
		// Each is refused unless the one before became a dead letter (no longer waiting).
		await first.broker.sendToChannel("push", { id: `b${i}`, pad });
		await waitFor(`dead letter b${i}`, () => first.warnings.filter(w => /Moved message/.test(w)).length === i + 1);
	}
	const ids = (adapter: InProcessChannelAdapter) => adapter.deadLetters.map(d => JSON.parse(d.data.toString()).id);
	const held = (adapter: InProcessChannelAdapter) => adapter.deadLetters.reduce((n, d) => n + d.data.length, 0);
	expect(ids(first.adapter)).toEqual(["b7", "b8", "b9"]);
	expect(held(first.adapter)).toBeLessThanOrEqual(10_000);
	expect(first.warnings.filter(w => /Dead letters over 10000 bytes: dropped the oldest/.test(w))).toHaveLength(7);
	// The events of the dropped letters are forgotten.
	expect((first.adapter as any).state.messages.size).toBe(3);
	await stop(first.broker);

	// A lower bound at the next start holds at once.
	const second = await start({}, { maxDeadLetterBytes: 5000 });
	expect(ids(second.adapter)).toEqual(["b9"]);
	expect((second.adapter as any).state.messages.size).toBe(1);
});
