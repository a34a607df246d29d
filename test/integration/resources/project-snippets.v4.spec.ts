/**
 * API v4's project snippets (services/modules/snippets/project-snippets.v4.ts, lib/snippets/snippet-files.ts)
 * on one in-process broker, beside v3 on the same snippets: visibility as a word, several files
 * (created, updated, moved, deleted through files[]), each file's raw content, v3 showing the
 * first file, and DELETE 204 (If-Unmodified-Since).
 */
import { config } from "../../../config";
import AccountsService from "../../../services/accounts.service";
import ApiService from "../../../services/api.service";
import SnippetsService from "../../../services/snippets.service";
import { startLocal, type LocalStack } from "../../support/broker";
import { addMember, createProject, createUser, type TestUser } from "../../support/fixtures";
import type { Client } from "../../support/http";

let stack: LocalStack;
let owner: TestUser;
let guest: TestUser;
let project: { id: number; path_with_namespace: string };
let v4: Client;
const snippets = () => `/projects/${project.id}/snippets`;

beforeAll(async () => {
	stack = await startLocal([ApiService, AccountsService, SnippetsService]);
	owner = await createUser(stack.api());
	guest = await createUser(stack.api());
	project = await createProject(stack.api(owner.token), { visibility_level: 10 });
	await addMember(stack.api(owner.token), project.id, guest.id, 10);
	v4 = stack.v4(owner.token);
});

afterAll(() => stack?.stop());

it("creates a snippet of several files (201) in v4's entity, which v3 shows by its first file", async () => {
	const res = await v4.post(snippets(), {
		body: {
			title: "t",
			description: "d",
			visibility: "internal",
			files: [
				{ file_path: "a.rb", content: "puts 1" },
				{ file_path: "dir/b.md", content: "# b" },
			],
		},
	});
	expect(res.status).toBe(201);
	const web = `${config.gitlabUrl}/${project.path_with_namespace}/-/snippets/${res.body.id}`;
	expect(res.body).toEqual({
		id: expect.any(Number),
		title: "t",
		description: "d",
		visibility: "internal",
		author: expect.objectContaining({ id: owner.id, username: owner.username, locked: false }),
		created_at: expect.any(String),
		updated_at: expect.any(String),
		project_id: project.id,
		web_url: web,
		raw_url: `${web}/raw`,
		file_name: "a.rb",
		files: [
			{ path: "a.rb", raw_url: `${web}/raw/main/a.rb` },
			{ path: "dir/b.md", raw_url: `${web}/raw/main/dir/b.md` },
		],
		imported: false,
		imported_from: "none",
	});
	const v3 = await stack.api(owner.token).get(`${snippets()}/${res.body.id}`);
	expect(v3.body).toMatchObject({ id: res.body.id, title: "t", file_name: "a.rb" });
	expect((await stack.api(owner.token).get(`${snippets()}/${res.body.id}/raw`)).text).toBe("puts 1");
	const raw = await v4.get(`${snippets()}/${res.body.id}/files/main/dir%2Fb.md/raw`);
	expect([raw.status, raw.text, raw.headers.get("content-type")]).toEqual([200, "# b", "text/plain; charset=utf-8"]);
	expect((await v4.get(`${snippets()}/${res.body.id}/files/nope/a.rb/raw`)).body).toEqual({ message: "404 Reference Not Found" });
	expect((await v4.get(`${snippets()}/${res.body.id}/files/main/c.rb/raw`)).body).toEqual({ message: "404 File Not Found" });
});

