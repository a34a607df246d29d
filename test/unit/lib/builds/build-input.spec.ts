import { attachmentDisposition, commitIdPrefix, parseArtifactsFilename, parseId, parseNewBuild, seqRange } from "../../../../lib/builds/build-input";
import { seqKey, shaKey, statusKey } from "../../../../models/build";
import { ApiError } from "../../../../lib/api/errors";

function errorOf(fn: () => unknown): { code: number; body: unknown } {
	try {
		fn();
	} catch (err) {
		expect(err).toBeInstanceOf(ApiError);
		return { code: (err as ApiError).code, body: (err as ApiError).data.body };
	}
	throw new Error("expected an error");
}

const SHA = "0ff3ae198f8601a285adcf5c0fff204ee6fba5fd";
const commit = {
	id: SHA,
	title: "Test the CI integration.",
	message: "Test the CI integration.\n\nMore.",
	author_name: "Administrator",
	author_email: "admin@example.com",
	created_at: "2015-12-24T16:51:14.000+01:00",
};
const body = { project_id: 5, name: "rubocop", stage: "test", ref: "master", tag: false, commit };

describe("parseId", () => {
	it.each([
		["1", 1],
		["007", 7],
		[" 42 ", 42],
		[12, 12],
		[String(Number.MAX_SAFE_INTEGER), Number.MAX_SAFE_INTEGER],
	])("%j → %j", (raw, n) => {
		expect(parseId(raw, "build_id")).toBe(n);
	});

	it.each(["abc", "-1", "1.5", "1e3", "0x10", [], {}, { $gt: 0 }, true, 1.5, -3, 0])("%j → 400 build_id is invalid", raw => {
		expect(errorOf(() => parseId(raw, "build_id"))).toEqual({ code: 400, body: { error: "build_id is invalid" } });
	});

	it.each([undefined, null, ""])("%j → 400 build_id is missing", raw => {
		expect(errorOf(() => parseId(raw, "build_id"))).toEqual({ code: 400, body: { error: "build_id is missing" } });
	});

	it.each(["0", "99999999999999999999999"])("%j is a number no build can have → 404", raw => {
		expect(errorOf(() => parseId(raw, "build_id"))).toEqual({ code: 404, body: { message: "404 Not Found" } });
	});
});

describe("index keys and page ranges", () => {
	it("builds one-field keys that sort like (project, number)", () => {
		expect(seqKey(12, 3)).toBe("12|0000000003");
		expect(seqKey(12, 10) > seqKey(12, 9)).toBe(true);
		// One project's range never takes in another's keys ("1|…" vs "12|…": "|" sorts after digits).
		const inRange = (key: string, p: number) => key >= seqKey(p, 1) && key <= seqKey(p, 9999999999);
		expect([inRange(seqKey(12, 5), 1), inRange(seqKey(1, 5), 12), inRange(seqKey(123, 5), 12), inRange(seqKey(12, 5), 12)]).toEqual([
			false,
			false,
			false,
			true,
		]);
		expect(statusKey(12, "pending")).toBe("12|pending");
		expect(shaKey(12, SHA)).toBe(`12|${SHA}`);
	});

	it.each([
		[0, 1, 20, null],
		[5, 1, 20, { lo: 1, hi: 5 }],
		[45, 1, 20, { lo: 26, hi: 45 }],
		[45, 2, 20, { lo: 6, hi: 25 }],
		[45, 3, 20, { lo: 1, hi: 5 }],
		[45, 4, 20, null],
		[1_000_000, 50_000, 20, { lo: 1, hi: 20 }],
		[1_000_000, 1, 100, { lo: 999_901, hi: 1_000_000 }],
	])("total %i, page %i of %i → %j", (total, page, per, range) => {
		expect(seqRange(total, page, per)).toEqual(range);
	});
});

describe("commitIdPrefix", () => {
	it("resolves hex of 7 to 63 characters that is not a full id, lower-cased; anything else is matched as it is", () => {
		expect(commitIdPrefix("0FF3AE1")).toBe("0ff3ae1");
		expect(commitIdPrefix(SHA.slice(0, 39))).toBe(SHA.slice(0, 39));
		expect(commitIdPrefix("a".repeat(63))).toBe("a".repeat(63));
		for (const asIs of ["0ff3ae", SHA, "a".repeat(64), "a".repeat(65), "master", "0ff3ae1-x", "", "0ff 3ae1"])
			expect([asIs, commitIdPrefix(asIs)]).toEqual([asIs, null]);
	});
});

