/**
 * Project snippets end to end: the gateway, accounts and snippets as separate processes over
 * the real NATS (Redis as cacher). The visibility matrix for authors, members, strangers,
 * admins and anonymous callers on private, internal and public projects; byte-exact raw
 * content; write permissions; pagination; bad input never a 500; the gitlab npm client.
 */
import { Gitlab } from "gitlab";
import { MAX_SNIPPET_CONTENT_BYTES } from "../../../lib/snippets/snippet-rules";
import { startCluster, type Cluster } from "../../support/cluster";
import { createProject, createUser, roleMatrix, type TestUser } from "../../support/fixtures";
import { client } from "../../support/http";

let cluster: Cluster;
const as = (token: string | null) => client(cluster.url, token ?? undefined);
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** The raw endpoint's answer as bytes, untouched by any decoding. */
async function rawBytes(projectId: number, snippetId: number, token: string | null) {
	const res = await fetch(`${cluster.url}/projects/${projectId}/snippets/${snippetId}/raw`, { headers: token ? { "PRIVATE-TOKEN": token } : {} });
	return { status: res.status, type: res.headers.get("content-type"), bytes: Buffer.from(await res.arrayBuffer()) };
}

beforeAll(async () => {
	cluster = await startCluster({ nodes: { api: "api", accounts: "accounts", snippets: "snippets" } });
	await cluster.waitForRoute("GET", "/projects/1/snippets");
}, 120000);

afterAll(async () => {
	await cluster?.stop();
});

