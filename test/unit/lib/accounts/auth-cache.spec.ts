import { ACCESS_CACHE_PATTERNS, changedTargets, projectRefKey } from "../../../../lib/accounts/auth-cache";

describe("projectRefKey", () => {
	it.each([
		["7", "7"],
		["007", "7"],
		[" 12 ", "12"],
		["Root/Demo", "root/demo"],
		["root/my.project", "root/my.project"],
	])("%j → %j", (ref, key) => {
		expect(projectRefKey(ref)).toBe(key);
	});
});

describe("changedTargets", () => {
	it("deletes the keys a change names, cleans the patterns it names", () => {
		expect(changedTargets({ keys: ['accounts.projectAccess:"5"|7|false'] })).toEqual({
			keys: ['accounts.projectAccess:"5"|7|false'],
			patterns: [],
			projects: [],
		});
		expect(changedTargets({ patterns: ["accounts.projectAccess:**"] })).toEqual({ keys: [], patterns: ["accounts.projectAccess:**"], projects: [] });
	});

	it("bumps the generations of the project references a change names, a bounded few of sane length", () => {
		expect(changedTargets({ keys: ["k"], projects: ["5", "root/demo"] }).projects).toEqual(["5", "root/demo"]);
		const many = Array.from({ length: 1000 }, (_, i) => String(i));
		expect(changedTargets({ keys: ["k"], projects: many }).projects).toEqual(many.slice(0, 8));
		expect(changedTargets({ keys: ["k"], projects: ["x".repeat(513), "7"] }).projects).toEqual(["7"]);
		expect(changedTargets({ keys: ["k"], projects: "5" as never }).projects).toEqual([]);
		expect(changedTargets({ keys: ["k"], projects: [5] as never }).projects).toEqual([]);
	});

	it.each([[undefined], [null], [{}], [{ keys: [] }], [{ keys: [1] }], [{ patterns: [] }], [{ patterns: [5] }], [{ patterns: "x" }]])(
		"cleans every access look-up when the change names none it can use (%j)",
		change => {
			expect(changedTargets(change as never)).toEqual({ keys: [], patterns: ACCESS_CACHE_PATTERNS, projects: [] });
		},
	);
});
