/**
 * The relayed clean's event (lib/cache/clean-relay.ts): what a received one may name, how a missed
 * clean is cut into events within the bounds, and Redis' glob match for the entries a clean under
 * way hides. (test/integration/cache/cache-relay.spec.ts sends the events over the real NATS.)
 */
import type { ServiceBroker } from "moleculer";
import {
	CleanRelay,
	globMatches,
	MAX_PATTERN_WILDCARDS,
	MAX_RELAYED_KEYS,
	MAX_RELAYED_LENGTH,
	MAX_RELAYED_PATTERNS,
	relayBatches,
	relayedTargets,
} from "../../../../lib/cache/clean-relay";

const project = ['labels.**:"7"', 'labels.**:"7"?**'];
const access = ['accounts.projectAccess:"5"|7|false', 'accounts.projectAccess:"5"|7|true'];

describe("relayedTargets", () => {
	it("takes a project's patterns and exact keys", () => {
		expect(relayedTargets({ patterns: project, keys: access })).toEqual({ patterns: project, keys: access });
		expect(relayedTargets({ patterns: ["accounts.resolveToken:**"] })).toEqual({ patterns: ["accounts.resolveToken:**"], keys: [] });
		expect(relayedTargets({ keys: access })).toEqual({ patterns: [], keys: access });
	});

	it.each([
		["null", null, "not an object"],
		["a string", "labels.**", "not an object"],
		["a list", project, "not an object"],
		["nothing", {}, "names nothing"],
		["empty lists", { patterns: [], keys: [] }, "names nothing"],
		["other fields", { patterns: project, all: true }, "unknown fields"],
		["patterns not a list", { patterns: "labels.**" }, "patterns: not a list"],
		["a pattern not a string", { patterns: [42] }, "patterns[0]: not a string"],
		["the whole cache", { patterns: ["**"] }, "patterns[0]: does not start with a service's name"],
		["every service", { patterns: ['*.list:"7"'] }, "patterns[0]: does not start with a service's name"],
		["an empty key", { keys: [""] }, "keys[0]: does not start with a service's name"],
		["too many patterns", { patterns: Array(MAX_RELAYED_PATTERNS + 1).fill("labels.**") }, `patterns: more than ${MAX_RELAYED_PATTERNS}`],
		["too many keys", { keys: Array(MAX_RELAYED_KEYS + 1).fill("labels.list") }, `keys: more than ${MAX_RELAYED_KEYS}`],
		["a long key", { keys: ["labels." + "x".repeat(MAX_RELAYED_LENGTH)] }, `keys[0]: longer than ${MAX_RELAYED_LENGTH} characters`],
		["many wildcards", { patterns: ["labels." + "*a".repeat(MAX_PATTERN_WILDCARDS + 1)] }, `patterns[0]: more than ${MAX_PATTERN_WILDCARDS} wildcards`],
	])("ignores %s", (_what, payload, why) => {
		expect(relayedTargets(payload)).toBe(why);
	});
});

describe("relayBatches", () => {
	it("sends a write's clean as one event", () => {
		expect(relayBatches(project, [])).toEqual([{ patterns: project, keys: [] }]);
	});

	it("cuts a long list into events within the bounds, and leaves out what no receiver takes", () => {
		const patterns = Array.from({ length: MAX_RELAYED_PATTERNS + 2 }, (_, i) => `labels.**:"${i}"`);
		const batches = relayBatches(["**", ...patterns], ["labels." + "x".repeat(MAX_RELAYED_LENGTH), ...access]);
		expect(batches).toEqual([
			{ patterns: patterns.slice(0, MAX_RELAYED_PATTERNS), keys: access },
			{ patterns: patterns.slice(MAX_RELAYED_PATTERNS), keys: [] },
		]);
		for (const batch of batches) expect(relayedTargets(batch)).toEqual(batch);
		expect(relayBatches(["**"], [])).toEqual([]);
	});
});

describe("globMatches (Redis' MATCH, as a clean's SCAN applies it)", () => {
	it.each([
		['labels.**:"7"', 'labels.list:"7"', true],
		['labels.**:"7"?**', 'labels.list:"7"|1|20', true],
		['labels.**:"7"?**', 'labels.list:"70"|1|20', false],
		['labels.**:"7"', 'labels.list:"70"', false],
		['labels.**:"7"', 'snippets.list:"7"', false],
		["accounts.resolveToken:**", "accounts.resolveToken:abc.def", true],
		["a*b*c", "a" + "b".repeat(5000), false],
	])("%s on %s: %s", (pattern, key, matches) => {
		expect(globMatches(pattern, key)).toBe(matches);
	});
});

describe("CleanRelay on receipt", () => {
	function setup() {
		const warnings: string[] = [];
		const broker = { getLogger: () => ({ warn: (m: string) => warnings.push(m) }) } as unknown as ServiceBroker;
		let finish!: () => void;
		const cleaned: [string[], string[]][] = [];
		const relay = new CleanRelay(broker).servedBy((patterns, keys) => {
			cleaned.push([patterns, keys]);
			return new Promise<void>(resolve => (finish = resolve));
		});
		return { relay, warnings, cleaned, finish: () => finish() };
	}

	it("ignores a malformed event with a warning naming the sender and the reason, never what it carried", async () => {
		const t = setup();
		await t.relay.receive({ patterns: ["**"] }, "node-9");
		expect(t.cleaned).toEqual([]);
		expect(t.warnings).toEqual(["Ignored a cache clean relayed by node node-9: patterns[0]: does not start with a service's name"]);
	});

	it("cleans a well-formed one, and reads the entries it names as misses until it is done", async () => {
		const t = setup();
		const done = t.relay.receive({ patterns: [project[1]], keys: [access[0]] }, "labels-1");
		expect(t.cleaned).toEqual([[[project[1]], [access[0]]]]);
		expect([t.relay.hides('labels.list:"7"|1|20'), t.relay.hides(access[0]), t.relay.hides(access[1]), t.relay.hides('labels.list:"8"|1|20')]).toEqual([
			true,
			true,
			false,
			false,
		]);
		t.finish();
		await done;
		expect(t.relay.hides('labels.list:"7"|1|20')).toBe(false);
		expect(t.warnings).toEqual([]);
	});
});
