import { ApiError } from "../../../../lib/api/errors";
import { commitTitle, refName, validatePushPayload } from "../../../../lib/push/payload";
import { pushBody, ZERO } from "../../../support/push-fixtures";

function errorBody(body: unknown): unknown {
	try {
		validatePushPayload(body);
	} catch (err) {
		if (err instanceof ApiError) return { code: err.code, body: (err.data as { body: unknown }).body };
		throw err;
	}
	throw new Error("expected a 400");
}

describe("push payload validation", () => {
	it("accepts GitLab's push shape and keeps only known keys", () => {
		const body = pushBody({ commits: [{ message: "a" }, { message: "b" }], extra: { unknown_key: 1, user_avatar: "x" } });
		const push = validatePushPayload(body);
		expect(push).toMatchObject({
			object_kind: "push",
			ref: "refs/heads/master",
			user_id: 1,
			project_id: 1,
			total_commits_count: 2,
			project: { name: "demo", path_with_namespace: "root/demo", namespace: "root" },
			repository: { name: "demo" },
		});
		expect(push.commits[1]).toEqual(body.commits[1]);
		expect(push).not.toHaveProperty("unknown_key");
		expect(push).not.toHaveProperty("user_avatar");
	});

	it("accepts tag pushes and branch deletions", () => {
		expect(validatePushPayload(pushBody({ ref: "refs/tags/v1.0" })).object_kind).toBe("tag_push");
		const del = validatePushPayload({ ...pushBody({ after: ZERO, commits: [] }), checkout_sha: null });
		expect(del).toMatchObject({ after: ZERO, checkout_sha: null, commits: [], total_commits_count: 0 });
	});

	it("answers Grape-style errors for missing and invalid values", () => {
		const cases: [Record<string, unknown>, string][] = [
			[{ object_kind: undefined }, "object_kind is missing"],
			[{ ref: undefined }, "ref is missing"],
			[{ before: undefined }, "before is missing"],
			[{ project_id: undefined }, "project_id is missing"],
			[{ project: undefined }, "project is missing"],
			[{ user_name: undefined }, "user_name is missing"],
			[{ before: "abc" }, "before is invalid"],
			[{ after: "g".repeat(40) }, "after is invalid"],
			[{ ref: "master" }, "ref is invalid"],
			[{ ref: "refs/heads/a\nb" }, "ref is invalid"],
			[{ user_id: "x" }, "user_id is invalid"],
			[{ project_id: 0 }, "project_id is invalid"],
			[{ commits: "nope" }, "commits is invalid"],
			[{ commits: Array(101).fill({}) }, "commits is invalid"],
			[{ total_commits_count: -1 }, "total_commits_count is invalid"],
			[{ project: { name: "x", path_with_namespace: "nopath" } }, "project[path_with_namespace] is invalid"],
		];
		for (const [patch, error] of cases) {
			const body = { ...pushBody(), ...patch };
			for (const [k, v] of Object.entries(patch)) if (v === undefined) delete body[k];
			expect({ patch: Object.keys(patch), res: errorBody(body) }).toEqual({ patch: Object.keys(patch), res: { code: 400, body: { error } } });
		}
	});

	it("refuses a kind that disagrees with the ref, and bad commits", () => {
		expect(errorBody({ ...pushBody(), object_kind: "tag_push" })).toEqual({ code: 400, body: { error: "object_kind does not have a valid value" } });
		expect(errorBody({ ...pushBody(), object_kind: "issue" })).toEqual({ code: 400, body: { error: "object_kind does not have a valid value" } });
		const bad = pushBody();
		bad.commits[0].id = "xyz";
		expect(errorBody(bad)).toEqual({ code: 400, body: { error: "commits[0][id] is invalid" } });
		const noAuthor = pushBody();
		delete noAuthor.commits[0].author;
		expect(errorBody(noAuthor)).toEqual({ code: 400, body: { error: "commits[0][author] is missing" } });
		const badUrl = pushBody();
		badUrl.commits[0].url = "javascript:alert(1)";
		expect(errorBody(badUrl)).toEqual({ code: 400, body: { error: "commits[0][url] is invalid" } });
		expect(errorBody({ ...pushBody(), total_commits_count: 0 })).toEqual({ code: 400, body: { error: "total_commits_count is invalid" } });
	});

	it("refuses a body that is not an object", () => {
		for (const body of [null, [], "push", 5]) expect(errorBody(body)).toEqual({ code: 400, body: { message: "400 Bad Request" } });
	});

	it("validates the optional diffs", () => {
		expect(validatePushPayload(pushBody({ diffs: [{ new_path: "a", diff: "+x" }] })).diffs).toEqual([
			{ old_path: "a", new_path: "a", diff: "+x", new_file: false, renamed_file: false, deleted_file: false, too_large: false },
		]);
		expect(errorBody(pushBody({ diffs: [{ diff: "+x" }] }))).toEqual({ code: 400, body: { error: "diffs[0][new_path] is missing" } });
		expect(errorBody(pushBody({ diffs: [{ new_path: "a", new_file: "yes" }] }))).toEqual({ code: 400, body: { error: "diffs[0][new_file] is invalid" } });
	});
});

describe("push helpers", () => {
	it("names refs as GitLab does", () => {
		expect(refName("refs/heads/feature/x")).toBe("feature/x");
		expect(refName("refs/tags/v1")).toBe("v1");
	});

	it("makes GitLab's commit titles", () => {
		expect(commitTitle("Title\n\nBody")).toBe("Title");
		expect(commitTitle("a".repeat(100))).toBe("a".repeat(100));
		expect(commitTitle("a".repeat(101))).toBe(`${"a".repeat(80)}…`);
		expect(commitTitle(`${"b".repeat(101)}\nrest`)).toBe(`${"b".repeat(80)}…`);
		expect(commitTitle("  ")).toBe("--no commit message");
	});
});