describe("create, read, raw, edit, delete", () => {
	let owner: TestUser;
	let projectId: number;
	let projectPath: string;
	let snippetId: number;

	beforeAll(async () => {
		owner = await createUser(cluster.api());
		const project = await createProject(as(owner.token), { visibility_level: 20 });
		projectId = project.id;
		projectPath = project.path_with_namespace;
	});

	it("creates (201) with the single-snippet shape and the author", async () => {
		const res = await as(owner.token).post(`/projects/${projectId}/snippets`, {
			body: { title: "Hello", file_name: "hello.rb", code: "puts 'hello'\n", visibility_level: 10 },
		});
		expect(res.status).toBe(201);
		expect(res.headers.get("content-type")).toBe("application/json");
		expect(Object.keys(res.body)).toEqual(["id", "title", "file_name", "author", "expires_at", "updated_at", "created_at", "web_url"]);
		expect(res.body).toEqual({
			id: expect.any(Number),
			title: "Hello",
			file_name: "hello.rb",
			author: {
				id: owner.id,
				username: owner.username,
				email: `${owner.username}@example.com`,
				name: `User ${owner.username}`,
				state: "active",
				created_at: expect.stringMatching(ISO),
				avatar_url: expect.stringMatching(/^https:\/\/www\.gravatar\.com\/avatar\/[0-9a-f]{32}\?s=80&d=identicon$/),
				web_url: `http://localhost/${owner.username}`,
			},
			expires_at: null,
			updated_at: expect.stringMatching(ISO),
			created_at: expect.stringMatching(ISO),
			web_url: expect.stringMatching(/^http:\/\/localhost\//),
		});
		snippetId = res.body.id;
		expect(res.body.web_url).toBe(`http://localhost/${projectPath}/snippets/${snippetId}`);
	});

	it("gets it and lists it in the same shape", async () => {
		const one = await as(owner.token).get(`/projects/${projectId}/snippets/${snippetId}`);
		expect(one.status).toBe(200);
		const list = await as(owner.token).get(`/projects/${projectId}/snippets`);
		expect(list.status).toBe(200);
		expect(list.body).toEqual([one.body]);
	});

	it("serves the content raw as text/plain; charset=utf-8", async () => {
		const raw = await rawBytes(projectId, snippetId, owner.token);
		expect(raw.status).toBe(200);
		expect(raw.type).toBe("text/plain; charset=utf-8");
		expect(raw.bytes.toString("utf8")).toBe("puts 'hello'\n");
	});

	it("edits (200) what is given and keeps the rest", async () => {
		const before = (await as(owner.token).get(`/projects/${projectId}/snippets/${snippetId}`)).body;
		const res = await as(owner.token).put(`/projects/${projectId}/snippets/${snippetId}`, { form: { title: "Renamed", code: "puts 2\r\n" } });
		expect(res.status).toBe(200);
		expect(res.body).toEqual({ ...before, title: "Renamed", updated_at: expect.stringMatching(ISO) });
		expect(res.body.updated_at >= before.updated_at).toBe(true);
		expect((await rawBytes(projectId, snippetId, owner.token)).bytes.toString("utf8")).toBe("puts 2\r\n");
		// A blank code leaves the content alone, as GitLab 8 does.
		expect((await as(owner.token).put(`/projects/${projectId}/snippets/${snippetId}`, { body: { code: "   " } })).status).toBe(200);
		expect((await rawBytes(projectId, snippetId, owner.token)).bytes.toString("utf8")).toBe("puts 2\r\n");
	});

	it("deletes (200) with the deleted record; deleting again, or a snippet that never was, is still 200", async () => {
		const res = await as(owner.token).del(`/projects/${projectId}/snippets/${snippetId}`);
		expect(res.status).toBe(200);
		expect(res.body).toEqual({
			id: snippetId,
			title: "Renamed",
			content: "puts 2\r\n",
			author_id: owner.id,
			project_id: projectId,
			created_at: expect.stringMatching(ISO),
			updated_at: expect.stringMatching(ISO),
			file_name: "hello.rb",
			type: "ProjectSnippet",
			visibility_level: 10,
		});
		const again = await as(owner.token).del(`/projects/${projectId}/snippets/${snippetId}`);
		expect(again.status).toBe(200);
		expect(again.body).toEqual({});
		expect((await as(owner.token).del(`/projects/${projectId}/snippets/987654321`)).status).toBe(200);
		expect((await as(owner.token).del(`/projects/${projectId}/snippets/not-an-id`)).status).toBe(200);
		const gone = await as(owner.token).get(`/projects/${projectId}/snippets/${snippetId}`);
		expect(gone.status).toBe(404);
		expect(gone.body).toEqual({ message: "404 Not found" });
		const goneRaw = await as(owner.token).get(`/projects/${projectId}/snippets/${snippetId}/raw`);
		expect(goneRaw.status).toBe(404);
		expect(goneRaw.body).toEqual({ message: "404 Snippet Not Found" });
	});
});

describe("byte-exact content", () => {
	let owner: TestUser;
	let projectId: number;

	beforeAll(async () => {
		owner = await createUser(cluster.api());
		projectId = (await createProject(as(owner.token))).id;
	});

	const contents: [string, string][] = [
		["unicode in every plane", "naïve café — Ελληνικά — 日本語 — 🎉👩‍💻 — z̧̈\n"],
		["CRLF, lone CR, tabs and trailing newlines", "line 1\r\nline 2\rline 3\n\tindented\n\n\n"],
		["leading and trailing blanks", "   \n  code  \n   "],
		["control characters", "nul:\u0000 bell:\u0007 esc:\u001b[31m del:\u007f\n"],
		["JSON and HTML look-alikes", '{"a": "<script>alert(1)</script>"}\n\\u0041 %s %d ${x}\n'],
	];

	it.each(contents)("%s (sent as JSON and as a form)", async (_label, code) => {
		for (const send of ["body", "form"] as const) {
			const fields = { title: "bytes", file_name: "bytes.txt", code, visibility_level: 0 };
			const created = await as(owner.token).post(`/projects/${projectId}/snippets`, send === "body" ? { body: fields } : { form: fields });
			expect([send, created.status]).toEqual([send, 201]);
			const raw = await rawBytes(projectId, created.body.id, owner.token);
			expect(raw.status).toBe(200);
			expect(raw.bytes.equals(Buffer.from(code, "utf8"))).toBe(true);
		}
	});

	it(`content of exactly ${MAX_SNIPPET_CONTENT_BYTES} bytes is kept; one byte more is a 400 that stores nothing`, async () => {
		const line = "0123456789abcdef€\n"; // 20 bytes
		const atLimit = line.repeat(MAX_SNIPPET_CONTENT_BYTES / 20) + "x".repeat(MAX_SNIPPET_CONTENT_BYTES % 20);
		expect(Buffer.byteLength(atLimit)).toBe(MAX_SNIPPET_CONTENT_BYTES);
		const created = await as(owner.token).post(`/projects/${projectId}/snippets`, {
			body: { title: "big", file_name: "big.txt", code: atLimit, visibility_level: 0 },
		});
		expect(created.status).toBe(201);
		const raw = await rawBytes(projectId, created.body.id, owner.token);
		expect(raw.bytes.length).toBe(MAX_SNIPPET_CONTENT_BYTES);
		expect(raw.bytes.equals(Buffer.from(atLimit, "utf8"))).toBe(true);

		const before = (await as(owner.token).get(`/projects/${projectId}/snippets`, { query: { per_page: 100 } })).body;
		const over = await as(owner.token).post(`/projects/${projectId}/snippets`, {
			body: { title: "big", file_name: "big.txt", code: atLimit + "y", visibility_level: 0 },
		});
		expect(over.status).toBe(400);
		expect(over.body).toEqual({ message: { content: [`is too long (maximum is ${MAX_SNIPPET_CONTENT_BYTES} bytes)`] } });
		const edit = await as(owner.token).put(`/projects/${projectId}/snippets/${created.body.id}`, { body: { code: atLimit + "y" } });
		expect(edit.status).toBe(400);
		expect((await as(owner.token).get(`/projects/${projectId}/snippets`, { query: { per_page: 100 } })).body).toEqual(before);
		expect((await rawBytes(projectId, created.body.id, owner.token)).bytes.length).toBe(MAX_SNIPPET_CONTENT_BYTES);
	});
});

/**
 * The decided matrix, written out on its own (not computed by the code under test): which
 * callers see a snippet of `level` in a project of `project` visibility.
 */
function readers(project: number, level: number): string[] {
	const members = ["owner", "master", "developer", "reporter", "guest"];
	const loggedInReaders = project === 0 ? [...members, "admin"] : [...members, "stranger", "admin"];
	if (level === 0) return ["reporter", "admin"]; // the author (a reporter) and admins only
	if (level === 10) return loggedInReaders;
	return project === 20 ? [...loggedInReaders, "anonymous"] : loggedInReaders;
}

describe("the visibility matrix", () => {
	const ROLES = ["owner", "master", "developer", "reporter", "guest", "stranger", "admin", "anonymous"];

	it.each([0, 10, 20])("project of visibility %i: list, get and raw for every kind of caller", async projectVisibility => {
		const { project, roles } = await roleMatrix(cluster.api(), token => as(token), projectVisibility);
		const tokens: Record<string, string | null> = {
			...Object.fromEntries(Object.entries(roles).map(([r, u]) => [r, u.token])),
			admin: cluster.rootToken,
			anonymous: null,
		};
		// The reporter writes one snippet of every level the project allows.
		const snippets: { id: number; level: number }[] = [];
		for (const level of [0, 10, 20].filter(l => l <= projectVisibility)) {
			const res = await as(roles.reporter.token).post(`/projects/${project.id}/snippets`, {
				body: { title: `level ${level}`, file_name: "s.txt", code: `content ${level}\n`, visibility_level: level },
			});
			expect(res.status).toBe(201);
			snippets.push({ id: res.body.id, level });
		}

		for (const role of ROLES) {
			const api = as(tokens[role]);
			const projectReadable = role === "admin" || (role !== "anonymous" && (role !== "stranger" || projectVisibility > 0)) || projectVisibility === 20;
			const list = await api.get(`/projects/${project.id}/snippets`);
			if (!projectReadable) {
				// Strangers are told the project does not exist; anonymous callers to sign in.
				const expected = role === "anonymous" ? [401, { message: "401 Unauthorized" }] : [404, { message: "404 Project Not Found" }];
				expect([role, list.status, list.body]).toEqual([role, ...expected]);
				for (const s of snippets) {
					expect([role, (await api.get(`/projects/${project.id}/snippets/${s.id}`)).status]).toEqual([role, expected[0]]);
					expect([role, (await api.get(`/projects/${project.id}/snippets/${s.id}/raw`)).status]).toEqual([role, expected[0]]);
				}
				continue;
			}
			const visible = snippets.filter(s => readers(projectVisibility, s.level).includes(role)).map(s => s.id);
			expect([role, list.status, list.body.map((s: { id: number }) => s.id).sort()]).toEqual([role, 200, [...visible].sort()]);
			expect([role, list.headers.get("x-total")]).toEqual([role, String(visible.length)]);
			for (const s of snippets) {
				const one = await api.get(`/projects/${project.id}/snippets/${s.id}`);
				const raw = await api.get(`/projects/${project.id}/snippets/${s.id}/raw`);
				if (visible.includes(s.id)) {
					expect([role, s.level, one.status, raw.status, raw.text]).toEqual([role, s.level, 200, 200, `content ${s.level}\n`]);
				} else if (role === "anonymous") {
					expect([role, s.level, one.status, raw.status, one.body]).toEqual([role, s.level, 401, 401, { message: "401 Unauthorized" }]);
				} else {
					expect([role, s.level, one.status, one.body]).toEqual([role, s.level, 404, { message: "404 Not found" }]);
					expect([role, s.level, raw.status, raw.body]).toEqual([role, s.level, 404, { message: "404 Snippet Not Found" }]);
				}
			}
		}
	});

	it("anonymous reads need no token for public snippets of public projects, but a wrong token is still a 401", async () => {
		const owner = await createUser(cluster.api());
		const project = await createProject(as(owner.token), { visibility_level: 20 });
		const created = await as(owner.token).post(`/projects/${project.id}/snippets`, {
			body: { title: "pub", file_name: "p.md", code: "# public\n", visibility_level: 20 },
		});
		const anonymous = as(null);
		expect((await anonymous.get(`/projects/${project.id}/snippets`)).body.map((s: { id: number }) => s.id)).toEqual([created.body.id]);
		expect((await anonymous.get(`/projects/${project.id}/snippets/${created.body.id}`)).body).toEqual(created.body);
		const raw = await anonymous.get(`/projects/${project.id}/snippets/${created.body.id}/raw`);
		expect(raw.text).toBe("# public\n");
		// User content: a browser opening it must neither sniff it nor run it; JSON answers say nosniff too.
		expect([raw.headers.get("x-content-type-options"), raw.headers.get("content-security-policy")]).toEqual(["nosniff", "default-src 'none'; sandbox"]);
		const listed = await anonymous.get(`/projects/${project.id}/snippets`);
		expect([listed.headers.get("x-content-type-options"), listed.headers.get("content-security-policy")]).toEqual(["nosniff", null]);
		const byPath = `/projects/${encodeURIComponent(project.path_with_namespace)}`;
		expect((await anonymous.get(`${byPath}/snippets/${created.body.id}/raw`)).text).toBe("# public\n");
		// Writes always need a token.
		const publicSnippet = { title: "a", file_name: "a", code: "a", visibility_level: 20 };
		expect((await anonymous.post(`/projects/${project.id}/snippets`, { body: publicSnippet })).status).toBe(401);
		expect((await anonymous.put(`/projects/${project.id}/snippets/${created.body.id}`, { body: { title: "x" } })).status).toBe(401);
		expect((await anonymous.del(`/projects/${project.id}/snippets/${created.body.id}`)).status).toBe(401);
		const wrong = await as("x".repeat(20)).get(`/projects/${project.id}/snippets`);
		expect(wrong.status).toBe(401);
		// Anonymous callers on a missing project are asked to sign in too: existence does not leak.
		expect((await anonymous.get(`/projects/987654321/snippets`)).status).toBe(401);
	});

	it("a snippet may not be more visible than its project, on create and on edit", async () => {
		const owner = await createUser(cluster.api());
		const internal = await createProject(as(owner.token), { visibility_level: 10 });
		const res = await as(owner.token).post(`/projects/${internal.id}/snippets`, { body: { title: "t", file_name: "f", code: "c", visibility_level: 20 } });
		expect(res.status).toBe(400);
		expect(res.body).toEqual({ message: { visibility_level: ["public is not allowed in an internal project"] } });
		const ok = await as(owner.token).post(`/projects/${internal.id}/snippets`, { body: { title: "t", file_name: "f", code: "c", visibility_level: 10 } });
		const edit = await as(owner.token).put(`/projects/${internal.id}/snippets/${ok.body.id}`, { body: { visibility_level: 20 } });
		expect(edit.status).toBe(400);
		expect(edit.body).toEqual({ message: { visibility_level: ["public is not allowed in an internal project"] } });
		expect((await as(owner.token).get(`/projects/${internal.id}/snippets`)).body).toHaveLength(1);
	});
});

describe("write permissions", () => {
	let roles: Record<string, TestUser>;
	let projectId: number;

	beforeAll(async () => {
		const matrix = await roleMatrix(cluster.api(), token => as(token), 20);
		roles = matrix.roles;
		projectId = matrix.project.id;
	});

	const create = (token: string, level = 20) =>
		as(token).post(`/projects/${projectId}/snippets`, { body: { title: "w", file_name: "w.txt", code: "w\n", visibility_level: level } });

	it("create: reporter and above, and admins; guests and strangers 403", async () => {
		const expected: Record<string, number> = { owner: 201, master: 201, developer: 201, reporter: 201, guest: 403, stranger: 403 };
		for (const [role, status] of Object.entries(expected)) {
			const res = await create(roles[role].token);
			expect([role, res.status]).toEqual([role, status]);
			if (status === 403) expect(res.body).toEqual({ message: "403 Forbidden" });
		}
		expect((await create(cluster.rootToken)).status).toBe(201);
	});

	it("edit and delete: the author, masters and owners, admins; other members and strangers 403", async () => {
		const expected: Record<string, number> = { owner: 200, master: 200, developer: 403, guest: 403, stranger: 403, reporter: 200 };
		for (const [role, status] of Object.entries(expected)) {
			const snippet = (await create(roles.reporter.token)).body;
			const edit = await as(roles[role].token).put(`/projects/${projectId}/snippets/${snippet.id}`, { body: { title: `by ${role}` } });
			expect([role, "edit", edit.status]).toEqual([role, "edit", status]);
			const del = await as(roles[role].token).del(`/projects/${projectId}/snippets/${snippet.id}`);
			expect([role, "delete", del.status]).toEqual([role, "delete", status]);
			const still = await as(roles.reporter.token).get(`/projects/${projectId}/snippets/${snippet.id}`);
			expect([role, still.status]).toEqual([role, status === 200 ? 404 : 200]);
			if (status === 403) expect(still.body.title).toBe("w");
		}
		const snippet = (await create(roles.reporter.token)).body;
		expect((await cluster.api().put(`/projects/${projectId}/snippets/${snippet.id}`, { body: { title: "by admin" } })).status).toBe(200);
		expect((await cluster.api().del(`/projects/${projectId}/snippets/${snippet.id}`)).status).toBe(200);
	});

	it("a private snippet is hidden from a master who did not write it: edit 404, delete a no-op 200", async () => {
		const snippet = (await create(roles.reporter.token, 0)).body;
		const edit = await as(roles.master.token).put(`/projects/${projectId}/snippets/${snippet.id}`, { body: { title: "x" } });
		expect(edit.status).toBe(404);
		expect(edit.body).toEqual({ message: "404 Snippet Not Found" });
		const del = await as(roles.master.token).del(`/projects/${projectId}/snippets/${snippet.id}`);
		expect(del.status).toBe(200);
		expect(del.body).toEqual({});
		expect((await as(roles.reporter.token).get(`/projects/${projectId}/snippets/${snippet.id}`)).body.title).toBe("w");
	});
});

describe("pagination: newest first, always paginated", () => {
	it("pages with GitLab's headers; totals count only what the caller may see", async () => {
		const owner = await createUser(cluster.api());
		const stranger = await createUser(cluster.api());
		const project = await createProject(as(owner.token), { visibility_level: 20 });
		const ids: number[] = [];
		for (let i = 0; i < 5; i++) {
			const res = await as(owner.token).post(`/projects/${project.id}/snippets`, {
				body: { title: `s${i}`, file_name: "s", code: "s", visibility_level: i === 2 ? 0 : 20 },
			});
			ids.push(res.body.id);
		}
		const newestFirst = [...ids].reverse();
		const whole = await as(owner.token).get(`/projects/${project.id}/snippets`);
		expect(whole.body.map((s: { id: number }) => s.id)).toEqual(newestFirst);
		expect(whole.headers.get("x-per-page")).toBe("20");
		expect(whole.headers.get("x-total")).toBe("5");

		const page2 = await as(owner.token).get(`/projects/${project.id}/snippets`, { query: { page: 2, per_page: 2 } });
		expect(page2.body.map((s: { id: number }) => s.id)).toEqual(newestFirst.slice(2, 4));
		expect(page2.headers.get("x-total")).toBe("5");
		expect(page2.headers.get("x-total-pages")).toBe("3");
		expect(page2.headers.get("x-page")).toBe("2");
		expect(page2.headers.get("x-next-page")).toBe("3");
		expect(page2.headers.get("x-prev-page")).toBe("1");
		expect(page2.headers.get("link")).toContain(`<${cluster.url}/projects/${project.id}/snippets?page=3&per_page=2>; rel="next"`);

		const theirs = await as(stranger.token).get(`/projects/${project.id}/snippets`, { query: { per_page: 2, page: 2 } });
		expect(theirs.headers.get("x-total")).toBe("4");
		expect(theirs.body.map((s: { id: number }) => s.id)).toEqual(newestFirst.filter(id => id !== ids[2]).slice(2, 4));
	});
});

describe("bad input: GitLab errors, nothing changed, never a 500", () => {
	let owner: TestUser;
	let projectId: number;
	let snippetId: number;

	beforeAll(async () => {
		owner = await createUser(cluster.api());
		projectId = (await createProject(as(owner.token), { visibility_level: 20 })).id;
		snippetId = (
			await as(owner.token).post(`/projects/${projectId}/snippets`, { body: { title: "keep", file_name: "k.txt", code: "keep\n", visibility_level: 20 } })
		).body.id;
	});

	it.each([
		[{}, { error: "title is missing, file_name is missing, code is missing, visibility_level is missing" }],
		[{ title: "t", file_name: "f", code: "c" }, { error: "visibility_level is missing" }],
		[{ title: "t", file_name: "f", code: "c", visibility_level: 15 }, { error: "visibility_level does not have a valid value" }],
		[{ title: "t", file_name: "f", code: "c", visibility_level: "public" }, { error: "visibility_level is invalid" }],
		[{ title: "t", file_name: "f", code: "c", visibility_level: { $gt: 0 } }, { error: "visibility_level is invalid" }],
		[{ title: ["t"], file_name: "f", code: "c", visibility_level: 0 }, { error: "title is invalid" }],
		[{ title: " ", file_name: "f", code: "c", visibility_level: 0 }, { message: { title: ["can't be blank"] } }],
		[
			{ title: "t", file_name: "../../etc/passwd", code: "c", visibility_level: 0 },
			{ message: { file_name: ["can contain only letters, digits, '_', '-', '@' and '.'."] } },
		],
		[{ title: "t", file_name: "f", code: "", visibility_level: 0 }, { message: { content: ["can't be blank"] } }],
		[{ title: "t".repeat(256), file_name: "f", code: "c", visibility_level: 0 }, { message: { title: ["is too long (maximum is 255 characters)"] } }],
	])("create %j → 400", async (body, error) => {
		const before = (await as(owner.token).get(`/projects/${projectId}/snippets`)).body;
		const res = await as(owner.token).post(`/projects/${projectId}/snippets`, { body });
		expect(res.status).toBe(400);
		expect(res.body).toEqual(error);
		expect((await as(owner.token).get(`/projects/${projectId}/snippets`)).body).toEqual(before);
	});

	it.each([
		[{}, { error: "title, file_name, code, visibility_level are missing, at least one parameter must be provided" }],
		[{ visibility_level: 5 }, { error: "visibility_level does not have a valid value" }],
		[{ file_name: "a b" }, { message: { file_name: ["can contain only letters, digits, '_', '-', '@' and '.'."] } }],
		[{ title: "" }, { message: { title: ["can't be blank"] } }],
	])("edit %j → 400", async (body, error) => {
		const res = await as(owner.token).put(`/projects/${projectId}/snippets/${snippetId}`, { body });
		expect(res.status).toBe(400);
		expect(res.body).toEqual(error);
		expect((await as(owner.token).get(`/projects/${projectId}/snippets/${snippetId}`)).body.title).toBe("keep");
	});

	it.each(["abc", "0", "-1", "1.5", "99999999999999999999999", "%00", "1%20OR%201"])("snippet id %s: 404 on reads and edits, 200 on delete", async id => {
		const one = await as(owner.token).get(`/projects/${projectId}/snippets/${id}`);
		expect([one.status, one.body]).toEqual([404, { message: "404 Not found" }]);
		const raw = await as(owner.token).get(`/projects/${projectId}/snippets/${id}/raw`);
		expect([raw.status, raw.body]).toEqual([404, { message: "404 Snippet Not Found" }]);
		const edit = await as(owner.token).put(`/projects/${projectId}/snippets/${id}`, { body: { title: "x" } });
		expect([edit.status, edit.body]).toEqual([404, { message: "404 Snippet Not Found" }]);
		expect((await as(owner.token).del(`/projects/${projectId}/snippets/${id}`)).status).toBe(200);
	});

	it("a snippet of another project is not reachable through this one", async () => {
		const other = (await createProject(as(owner.token), { visibility_level: 20 })).id;
		expect((await as(owner.token).get(`/projects/${other}/snippets/${snippetId}`)).status).toBe(404);
		expect((await as(owner.token).del(`/projects/${other}/snippets/${snippetId}`)).status).toBe(200);
		expect((await as(owner.token).get(`/projects/${projectId}/snippets/${snippetId}`)).status).toBe(200);
	});

	it.each(['["x"]', '"code"', "null", "42"])("a JSON body %s that is no object of fields → 400", async raw => {
		const res = await as(owner.token).post(`/projects/${projectId}/snippets`, { body: raw });
		expect(res.status).toBe(400);
		expect(res.body).toEqual({ error: "title is missing, file_name is missing, code is missing, visibility_level is missing" });
		const edit = await as(owner.token).put(`/projects/${projectId}/snippets/${snippetId}`, { body: raw });
		expect(edit.status).toBe(400);
		expect(edit.body).toEqual({ error: "title, file_name, code, visibility_level are missing, at least one parameter must be provided" });
	});

	it("broken JSON 400, oversized body 413, integer page parameters 200 (clamped), others 400", async () => {
		const broken = await as(owner.token).post(`/projects/${projectId}/snippets`, { body: '{"title": "x",' });
		expect(broken.status).toBe(400);
		const huge = await as(owner.token).post(`/projects/${projectId}/snippets`, {
			body: { title: "t", file_name: "f", code: "x".repeat(3 * 1024 * 1024), visibility_level: 0 },
		});
		expect(huge.status).toBe(413);
		for (const query of [{ per_page: -5 }, { per_page: 100000 }, { page: "999999" }] as Record<string, string | number>[]) {
			const res = await as(owner.token).get(`/projects/${projectId}/snippets`, { query });
			expect([query, res.status]).toEqual([query, 200]);
		}
		const invalid = await as(owner.token).get(`/projects/${projectId}/snippets`, { query: { page: "abc" } });
		expect([invalid.status, invalid.body]).toEqual([400, { error: "page is invalid" }]);
	});
});

describe("the gitlab npm client (14.2.2, version 3)", () => {
	it("lists, creates, shows, edits, reads raw and removes project snippets", async () => {
		const owner = await createUser(cluster.api());
		const project = await createProject(as(owner.token), { visibility_level: 10 });
		const api = new Gitlab({ host: `http://127.0.0.1:${cluster.port}`, token: owner.token, version: 3 });

		expect(await api.ProjectSnippets.all(project.id)).toEqual([]);
		// The client always adds v4's `visibility`; v3's `visibility_level` is passed alongside.
		const created = (await api.ProjectSnippets.create(project.id, "From the client", "client.js", "console.log('é');\n", "internal", {
			visibilityLevel: 10,
		})) as Record<string, any>;
		expect(created).toMatchObject({ id: expect.any(Number), title: "From the client", file_name: "client.js", author: { id: owner.id }, expires_at: null });
		expect(created.web_url).toBe(`http://localhost/${project.path_with_namespace}/snippets/${created.id}`);
		expect(created.author).toMatchObject({ avatar_url: expect.stringMatching(/^https:\/\//), web_url: `http://localhost/${owner.username}` });
		expect(await api.ProjectSnippets.all(project.id)).toEqual([created]);
		expect(await api.ProjectSnippets.show(project.id, created.id)).toEqual(created);
		expect(await api.ProjectSnippets.content(project.id, created.id)).toBe("console.log('é');\n");
		const edited = (await api.ProjectSnippets.edit(project.id, created.id, { title: "Edited", code: "x = 1\n" })) as Record<string, any>;
		expect(edited).toMatchObject({ id: created.id, title: "Edited" });
		expect(await api.ProjectSnippets.content(project.id, created.id)).toBe("x = 1\n");
		const removed = (await api.ProjectSnippets.remove(project.id, created.id)) as Record<string, any>;
		expect(removed).toMatchObject({ id: created.id, title: "Edited", type: "ProjectSnippet" });
		expect(await api.ProjectSnippets.all(project.id)).toEqual([]);
	});
});
