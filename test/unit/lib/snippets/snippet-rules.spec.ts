/**
 * Snippet rules: the visibility matrix of docs/api.md#snippet-visibility for every kind of caller on every
 * kind of project, the list query checked against the same matrix on the embedded store's SQL, the
 * write permissions, and the GitLab 8.16 parameter and model errors.
 */
import type { Caller, ProjectAccess } from "../../../../lib/accounts/access";
import { ApiError } from "../../../../lib/api/errors";
import {
	canCreateSnippet,
	canModifySnippet,
	canReadSnippet,
	checkSnippetFields,
	FILE_NAME_MESSAGE,
	MAX_SNIPPET_CONTENT_BYTES,
	readSnippetCreate,
	readSnippetUpdate,
	visibleSnippetsQuery,
} from "../../../../lib/snippets/snippet-rules";
import { memoryTable, type MemoryTable } from "../../../support/sqlite-table";

const PRIVATE = 0;
const INTERNAL = 10;
const PUBLIC = 20;

const users = {
	author: { id: 2, username: "author", is_admin: false },
	developer: { id: 3, username: "developer", is_admin: false },
	master: { id: 4, username: "master", is_admin: false },
	guest: { id: 5, username: "guest", is_admin: false },
	stranger: { id: 6, username: "stranger", is_admin: false },
	admin: { id: 1, username: "root", is_admin: true },
} satisfies Record<string, Caller>;

type Role = keyof typeof users | "anonymous";
const ROLES: Role[] = ["author", "developer", "master", "guest", "stranger", "admin", "anonymous"];
const MEMBER_LEVEL: Record<Role, number> = { author: 20, developer: 30, master: 40, guest: 10, stranger: 0, admin: 0, anonymous: 0 };

function callerOf(role: Role): Caller | null {
	return role === "anonymous" ? null : users[role];
}

function accessOf(role: Role, projectVisibility: number): ProjectAccess {
	const caller = callerOf(role);
	return {
		project: { id: 7, path_with_namespace: "author/demo", visibility_level: projectVisibility, public_builds: true, creator_id: 2 },
		level: caller?.is_admin ? 50 : MEMBER_LEVEL[role],
		admin: !!caller?.is_admin,
	};
}

/** The decided matrix, written out: who sees a snippet of `level` in a project of `project` visibility. */
function expectedReaders(project: number, level: number): Role[] {
	const members: Role[] = ["author", "developer", "master", "guest"];
	const projectReaders: Role[] =
		project === PUBLIC ? [...members, "stranger", "admin", "anonymous"] : project === INTERNAL ? [...members, "stranger", "admin"] : [...members, "admin"];
	if (level === PRIVATE) return ["author", "admin"];
	if (level === INTERNAL) return projectReaders.filter(r => r !== "anonymous");
	return projectReaders;
}

const CASES: [number, number][] = [];
for (const project of [PRIVATE, INTERNAL, PUBLIC]) for (const level of [PRIVATE, INTERNAL, PUBLIC]) CASES.push([project, level]);

describe("canReadSnippet: the visibility matrix", () => {
	it.each(CASES)("project %i, snippet %i", (project, level) => {
		const snippet = { author_id: users.author.id, visibility_level: level };
		const readers = ROLES.filter(role => canReadSnippet(snippet, callerOf(role), accessOf(role, project)));
		expect(readers.sort()).toEqual(expectedReaders(project, level).sort());
	});

	it("a private snippet is hidden from masters and owners who did not write it", () => {
		const snippet = { author_id: users.author.id, visibility_level: PRIVATE };
		const owner = { id: 9, username: "owner", is_admin: false };
		const access = { ...accessOf("master", PRIVATE), level: 50 };
		expect(canReadSnippet(snippet, owner, access)).toBe(false);
		expect(canReadSnippet(snippet, users.master, accessOf("master", PUBLIC))).toBe(false);
	});
});

