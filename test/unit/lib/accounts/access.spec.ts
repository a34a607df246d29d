import { canReadBuilds, canReadProject, effectiveLevel, hasLevel, type ProjectAccess } from "../../../../lib/accounts/access";

const user = { id: 2, username: "u", is_admin: false };
const admin = { id: 1, username: "root", is_admin: true };

describe("canReadProject", () => {
	it.each([
		[0, null, 0, false],
		[0, user, 0, false],
		[0, user, 10, true],
		[0, admin, 0, true],
		[10, null, 0, false],
		[10, user, 0, true],
		[20, null, 0, true],
		[20, user, 0, true],
	])("visibility %i, caller %j, member level %i → %s", (visibility, caller, level, expected) => {
		expect(canReadProject({ visibility_level: visibility }, caller, level)).toBe(expected);
	});
});

describe("levels", () => {
	const access = (level: number, admin = false, visibility = 0, publicBuilds = false): ProjectAccess => ({
		project: { id: 1, path_with_namespace: "a/b", visibility_level: visibility, public_builds: publicBuilds, creator_id: 1 },
		level,
		admin,
	});
	it("counts admins as owners", () => {
		expect(effectiveLevel(admin, 0)).toBe(50);
		expect(effectiveLevel(user, 20)).toBe(20);
		expect(hasLevel(access(20), 20)).toBe(true);
		expect(hasLevel(access(10), 20)).toBe(false);
		expect(hasLevel(access(0, true), 40)).toBe(true);
	});
	it("lets non-members read builds only with public_builds on internal/public projects", () => {
		expect(canReadBuilds(access(20), true)).toBe(true);
		expect(canReadBuilds(access(10), true)).toBe(false);
		expect(canReadBuilds(access(0, false, 20, true), true)).toBe(true);
		expect(canReadBuilds(access(0, false, 20, false), true)).toBe(false);
		expect(canReadBuilds(access(0, false, 0, true), true)).toBe(false);
		// Anonymous callers (v4's reads of a public project): public builds of public projects only.
		expect(canReadBuilds(access(0, false, 20, true), false)).toBe(true);
		expect(canReadBuilds(access(0, false, 20, false), false)).toBe(false);
		expect(canReadBuilds(access(0, false, 10, true), false)).toBe(false);
		expect(canReadBuilds(access(0, false, 10, true), true)).toBe(true);
	});
});