it("creates a one-file snippet from content and file_name, and refuses what GitLab refuses", async () => {
	const one = await v4.post(snippets(), { form: { title: "one", file_name: "x.txt", content: "x", visibility: "private" } });
	expect([one.status, one.body.files.map((f: { path: string }) => f.path), one.body.visibility]).toEqual([201, ["x.txt"], "private"]);
	const cases: [object, object][] = [
		[{ title: "t", visibility: "private" }, { error: "files, content are missing, exactly one parameter must be provided" }],
		[
			{ title: "t", visibility: "private", content: "x", file_name: "a", files: [{ file_path: "a", content: "x" }] },
			{ error: "files, content are mutually exclusive" },
		],
		[{ title: "t", visibility: "private", content: "x" }, { error: "file_name is missing" }],
		[{ visibility: "private", content: "x", file_name: "a" }, { error: "title is missing" }],
		[{ title: " ", visibility: "private", content: "x", file_name: "a" }, { error: "title is empty" }],
		[{ title: "t", visibility: "secret", content: "x", file_name: "a" }, { error: "visibility does not have a valid value" }],
		[{ title: "t", visibility: "private", files: [{ content: "x" }] }, { error: "files[0][file_path] is missing" }],
		[
			{ title: "t", visibility: "public", content: "x", file_name: "a" },
			{ message: { visibility_level: ["public is not allowed in an internal project"] } },
		],
		[
			{ title: "t", visibility: "private", files: [{ file_path: "../up", content: "x" }] },
			{ message: { files: ["../up can contain only letters, digits, '_', '-', '@' and '.'."] } },
		],
	];
	for (const [body, error] of cases) {
		const res = await v4.post(snippets(), { body });
		expect([body, res.status, res.body]).toEqual([body, 400, error]);
	}
	expect((await stack.v4(guest.token).post(snippets(), { body: { title: "t", visibility: "private", content: "x", file_name: "a" } })).status).toBe(403);
});

it("edits the files through files[]: create, update, move, delete; content alone only for one file", async () => {
	const id = (await v4.get(snippets())).body.find((s: { title: string }) => s.title === "t").id;
	const edited = await v4.put(`${snippets()}/${id}`, {
		body: {
			title: "t2",
			files: [
				{ action: "update", file_path: "a.rb", content: "puts 2" },
				{ action: "move", previous_path: "dir/b.md", file_path: "c.md" },
				{ action: "create", file_path: "new.txt", content: "new" },
			],
		},
	});
	expect([edited.status, edited.body.title, edited.body.files.map((f: { path: string }) => f.path)]).toEqual([200, "t2", ["a.rb", "c.md", "new.txt"]]);
	expect((await v4.get(`${snippets()}/${id}/files/main/c.md/raw`)).text).toBe("# b");
	expect((await v4.get(`${snippets()}/${id}/raw`)).text).toBe("puts 2");
	const single = await v4.put(`${snippets()}/${id}`, { body: { content: "no" } });
	expect([single.status, single.body]).toEqual([400, { error: "To update Snippets with multiple files, you must use the `files` parameter" }]);
	const missingFile = await v4.put(`${snippets()}/${id}`, { body: { files: [{ action: "delete", file_path: "zzz" }] } });
	expect([missingFile.status, missingFile.body]).toEqual([400, { message: { files: ["zzz is not a file of the snippet"] } }]);
	const badAction = await v4.put(`${snippets()}/${id}`, { body: { files: [{ action: "rename", file_path: "a.rb" }] } });
	expect([badAction.status, badAction.body]).toEqual([400, { error: "files[0][action] does not have a valid value" }]);
	const shrunk = await v4.put(`${snippets()}/${id}`, { body: { files: [{ action: "delete", file_path: "a.rb" }] } });
	expect([shrunk.body.file_name, shrunk.body.files.length]).toEqual(["c.md", 2]);
	// v3 follows the first file.
	expect((await stack.api(owner.token).get(`${snippets()}/${id}`)).body.file_name).toBe("c.md");
	const none = await v4.put(`${snippets()}/${id}`, { body: {} });
	expect([none.status, none.body]).toEqual([
		400,
		{ error: "content, description, files, file_name, title, visibility are missing, at least one parameter must be provided" },
	]);
});

it("lists with pages, hides a private snippet from others, and deletes with 204", async () => {
	const list = await v4.get(snippets());
	expect([list.status, list.headers.get("x-total"), list.body.map((s: { title: string }) => s.title)]).toEqual([200, "2", ["one", "t2"]]);
	expect((await stack.v4(guest.token).get(snippets())).body.map((s: { title: string }) => s.title)).toEqual(["t2"]);
	const privateId = list.body[0].id;
	expect((await stack.v4(guest.token).get(`${snippets()}/${privateId}`)).body).toEqual({ message: "404 Snippet Not Found" });
	const stale = await v4.del(`${snippets()}/${privateId}`, { headers: { "If-Unmodified-Since": "Thu, 01 Jan 2015 00:00:00 GMT" } });
	expect(stale.status).toBe(412);
	const removed = await v4.del(`${snippets()}/${privateId}`, { body: {} });
	expect([removed.status, removed.text]).toEqual([204, ""]);
	expect((await v4.del(`${snippets()}/${privateId}`)).body).toEqual({ message: "404 Snippet Not Found" });
});