describe("visibleSnippetsQuery selects in a real SQLite table exactly what canReadSnippet allows", () => {
	let table: MemoryTable;
	const docs: { id: number; project_id: number; author_id: number; visibility_level: number }[] = [];

	beforeAll(() => {
		let id = 0;
		for (const level of [PRIVATE, INTERNAL, PUBLIC])
			for (const author of [users.author.id, users.developer.id, users.master.id])
				docs.push({ id: ++id, project_id: 7, author_id: author, visibility_level: level });
		// Another project's snippets must never leak into this one's list.
		docs.push({ id: id + 1, project_id: 8, author_id: users.author.id, visibility_level: PUBLIC });
		table = memoryTable(docs);
	});

	const combos: [Role, number][] = [];
	for (const role of ROLES) for (const project of [PRIVATE, INTERNAL, PUBLIC]) combos.push([role, project]);

	it.each(combos)("%s on a project of visibility %i", (role, project) => {
		const caller = callerOf(role);
		const access = accessOf(role, project);
		const query = visibleSnippetsQuery(7, caller, access);
		const expected = docs.filter(d => d.project_id === 7 && canReadSnippet(d, caller, access)).map(d => d.id);
		if (query === null) {
			expect(expected).toEqual([]);
			return;
		}
		const found = table.find(query).map(d => d.id as number);
		expect(found).toEqual(expected);
	});
});

describe("write permissions", () => {
	it("create needs reporter or above; admins may; guests, strangers and anonymous callers may not", () => {
		const allowed = ROLES.filter(role => canCreateSnippet(callerOf(role), accessOf(role, PUBLIC)));
		expect(allowed.sort()).toEqual(["admin", "author", "developer", "master"].sort());
	});

	it("update and delete: the author (whatever their level), masters and admins", () => {
		for (const level of [PRIVATE, INTERNAL, PUBLIC]) {
			const snippet = { author_id: users.author.id, visibility_level: level };
			const allowed = ROLES.filter(role => canModifySnippet(snippet, callerOf(role), accessOf(role, PUBLIC)));
			expect(allowed.sort()).toEqual(["admin", "author", "master"].sort());
		}
		// An author demoted to guest still owns their snippet.
		expect(canModifySnippet({ author_id: users.guest.id, visibility_level: PUBLIC }, users.guest, accessOf("guest", PUBLIC))).toBe(true);
	});
});

/** The status and body an ApiError would give. */
function errorOf(fn: () => unknown): { status: number; body: unknown } {
	try {
		fn();
	} catch (err) {
		if (err instanceof ApiError) return { status: Number(err.code), body: (err.data as { body: unknown }).body };
		throw err;
	}
	throw new Error("expected an ApiError");
}

const valid = { title: "Hello", file_name: "hello.rb", code: "puts 1\n", visibility_level: 0 };

/** The parameters then the model rules, as the service applies them (with its permission check between). */
function parseSnippetCreate(params: Record<string, unknown>, projectVisibility: number) {
	const fields = readSnippetCreate(params);
	checkSnippetFields(fields, projectVisibility);
	return fields;
}

function parseSnippetUpdate(params: Record<string, unknown>, projectVisibility: number) {
	const changes = readSnippetUpdate(params);
	checkSnippetFields(changes, projectVisibility);
	return changes;
}

