import { ACCESS_CACHE_PATTERNS, changedPatterns, projectRefKey } from "../../lib/accounts/auth-cache";

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

describe("changedPatterns", () => {
	it("cleans what the change names", () => {
		expect(changedPatterns({ patterns: ['accounts.projectAccess:"5"|7|false'] })).toEqual(['accounts.projectAccess:"5"|7|false']);
	});

	it.each([[undefined], [null], [{}], [{ patterns: [] }], [{ patterns: [5] }], [{ patterns: "x" }]])(
		"cleans every access look-up when the change names none it can use (%j)",
		change => {
			expect(changedPatterns(change as never)).toEqual(ACCESS_CACHE_PATTERNS);
		},
	);
});