describe("parseNewBuild", () => {
	it("reads the contract's fields, lower-cases the hash and derives short_id", () => {
		expect(parseNewBuild({ ...body, commit: { ...commit, id: SHA.toUpperCase() }, user_id: "3" })).toEqual({
			project_id: 5,
			name: "rubocop",
			stage: "test",
			ref: "master",
			tag: false,
			commit: { ...commit, short_id: "0ff3ae19", committer_name: commit.author_name, committer_email: commit.author_email },
			user_id: 3,
		});
	});

	it("takes an optional committer, and the author as committer when there is none", () => {
		const committer = { committer_name: "Release Bot", committer_email: "bot@example.com" };
		expect(parseNewBuild({ ...body, commit: { ...commit, ...committer } }).commit).toMatchObject(committer);
		expect(parseNewBuild(body).commit).toMatchObject({ committer_name: commit.author_name, committer_email: commit.author_email });
	});

	it("defaults stage to test, tag to false, the title to the message's first line; keeps a given short_id", () => {
		const { stage: _stage, tag: _tag, ...rest } = body;
		const { title: _title, ...c } = commit;
		const out = parseNewBuild({ ...rest, commit: { ...c, short_id: "0ff3ae1" } });
		expect(out).toMatchObject({ stage: "test", tag: false, user_id: null });
		expect(out.commit).toMatchObject({ title: "Test the CI integration.", short_id: "0ff3ae1" });
		expect(parseNewBuild({ ...body, tag: "true" }).tag).toBe(true);
	});

	it("writes a +HHMM offset as +HH:MM and keeps Z", () => {
		expect(parseNewBuild({ ...body, commit: { ...commit, created_at: "2015-12-24T16:51:14+0100" } }).commit.created_at).toBe("2015-12-24T16:51:14+01:00");
		expect(parseNewBuild({ ...body, commit: { ...commit, created_at: "2015-12-24T15:51:14Z" } }).commit.created_at).toBe("2015-12-24T15:51:14Z");
	});

	it.each([
		[{ project_id: undefined }, "project_id is missing"],
		[{ project_id: "x" }, "project_id is invalid"],
		[{ project_id: { $gt: 0 } }, "project_id is invalid"],
		[{ project_id: "99999999999999999999" }, "project_id is invalid"],
		[{ name: undefined }, "name is missing"],
		[{ name: "" }, "name is missing"],
		[{ name: 5 }, "name is invalid"],
		[{ name: "x".repeat(256) }, "name is invalid"],
		[{ name: "two\nlines" }, "name is invalid"],
		[{ ref: undefined }, "ref is missing"],
		[{ stage: ["test"] }, "stage is invalid"],
		[{ tag: "maybe" }, "tag is invalid"],
		[{ user_id: "me" }, "user_id is invalid"],
		[{ commit: undefined }, "commit is missing"],
		[{ commit: "abc" }, "commit is invalid"],
		[{ commit: [commit] }, "commit is invalid"],
		[{ commit: { ...commit, id: "abc" } }, "commit[id] is invalid"],
		[{ commit: { ...commit, id: undefined } }, "commit[id] is missing"],
		[{ commit: { ...commit, short_id: "ffff" } }, "commit[short_id] is invalid"],
		[{ commit: { ...commit, message: undefined } }, "commit[message] is missing"],
		[{ commit: { ...commit, author_name: undefined } }, "commit[author_name] is missing"],
		[{ commit: { ...commit, author_email: "nobody" } }, "commit[author_email] is invalid"],
		[{ commit: { ...commit, committer_email: "nobody" } }, "commit[committer_email] is invalid"],
		[{ commit: { ...commit, committer_name: "two\nlines" } }, "commit[committer_name] is invalid"],
		[{ commit: { ...commit, committer_name: ["x"] } }, "commit[committer_name] is invalid"],
		[{ commit: { ...commit, created_at: undefined } }, "commit[created_at] is missing"],
		[{ commit: { ...commit, created_at: "yesterday" } }, "commit[created_at] is invalid"],
		[{ commit: { ...commit, created_at: "2015-13-45T99:00:00Z" } }, "commit[created_at] is invalid"],
	])("%j → 400 %s", (change, error) => {
		expect(errorOf(() => parseNewBuild({ ...body, ...change }))).toEqual({ code: 400, body: { error } });
	});

	it("accepts a multi-line message with tabs but no other control characters", () => {
		expect(parseNewBuild({ ...body, commit: { ...commit, message: "a\n\tb\r\n" } }).commit.message).toBe("a\n\tb\r\n");
		expect(errorOf(() => parseNewBuild({ ...body, commit: { ...commit, message: "a\u0000b" } })).body).toEqual({ error: "commit[message] is invalid" });
	});
});

describe("artifacts file names", () => {
	it.each(["ci_build_artifacts.zip", "a b.tar.gz", "résumé.zip", "x".repeat(255)])("accepts %j", name => {
		expect(parseArtifactsFilename(name)).toBe(name);
	});

	it.each([
		[undefined, "filename is missing"],
		["", "filename is missing"],
		["a/b.zip", "filename is invalid"],
		["a\\b.zip", "filename is invalid"],
		[".", "filename is invalid"],
		["..", "filename is invalid"],
		["a\r\nSet-Cookie: x", "filename is invalid"],
		["x".repeat(256), "filename is invalid"],
		// 255 characters at most, as the API description says (a byte limit no JSON Schema can state).
		["é".repeat(256), "filename is invalid"],
		[["a.zip"], "filename is invalid"],
	])("refuses %j (%s)", (raw, error) => {
		expect(errorOf(() => parseArtifactsFilename(raw))).toEqual({ code: 400, body: { error } });
	});

	it("sends a plain name unquoted as GitLab 8.x, anything else quoted with an RFC 5987 form", () => {
		expect(attachmentDisposition("ci_build_artifacts.zip")).toBe("attachment; filename=ci_build_artifacts.zip");
		expect(attachmentDisposition('my "build".zip')).toBe(`attachment; filename="my _build_.zip"; filename*=UTF-8''my%20%22build%22.zip`);
		expect(attachmentDisposition("résumé.zip")).toBe(`attachment; filename="r_sum_.zip"; filename*=UTF-8''r%C3%A9sum%C3%A9.zip`);
		expect(attachmentDisposition("it's (1).zip")).toBe(`attachment; filename="it's (1).zip"; filename*=UTF-8''it%27s%20%281%29.zip`);
	});
});