describe("readSnippetCreate then checkSnippetFields", () => {
	it("returns the fields, with code as content, byte-exact", () => {
		const code = "línea 1\r\n\tz̧ 🎉\n\n\n";
		expect(parseSnippetCreate({ ...valid, code, visibility_level: "20" }, PUBLIC)).toEqual({
			title: "Hello",
			file_name: "hello.rb",
			content: code,
			visibility_level: 20,
		});
	});

	it("parameter checks come first and alone: readSnippetCreate leaves model rules to checkSnippetFields", () => {
		const fields = readSnippetCreate({ ...valid, title: "", visibility_level: 20 });
		expect(fields).toEqual({ title: "", file_name: "hello.rb", content: "puts 1\n", visibility_level: 20 });
		expect(errorOf(() => checkSnippetFields(fields, PRIVATE)).body).toEqual({
			message: { title: ["can't be blank"], visibility_level: ["public is not allowed in a private project"] },
		});
		expect(readSnippetUpdate({ code: "" })).toEqual({});
	});

	it("lists every missing parameter, in order, as Grape does", () => {
		expect(errorOf(() => parseSnippetCreate({}, PUBLIC))).toEqual({
			status: 400,
			body: { error: "title is missing, file_name is missing, code is missing, visibility_level is missing" },
		});
		expect(errorOf(() => parseSnippetCreate({ ...valid, title: undefined }, PUBLIC))).toEqual({ status: 400, body: { error: "title is missing" } });
		expect(errorOf(() => parseSnippetCreate({ ...valid, code: null }, PUBLIC))).toEqual({ status: 400, body: { error: "code is missing" } });
	});

	it("visibility_level must be 0, 10 or 20", () => {
		for (const v of [5, 30, -10, "11"])
			expect(errorOf(() => parseSnippetCreate({ ...valid, visibility_level: v }, PUBLIC))).toEqual({
				status: 400,
				body: { error: "visibility_level does not have a valid value" },
			});
		for (const v of ["public", "10.5", true, [10], {}, 10.5])
			expect(errorOf(() => parseSnippetCreate({ ...valid, visibility_level: v }, PUBLIC))).toEqual({
				status: 400,
				body: { error: "visibility_level is invalid" },
			});
	});

	it("a snippet may not be more visible than its project", () => {
		expect(errorOf(() => parseSnippetCreate({ ...valid, visibility_level: 20 }, PRIVATE))).toEqual({
			status: 400,
			body: { message: { visibility_level: ["public is not allowed in a private project"] } },
		});
		expect(errorOf(() => parseSnippetCreate({ ...valid, visibility_level: 20 }, INTERNAL))).toEqual({
			status: 400,
			body: { message: { visibility_level: ["public is not allowed in an internal project"] } },
		});
		expect(parseSnippetCreate({ ...valid, visibility_level: 10 }, INTERNAL).visibility_level).toBe(10);
	});

	it("title: blank and too long", () => {
		expect(errorOf(() => parseSnippetCreate({ ...valid, title: "  " }, PUBLIC)).body).toEqual({ message: { title: ["can't be blank"] } });
		expect(errorOf(() => parseSnippetCreate({ ...valid, title: "t".repeat(256) }, PUBLIC)).body).toEqual({
			message: { title: ["is too long (maximum is 255 characters)"] },
		});
		expect(parseSnippetCreate({ ...valid, title: "ü".repeat(255) }, PUBLIC).title).toHaveLength(255);
	});

	it("file_name: letters (any script), digits, _ - @ + . only (GitLab 8.16); empty allowed as in GitLab 8; at most 255", () => {
		for (const name of ["a.rb", "Makefile", "my_file-2.tar.gz", "user@host", "файл.txt", "", ".hidden", "c++.cpp"])
			expect(parseSnippetCreate({ ...valid, file_name: name }, PUBLIC).file_name).toBe(name);
		for (const name of ["my file.rb", "../etc/passwd", "a/b", "a=b", "semi;colon", "tab\tname"])
			expect(errorOf(() => parseSnippetCreate({ ...valid, file_name: name }, PUBLIC)).body).toEqual({ message: { file_name: [FILE_NAME_MESSAGE] } });
		expect(errorOf(() => parseSnippetCreate({ ...valid, file_name: "f".repeat(256) }, PUBLIC)).body).toEqual({
			message: { file_name: ["is too long (maximum is 255 characters)"] },
		});
	});

	it("content: not blank, at most the documented number of UTF-8 bytes", () => {
		expect(errorOf(() => parseSnippetCreate({ ...valid, code: "" }, PUBLIC)).body).toEqual({ message: { content: ["can't be blank"] } });
		expect(errorOf(() => parseSnippetCreate({ ...valid, code: " \n\t" }, PUBLIC)).body).toEqual({ message: { content: ["can't be blank"] } });
		expect(parseSnippetCreate({ ...valid, code: "x".repeat(MAX_SNIPPET_CONTENT_BYTES) }, PUBLIC).content).toHaveLength(MAX_SNIPPET_CONTENT_BYTES);
		expect(errorOf(() => parseSnippetCreate({ ...valid, code: "x".repeat(MAX_SNIPPET_CONTENT_BYTES + 1) }, PUBLIC))).toEqual({
			status: 400,
			body: { message: { content: [`is too long (maximum is ${MAX_SNIPPET_CONTENT_BYTES} bytes)`] } },
		});
		// Counted in bytes: two-byte characters reach the limit at half the length.
		expect(errorOf(() => parseSnippetCreate({ ...valid, code: "é".repeat(MAX_SNIPPET_CONTENT_BYTES / 2 + 1) }, PUBLIC)).status).toBe(400);
	});

	it("numbers become text; arrays and objects are invalid parameters", () => {
		expect(parseSnippetCreate({ ...valid, title: 42, code: 7 }, PUBLIC)).toMatchObject({ title: "42", content: "7" });
		expect(errorOf(() => parseSnippetCreate({ ...valid, title: ["a"] }, PUBLIC)).body).toEqual({ error: "title is invalid" });
		expect(errorOf(() => parseSnippetCreate({ ...valid, code: { a: 1 } }, PUBLIC)).body).toEqual({ error: "code is invalid" });
	});

	it("several model errors come together", () => {
		expect(errorOf(() => parseSnippetCreate({ title: "", file_name: "a b", code: " ", visibility_level: 10 }, PRIVATE)).body).toEqual({
			message: {
				title: ["can't be blank"],
				file_name: [FILE_NAME_MESSAGE],
				content: ["can't be blank"],
				visibility_level: ["internal is not allowed in a private project"],
			},
		});
	});
});

