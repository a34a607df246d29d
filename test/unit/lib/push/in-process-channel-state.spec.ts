import { deliveryKey } from "../../../../lib/push/delivery-log";
import { ChannelState, type JournalRecord } from "../../../../lib/push/in-process-channel-state";

const publish = (s: number, id: string, groups: string[]): JournalRecord => ({
	t: "p",
	s,
	c: "push",
	i: id,
	h: { "x-trace": String(s) },
	d: Buffer.from(JSON.stringify({ id })).toString("base64"),
	g: groups,
});

function replay(records: JournalRecord[]): ChannelState {
	const state = new ChannelState();
	for (const r of records) state.apply(r);
	return state;
}

describe("the in-process channel's journal state", () => {
	const mailed = deliveryKey("", "mailer", "ev-1", "dev@example.com");
	const commented = deliveryKey("", "tracker", "ev-2", "https://tracker.example/1");
	const journal: JournalRecord[] = [
		publish(1, "ev-1", ["mailer", "tracker"]),
		publish(2, "ev-2", ["tracker"]),
		{ t: "f", s: 1, g: "mailer", n: 2 },
		{ t: "k", k: mailed },
		{ t: "a", s: 1, g: "tracker" },
		{ t: "x", s: 2, g: "tracker", e: "HTTP 500", at: "2026-11-24T08:00:00.000Z" },
		{ t: "k", k: commented },
		{ t: "s", s: 7 },
	];

	it("replays what each group still has to do, dead letters and delivery records", () => {
		const state = replay(journal);
		expect(state.seq).toBe(7);
		expect([...state.messages.keys()]).toEqual([1, 2]);
		expect(Object.fromEntries(state.messages.get(1)!.groups)).toEqual({ mailer: { deliveries: 2, dead: null } });
		expect(Object.fromEntries(state.messages.get(2)!.groups)).toEqual({
			tracker: { deliveries: 0, dead: { at: "2026-11-24T08:00:00.000Z", error: "HTTP 500" } },
		});
		expect([...state.doneKeys]).toEqual([mailed, commented]);
	});

	it("forgets an event once every group is finished with it", () => {
		const state = replay([...journal, { t: "a", s: 1, g: "mailer" }]);
		expect([...state.messages.keys()]).toEqual([2]);
	});

	it("snapshots to records that replay to the same state, without the records no event needs", () => {
		const state = replay([...journal, { t: "a", s: 1, g: "mailer" }]);
		const lines = [...state.snapshot()];
		const again = replay(lines.map(line => JSON.parse(line) as JournalRecord));
		expect(again.seq).toBe(7);
		expect([...again.messages.values()]).toEqual([...state.messages.values()]);
		// ev-1 is finished everywhere: its mail record is dropped; ev-2's dead letter may be replayed to the tracker.
		expect([...again.doneKeys]).toEqual([commented]);
	});

	it("drops an event's delivery records when the group is finished with its last copy (a replay is another copy)", () => {
		const state = replay([
			publish(1, "ev-1", ["mailer", "tracker"]),
			{ t: "k", k: mailed },
			{ t: "x", s: 1, g: "mailer", e: "SMTP down", at: "2026-11-24T08:00:00.000Z" },
			// The replay: published again, then the letter removed.
			publish(2, "ev-1", ["mailer", "tracker"]),
			{ t: "a", s: 1, g: "mailer" },
			{ t: "a", s: 2, g: "tracker" },
		]);
		expect([...state.doneKeys]).toEqual([mailed]);
		state.apply({ t: "a", s: 1, g: "tracker" });
		expect([...state.doneKeys]).toEqual([mailed]);
		state.apply({ t: "a", s: 2, g: "mailer" });
		expect(state.doneKeys.size).toBe(0);
		expect(state.messages.size).toBe(0);
	});

	it("keeps records that came after their event was finished until they have grown well past the last prune", () => {
		const state = new ChannelState();
		for (let i = 0; i < 10_000; i++) state.apply({ t: "k", k: deliveryKey("", "mailer", `gone-${i}`, "x") });
		state.pruneIfGrown();
		expect(state.doneKeys.size).toBe(10_000);
		state.apply({ t: "k", k: deliveryKey("", "mailer", "gone-last", "x") });
		state.pruneIfGrown();
		expect(state.doneKeys.size).toBe(0);
	});
});