describe("readSnippetUpdate then checkSnippetFields", () => {
	it("needs at least one of the four parameters", () => {
		expect(errorOf(() => parseSnippetUpdate({}, PUBLIC))).toEqual({
			status: 400,
			body: { error: "title, file_name, code, visibility_level are missing, at least one parameter must be provided" },
		});
		expect(errorOf(() => parseSnippetUpdate({ title: null }, PUBLIC)).status).toBe(400);
	});

	it("returns only what changes; a blank code leaves the content alone", () => {
		expect(parseSnippetUpdate({ title: "New" }, PUBLIC)).toEqual({ title: "New" });
		expect(parseSnippetUpdate({ code: "  " }, PUBLIC)).toEqual({});
		expect(parseSnippetUpdate({ code: "a\n", visibility_level: "10", file_name: "x.md" }, PUBLIC)).toEqual({
			content: "a\n",
			visibility_level: 10,
			file_name: "x.md",
		});
	});

	it("validates what is given, including visibility against the project", () => {
		expect(errorOf(() => parseSnippetUpdate({ title: "" }, PUBLIC)).body).toEqual({ message: { title: ["can't be blank"] } });
		expect(errorOf(() => parseSnippetUpdate({ visibility_level: 20 }, INTERNAL)).body).toEqual({
			message: { visibility_level: ["public is not allowed in an internal project"] },
		});
		expect(errorOf(() => parseSnippetUpdate({ visibility_level: 15 }, PUBLIC)).body).toEqual({ error: "visibility_level does not have a valid value" });
		expect(errorOf(() => parseSnippetUpdate({ code: "y".repeat(MAX_SNIPPET_CONTENT_BYTES + 1) }, PUBLIC)).status).toBe(400);
	});
});
