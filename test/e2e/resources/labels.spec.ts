/**
 * Labels end to end: the gateway, accounts and labels as three processes over the real NATS,
 * Redis as cacher, driven over HTTP as a v3 client would.
 */
import http from "http";
import Redis from "ioredis";
import { startCluster, type Cluster } from "../../support/cluster";
import { runCommand } from "../../support/commands";
import { REDIS_URL } from "../../support/servers";
import { client, waitFor } from "../../support/http";
import { hashToken } from "../../../lib/crypto/tokens";
import { createProject, createUser, roleMatrix, type TestUser } from "../../support/fixtures";

let cluster: Cluster;
const as = (token: string | null) => client(cluster.url, token ?? undefined);

beforeAll(async () => {
	cluster = await startCluster({ nodes: { api: "api", accounts: "accounts", labels: "labels" } });
	await cluster.waitForRoute("GET", "/projects/1/labels");
}, 90000);

afterAll(async () => {
	await cluster?.stop();
});

describe("bootstrap and accounts", () => {
	it("created root with the configured token and password", async () => {
		const me = await cluster.api().get("/user");
		expect(me.status).toBe(200);
		expect(me.body).toMatchObject({ id: 1, username: "root", is_admin: true, private_token: cluster.rootToken });
		const session = await cluster.api(null).post("/session", { form: { login: "root", password: cluster.rootPassword } });
		expect(session.status).toBe(201);
		expect(session.body.private_token).toBe(cluster.rootToken);
	});

	it("accepts the token as header, query parameter and Bearer", async () => {
		expect((await as(null).get("/user", { headers: { "PRIVATE-TOKEN": cluster.rootToken } })).status).toBe(200);
		expect((await as(null).get("/user", { query: { private_token: cluster.rootToken } })).status).toBe(200);
		expect((await as(null).get("/user", { headers: { Authorization: `Bearer ${cluster.rootToken}` } })).status).toBe(200);
	});

	it("answers 401 without or with a wrong token", async () => {
		for (const token of [null, "x".repeat(20), "not a token at all"]) {
			const res = await as(token).get("/user");
			expect(res.status).toBe(401);
			expect(res.body).toEqual({ message: "401 Unauthorized" });
		}
		expect((await as(null).post("/session", { form: { login: "root", password: "wrong-password" } })).status).toBe(401);
	});

	it("lets only admins create users, and refuses duplicates", async () => {
		const user = await createUser(cluster.api());
		const res = await as(user.token).post("/users", { body: { username: "x1", name: "x", email: "x1@example.com", password: "password1" } });
		expect(res.status).toBe(403);
		expect(res.body).toEqual({ message: "403 Forbidden" });
		const dup = await cluster.api().post("/users", { body: { username: user.username, name: "x", email: "other@example.com", password: "password1" } });
		expect(dup.status).toBe(409);
		expect(dup.body).toEqual({ message: "Username has already been taken" });
		const missing = await cluster.api().post("/users", { body: { username: "nobody" } });
		expect(missing.status).toBe(400);
		expect(missing.body.error).toMatch(/email is missing/);
	});

	it("creates projects addressable by id and by namespace/path", async () => {
		const user = await createUser(cluster.api());
		const project = await createProject(as(user.token), { name: "Demo Project" });
		expect(project.path_with_namespace).toBe(`${user.username}/demo-project`);
		const byPath = await as(user.token).get(`/projects/${encodeURIComponent(project.path_with_namespace)}`);
		expect(byPath.status).toBe(200);
		expect(byPath.body).toMatchObject({ id: project.id, name: "Demo Project", visibility_level: 0, owner: { username: user.username } });
		const again = await as(user.token).post("/projects", { body: { name: "Demo Project" } });
		expect(again.status).toBe(400);
		expect(again.body.message.path).toEqual(["has already been taken"]);
	});
});

describe("labels", () => {
	let owner: TestUser;
	let projectId: number;
	let api: ReturnType<typeof as>;

	beforeAll(async () => {
		owner = await createUser(cluster.api());
		projectId = (await createProject(as(owner.token))).id;
		api = as(owner.token);
	});

	it("creates a label (200) with the colour normalised to #RRGGBB", async () => {
		const res = await api.post(`/projects/${projectId}/labels`, { form: { name: "bug", color: "#fa0", description: "Broken" } });
		expect(res.status).toBe(200);
		expect(res.body).toEqual({ name: "bug", color: "#FFAA00", description: "Broken" });
	});

	it("lists labels by name with the three counts, unpaginated by default", async () => {
		await api.post(`/projects/${projectId}/labels`, { body: { name: "Apple & Pear", color: "#00ff00" } });
		const res = await api.get(`/projects/${projectId}/labels`);
		expect(res.status).toBe(200);
		expect(res.headers.get("x-total")).toBeNull();
		const counts = { open_issues_count: 0, closed_issues_count: 0, open_merge_requests_count: 0, priority: null, subscribed: false };
		expect(res.body).toEqual([
			{ id: expect.any(Number), name: "Apple & Pear", color: "#00FF00", description: null, ...counts },
			{ id: expect.any(Number), name: "bug", color: "#FFAA00", description: "Broken", ...counts },
		]);
		// Each entry's id is the label's own: the one its delete answer carries.
		const removed = await api.del(`/projects/${projectId}/labels`, { query: { name: "Apple & Pear" } });
		expect(removed.body.id).toBe(res.body[0].id);
		expect(res.body[0].id).not.toBe(res.body[1].id);
		expect((await api.post(`/projects/${projectId}/labels`, { body: { name: "Apple & Pear", color: "#00ff00" } })).status).toBe(200);
	});

	it("answers a list from the cache with exactly the bytes the service's answer had, as JSON (HEAD: its length)", async () => {
		const path = `/projects/${projectId}/labels`;
		const name = "Ünïcödé 😀 \u2028 <&>";
		await api.post(path, { body: { name, color: "#123456", description: 'a "quote", a \\ and a tab\t' } });
		const miss = await api.get(path); // the write cleaned the list: the labels service answers and fills the cache
		const hit = await api.get(path); // from Redis, never parsed on the way
		expect(miss.status).toBe(200);
		expect(hit.status).toBe(200);
		expect(hit.text).toBe(miss.text);
		expect(hit.body.map((l: { name: string }) => l.name)).toContain(name);
		for (const reply of [miss, hit]) {
			expect(reply.headers.get("content-type")).toBe("application/json");
			expect(reply.headers.get("content-length")).toBe(String(Buffer.byteLength(miss.text)));
		}
		const head = await api.request("HEAD", path);
		expect(head.status).toBe(200);
		expect(head.text).toBe("");
		expect(head.headers.get("content-type")).toBe("application/json");
		expect(head.headers.get("content-length")).toBe(String(Buffer.byteLength(miss.text)));
		// A page of a list is still turned into its rows and GitLab's headers when it comes from the cache.
		const pages = [await api.get(path, { query: { per_page: 1 } }), await api.get(path, { query: { per_page: 1 } })];
		for (const page of pages) {
			expect(page.body).toHaveLength(1);
			expect(page.headers.get("x-total")).toBe("3");
		}
		expect(pages[1].text).toBe(pages[0].text);
		expect((await api.del(path, { query: { name } })).status).toBe(200);
	});

	it("paginates with GitLab's headers when asked", async () => {
		const res = await api.get(`/projects/${projectId}/labels`, { query: { page: 2, per_page: 1 } });
		expect(res.status).toBe(200);
		expect(res.body.map((l: { name: string }) => l.name)).toEqual(["bug"]);
		expect(res.headers.get("x-total")).toBe("2");
		expect(res.headers.get("x-total-pages")).toBe("2");
		expect(res.headers.get("x-per-page")).toBe("1");
		expect(res.headers.get("x-page")).toBe("2");
		expect(res.headers.get("x-next-page")).toBe("");
		expect(res.headers.get("x-prev-page")).toBe("1");
		expect(res.headers.get("link")).toBe(
			`<${cluster.url}/projects/${projectId}/labels?page=1&per_page=1>; rel="prev", ` +
				`<${cluster.url}/projects/${projectId}/labels?page=1&per_page=1>; rel="first", ` +
				`<${cluster.url}/projects/${projectId}/labels?page=2&per_page=1>; rel="last"`,
		);
	});

	it("reads a body sent without a Content-Type as a form, as GitLab's Rack does, or as JSON when it opens like JSON", async () => {
		// fetch always names a type: a plain http request, as `requests.post(url, data=json.dumps(...))` sends it.
		const post = (body: string) =>
			new Promise<{ status: number; text: string }>((resolve, reject) => {
				const url = new URL(`${cluster.url}/projects/${projectId}/labels`);
				const req = http.request(url, { method: "POST", headers: { "PRIVATE-TOKEN": owner.token, "Content-Length": Buffer.byteLength(body) } }, res => {
					let text = "";
					res.setEncoding("utf8");
					res.on("data", chunk => (text += chunk));
					res.on("end", () => resolve({ status: res.statusCode!, text }));
				});
				req.on("error", reject);
				req.end(body);
			});
		const created = await post(JSON.stringify({ name: "untyped", color: "#abcdef" }));
		expect(created.status).toBe(200);
		expect(JSON.parse(created.text)).toEqual({ name: "untyped", color: "#ABCDEF", description: null });
		const form = await post("name=untyped2&color=%23abcdef");
		expect([form.status, JSON.parse(form.text)]).toEqual([200, { name: "untyped2", color: "#ABCDEF", description: null }]);
		// JSON that breaks says where, and nothing is made.
		const broken = await post('{"name":"untyped3",\n "color":"#abcdef"');
		expect([broken.status, JSON.parse(broken.text)]).toEqual([
			400,
			{ message: "400 Bad Request - the body is not valid JSON: expected ',' or '}', found the end of the body (line 2, column 19)" },
		]);
		for (const name of ["untyped", "untyped2"]) expect((await api.del(`/projects/${projectId}/labels`, { query: { name } })).status).toBe(200);
		expect((await api.get(`/projects/${projectId}/labels`)).body.map((l: { name: string }) => l.name)).not.toContain("untyped3");
	});

	it("refuses a duplicate name with 409 before looking at the colour", async () => {
		const res = await api.post(`/projects/${projectId}/labels`, { form: { name: "bug", color: "nope" } });
		expect(res.status).toBe(409);
		expect(res.body).toEqual({ message: "Label already exists" });
	});

	it("gives exactly one label when two creates race", async () => {
		const race = { name: "race", color: "#123456" };
		const results = await Promise.all(Array.from({ length: 8 }, () => api.post(`/projects/${projectId}/labels`, { form: race })));
		expect(results.map(r => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409, 409, 409]);
		const list = await api.get(`/projects/${projectId}/labels`);
		expect(list.body.filter((l: { name: string }) => l.name === "race")).toHaveLength(1);
	});

	it.each([
		[{ color: "#fff" }, 400, { error: "name is missing" }],
		[{ name: "x" }, 400, { error: "color is missing" }],
		[{ name: "a,b", color: "#fff" }, 400, { message: { title: ["is invalid"] } }],
		[{ name: "", color: "#fff" }, 400, { message: { title: ["can't be blank", "is invalid"] } }],
		[{ name: "x", color: "#FFAA" }, 400, { message: { color: ["must be a valid color code"] } }],
		[{ name: "x", color: "red" }, 400, { message: { color: ["must be a valid color code"] } }],
		[{ name: { $gt: "" }, color: "#fff" }, 400, { error: "name is invalid" }],
	])("rejects %j with %i", async (body, status, error) => {
		const before = (await api.get(`/projects/${projectId}/labels`)).body;
		const res = await api.post(`/projects/${projectId}/labels`, { body });
		expect(res.status).toBe(status);
		expect(res.body).toEqual(error);
		expect((await api.get(`/projects/${projectId}/labels`)).body).toEqual(before);
	});

	it("edits name, colour and description; needs new_name or color", async () => {
		const onlyDescription = await api.put(`/projects/${projectId}/labels`, { form: { name: "bug", description: "x" } });
		expect(onlyDescription.status).toBe(400);
		expect(onlyDescription.body).toEqual({ error: "new_name, color are missing, at least one parameter must be provided" });
		const res = await api.put(`/projects/${projectId}/labels`, { form: { name: "bug", new_name: "defect", color: "#00f", description: "Changed" } });
		expect(res.status).toBe(200);
		expect(res.body).toEqual({ name: "defect", color: "#0000FF", description: "Changed" });
		const list = await api.get(`/projects/${projectId}/labels`);
		expect(list.body.map((l: { name: string }) => l.name)).toEqual(["Apple & Pear", "defect", "race"]);
	});

	it("answers edit errors: missing name 400, unknown label 404, taken name 400, bad colour 400", async () => {
		expect((await api.put(`/projects/${projectId}/labels`, { form: { color: "#fff" } })).body).toEqual({ error: "name is missing" });
		const unknown = await api.put(`/projects/${projectId}/labels`, { form: { name: "nope", color: "#fff" } });
		expect(unknown.status).toBe(404);
		expect(unknown.body).toEqual({ message: "404 Label Not Found" });
		const taken = await api.put(`/projects/${projectId}/labels`, { form: { name: "race", new_name: "defect" } });
		expect(taken.status).toBe(400);
		expect(taken.body).toEqual({ message: { title: ["has already been taken"] } });
		const badColor = await api.put(`/projects/${projectId}/labels`, { form: { name: "race", color: "#12" } });
		expect(badColor.status).toBe(400);
		expect(badColor.body).toEqual({ message: { color: ["must be a valid color code"] } });
	});

	it("deletes by ?name= and by /labels/:name, returning the deleted record", async () => {
		const res = await api.del(`/projects/${projectId}/labels`, { query: { name: "race" } });
		expect(res.status).toBe(200);
		expect(res.body).toEqual({
			id: expect.any(Number),
			title: "race",
			color: "#123456",
			description: null,
			template: false,
			project_id: projectId,
			created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
			updated_at: expect.any(String),
		});
		const byPath = await api.del(`/projects/${projectId}/labels/${encodeURIComponent("Apple & Pear")}`);
		expect(byPath.status).toBe(200);
		expect(byPath.body.title).toBe("Apple & Pear");
		expect((await api.get(`/projects/${projectId}/labels`)).body.map((l: { name: string }) => l.name)).toEqual(["defect"]);
	});

	it("answers delete errors: no name 400, unknown 404", async () => {
		const noName = await api.del(`/projects/${projectId}/labels`);
		expect(noName.status).toBe(400);
		expect(noName.body).toEqual({ error: "name is missing" });
		const unknown = await api.del(`/projects/${projectId}/labels`, { query: { name: "ghost" } });
		expect(unknown.status).toBe(404);
		expect(unknown.body).toEqual({ message: "404 Label Not Found" });
	});

	it("addresses the project by namespace/path too, sharing the cache", async () => {
		const project = await as(owner.token).get(`/projects/${projectId}`);
		const path = encodeURIComponent(project.body.path_with_namespace);
		const first = await api.get(`/projects/${path}/labels`);
		expect(first.body.map((l: { name: string }) => l.name)).toEqual(["defect"]);
		await api.post(`/projects/${path}/labels`, { form: { name: "new", color: "#fff" } });
		expect((await api.get(`/projects/${projectId}/labels`)).body.map((l: { name: string }) => l.name)).toEqual(["defect", "new"]);
		expect((await api.get(`/projects/${path}/labels`)).body.map((l: { name: string }) => l.name)).toEqual(["defect", "new"]);
	});
});

describe("label priority (GitLab 8.16: optional Integer, blank allowed)", () => {
	let owner: TestUser;
	let projectId: number;
	let api: ReturnType<typeof as>;
	const priorities = async () =>
		Object.fromEntries(
			((await api.get(`/projects/${projectId}/labels`)).body as { name: string; priority: number | null }[]).map(l => [l.name, l.priority]),
		);

	beforeAll(async () => {
		owner = await createUser(cluster.api());
		projectId = (await createProject(as(owner.token))).id;
		api = as(owner.token);
	});

	it("is taken on create, as a form field or a JSON number, and shown in the list only", async () => {
		// Read (and cached) before, so the list below proves the creates cleaned it.
		expect(await priorities()).toEqual({});
		const form = await api.post(`/projects/${projectId}/labels`, { form: { name: "urgent", color: "#f00", priority: "2" } });
		expect([form.status, form.body]).toEqual([200, { name: "urgent", color: "#FF0000", description: null }]);
		const json = await api.post(`/projects/${projectId}/labels`, { body: { name: "first", color: "#0f0", description: "d", priority: 0 } });
		expect([json.status, json.body]).toEqual([200, { name: "first", color: "#00FF00", description: "d" }]);
		expect((await api.post(`/projects/${projectId}/labels`, { form: { name: "blank", color: "#00f", priority: "" } })).status).toBe(200);
		expect((await api.post(`/projects/${projectId}/labels`, { body: { name: "null", color: "#00f", priority: null } })).status).toBe(200);
		expect((await api.post(`/projects/${projectId}/labels`, { form: { name: "none", color: "#00f" } })).status).toBe(200);
		const list = await api.get(`/projects/${projectId}/labels`);
		// Still by name: the priority does not order the API's list.
		expect(list.body.map((l: { name: string }) => l.name)).toEqual(["blank", "first", "none", "null", "urgent"]);
		expect(list.body[4]).toEqual({
			id: expect.any(Number),
			name: "urgent",
			color: "#FF0000",
			description: null,
			open_issues_count: 0,
			closed_issues_count: 0,
			open_merge_requests_count: 0,
			priority: 2,
			subscribed: false,
		});
		expect(await priorities()).toEqual({ blank: null, first: 0, none: null, null: null, urgent: 2 });
	});

	it("is changed with an edit, cleared by a blank or null one, and kept when left out", async () => {
		const set = await api.put(`/projects/${projectId}/labels`, { form: { name: "none", color: "#123456", priority: "7" } });
		expect([set.status, set.body]).toEqual([200, { name: "none", color: "#123456", description: null }]);
		expect((await priorities()).none).toBe(7);
		const renamed = await api.put(`/projects/${projectId}/labels`, { body: { name: "none", new_name: "seven", priority: 8 } });
		expect([renamed.status, renamed.body]).toEqual([200, { name: "seven", color: "#123456", description: null }]);
		expect(await priorities()).toEqual({ blank: null, first: 0, seven: 8, null: null, urgent: 2 });
		const kept = await api.put(`/projects/${projectId}/labels`, { form: { name: "seven", color: "#654321", description: "x" } });
		expect(kept.status).toBe(200);
		expect((await priorities()).seven).toBe(8);
		expect((await api.put(`/projects/${projectId}/labels`, { form: { name: "seven", color: "#654321", priority: "" } })).status).toBe(200);
		expect((await priorities()).seven).toBeNull();
		expect((await api.put(`/projects/${projectId}/labels`, { body: { name: "urgent", color: "#f00", priority: null } })).status).toBe(200);
		expect((await priorities()).urgent).toBeNull();
	});

	it("alone is no edit: a PUT with only priority stays the 400 it is, and changes nothing", async () => {
		const before = await priorities();
		const res = await api.put(`/projects/${projectId}/labels`, { form: { name: "first", priority: "3" } });
		expect([res.status, res.body]).toEqual([400, { error: "new_name, color are missing, at least one parameter must be provided" }]);
		expect(await priorities()).toEqual(before);
	});

	it.each([["foo"], ["-1"], ["1.5"], [-1], [1.5], ["1e3"], [true], [{ $gt: 0 }], [[3]], ["9".repeat(16)]])(
		"refuses priority %j on create and edit with 400 priority is invalid, storing nothing",
		async priority => {
			const before = (await api.get(`/projects/${projectId}/labels`)).body;
			const created = await api.post(`/projects/${projectId}/labels`, { body: { name: "bad", color: "#abc", priority } });
			expect([created.status, created.body]).toEqual([400, { error: "priority is invalid" }]);
			const edited = await api.put(`/projects/${projectId}/labels`, { body: { name: "first", color: "#abc", priority } });
			expect([edited.status, edited.body]).toEqual([400, { error: "priority is invalid" }]);
			expect((await api.get(`/projects/${projectId}/labels`)).body).toEqual(before);
		},
	);

	it("is not part of the deleted record (GitLab 8.16 keeps it beside the label)", async () => {
		const res = await api.del(`/projects/${projectId}/labels`, { query: { name: "first" } });
		expect(res.status).toBe(200);
		expect(Object.keys(res.body)).toEqual(["id", "title", "color", "description", "template", "project_id", "created_at", "updated_at"]);
		expect(res.body).toMatchObject({ title: "first", color: "#00FF00", description: "d", project_id: projectId });
		// A label made again under the name starts without one.
		expect((await api.post(`/projects/${projectId}/labels`, { form: { name: "first", color: "#0f0" } })).status).toBe(200);
		expect((await priorities()).first).toBeNull();
	});
});

describe("multipart forms, as `curl -F` sends them", () => {
	it("creates a label from the form's fields, and refuses a form that does not parse", async () => {
		const owner = await createUser(cluster.api());
		const projectId = (await createProject(as(owner.token))).id;
		const url = `${cluster.url}/projects/${projectId}/labels`;
		// The real curl binary (the CI image has it): -F makes a multipart/form-data body.
		const curl = async (...args: string[]) => {
			const run = await runCommand("curl", ["-sS", "-w", "\n%{http_code}", "-H", `PRIVATE-TOKEN: ${owner.token}`, ...args, url]);
			const lines = run.stdout.trim().split("\n");
			return [Number(lines.pop()), JSON.parse(lines.join("\n"))];
		};
		expect(await curl("-F", "name=from curl", "-F", "color=#0000ff", "-F", "description=Sent as multipart")).toEqual([
			200,
			{ name: "from curl", color: "#0000FF", description: "Sent as multipart" },
		]);
		expect(await curl("-H", "Content-Type: multipart/form-data", "--data-binary", "name=no boundary")).toEqual([
			400,
			{ message: "400 Bad Request - a multipart body needs a boundary in its Content-Type" },
		]);
		const labels = await as(owner.token).get(`/projects/${projectId}/labels`);
		expect(labels.body.map((l: { name: string }) => l.name)).toEqual(["from curl"]);
	});
});

describe("v4's search and anonymous reads, in the store's query (SQLite, and MongoDB in e2e-mongo)", () => {
	it("finds labels by title or description words in the back end, for a member and without a token, with Redis caching each apart", async () => {
		const owner = await createUser(cluster.api());
		const project = await createProject(as(owner.token), { visibility_level: 20 });
		const v4 = (token: string | null) => client(cluster.url.replace(/\/api\/v3$/, "/api/v4"), token ?? undefined);
		for (const [name, description] of [
			["needs review", null],
			["bug", "Something to REVIEW"],
			["UI", null],
			["build", "the pipeline"],
		])
			expect((await v4(owner.token).post(`/projects/${project.id}/labels`, { body: { name, color: "#eeeeee", description } })).status).toBe(201);
		expect((await v4(owner.token).post(`/projects/${project.id}/labels/bug/subscribe`)).status).toBe(201);
		const search = async (token: string | null, text: string) => {
			const res = await v4(token).get(`/projects/${project.id}/labels`, { query: { search: text } });
			return [res.status, res.body.map((l: { name: string; subscribed: boolean }) => `${l.name}${l.subscribed ? "*" : ""}`), res.headers.get("x-total")];
		};
		for (let round = 0; round < 2; round++) {
			expect(await search(owner.token, "review")).toEqual([200, ["bug*", "needs review"], "2"]);
			expect(await search(null, "review")).toEqual([200, ["bug", "needs review"], "2"]);
			expect(await search(null, "ui")).toEqual([200, ["UI"], "1"]);
			expect(await search(null, "pipeline build")).toEqual([200, [], "0"]);
			expect(await search(null, "(.*")).toEqual([200, [], "0"]);
		}
		const other = await createProject(as(owner.token));
		expect((await v4(null).get(`/projects/${other.id}/labels`)).body).toEqual({ message: "404 Project Not Found" });
		expect((await as(null).get(`/projects/${project.id}/labels`)).status).toBe(401);
	});
});

describe("the Redis label cache", () => {
	it("serves reads from Redis and cleans exactly the written project's entries", async () => {
		const redis = new Redis(REDIS_URL);
		try {
			const owner = await createUser(cluster.api());
			const a = (await createProject(as(owner.token))).id;
			const b = (await createProject(as(owner.token))).id;
			const keys = async (project: number) => (await redis.keys(`MOL-${cluster.namespace}-labels.list:"${project}"*`)).length;
			await as(owner.token).get(`/projects/${a}/labels`);
			await as(owner.token).get(`/projects/${b}/labels`);
			await as(owner.token).get(`/projects/${b}/labels`, { query: { page: 1, per_page: 5 } });
			expect([await keys(a), await keys(b)]).toEqual([1, 2]);
			await as(owner.token).post(`/projects/${a}/labels`, { form: { name: "fresh", color: "#fff" } });
			expect([await keys(a), await keys(b)]).toEqual([0, 2]);
			expect((await as(owner.token).get(`/projects/${a}/labels`)).body.map((l: { name: string }) => l.name)).toEqual(["fresh"]);
		} finally {
			redis.disconnect();
		}
	});
});

describe("a token's owner", () => {
	it("is read from the shared cache by the first request only, then kept by the gateway", async () => {
		const probe = new Redis(REDIS_URL);
		const monitor = await probe.monitor(); // a connection of its own
		const user = await createUser(cluster.api());
		const tokenKey = `MOL-${cluster.namespace}-accounts.resolveToken:"${hashToken(user.token)}"`;
		const reads: string[] = [];
		let seen = "";
		monitor.on("monitor", (_time: string, args: string[]) => {
			if (String(args[0]).toLowerCase() !== "get") return;
			if (args[1] === tokenKey) reads.push(args[1]);
			else if (String(args[1]).startsWith("sentinel-")) seen = String(args[1]);
		});
		// Redis runs commands in order: once a later GET is seen, the requests' reads have all been seen.
		const settled = async () => {
			const sentinel = `sentinel-${Math.random()}`;
			await probe.get(sentinel);
			await waitFor("the monitor to catch up", () => seen === sentinel, 5000, 10);
		};
		try {
			expect((await as(user.token).get("/user")).status).toBe(200);
			await settled();
			const first = reads.length;
			expect(first).toBeGreaterThanOrEqual(1); // the gateway's read (and accounts' own, on a miss)
			for (let i = 0; i < 5; i++) expect((await as(user.token).get("/user")).body.username).toBe(user.username);
			await settled();
			expect(reads).toHaveLength(first);
		} finally {
			monitor.disconnect();
			probe.disconnect();
		}
	});
});

describe("the role matrix and the 404/403 rule", () => {
	it.each([
		[
			0,
			{ owner: 200, master: 200, developer: 200, reporter: 200, guest: 200, stranger: 404 },
			{ owner: 200, master: 200, developer: 200, reporter: 200, guest: 403, stranger: 404 },
		],
		[
			10,
			{ owner: 200, master: 200, developer: 200, reporter: 200, guest: 200, stranger: 200 },
			{ owner: 200, master: 200, developer: 200, reporter: 200, guest: 403, stranger: 403 },
		],
		[
			20,
			{ owner: 200, master: 200, developer: 200, reporter: 200, guest: 200, stranger: 200 },
			{ owner: 200, master: 200, developer: 200, reporter: 200, guest: 403, stranger: 403 },
		],
	])("visibility %i: reads %j, writes %j", async (visibility, reads, writes) => {
		const { project, roles } = await roleMatrix(cluster.api(), token => as(token), visibility);
		for (const [role, status] of Object.entries(reads)) {
			const res = await as(roles[role].token).get(`/projects/${project.id}/labels`);
			expect([role, res.status]).toEqual([role, status]);
			if (status === 404) expect(res.body).toEqual({ message: "404 Project Not Found" });
		}
		for (const [role, status] of Object.entries(writes)) {
			const res = await as(roles[role].token).post(`/projects/${project.id}/labels`, { form: { name: `by-${role}`, color: "#abc" } });
			expect([role, res.status]).toEqual([role, status]);
			if (status === 403) expect(res.body).toEqual({ message: "403 Forbidden" });
		}
		const anonymous = await as(null).get(`/projects/${project.id}/labels`);
		expect(anonymous.status).toBe(401);
		const admin = await as(cluster.rootToken).post(`/projects/${project.id}/labels`, { form: { name: "by-admin", color: "#abc" } });
		expect(admin.status).toBe(200);
	});

	it("takes a changed membership into account at once", async () => {
		const owner = await createUser(cluster.api());
		const member = await createUser(cluster.api());
		const project = await createProject(as(owner.token));
		expect((await as(member.token).get(`/projects/${project.id}/labels`)).status).toBe(404);
		expect((await as(owner.token).post(`/projects/${project.id}/members`, { form: { user_id: member.id, access_level: 10 } })).status).toBe(201);
		expect((await as(member.token).get(`/projects/${project.id}/labels`)).status).toBe(200);
		expect((await as(member.token).post(`/projects/${project.id}/labels`, { form: { name: "x", color: "#fff" } })).status).toBe(403);
		const promoted = await as(owner.token).put(`/projects/${project.id}/members/${member.id}`, { form: { access_level: 20 } });
		expect(promoted.status).toBe(200);
		expect(promoted.body).toMatchObject({ id: member.id, access_level: 20 });
		expect((await as(member.token).post(`/projects/${project.id}/labels`, { form: { name: "x", color: "#fff" } })).status).toBe(200);
		await as(owner.token).del(`/projects/${project.id}/members/${member.id}`);
		expect((await as(member.token).get(`/projects/${project.id}/labels`)).status).toBe(404);
	});
});

describe("bad requests never give a 500", () => {
	it.each([
		["GET", "/projects/abc/labels"],
		["GET", "/projects/-1/labels"],
		["GET", "/projects/99999999999999999999/labels"],
		["GET", "/projects/%2e%2e%2fetc%2fpasswd/labels"],
		["GET", "/nowhere"],
		["PATCH", "/projects/1/labels"],
	])("%s %s", async (method, path) => {
		const res = await cluster.api().request(method, path);
		expect(res.status).toBeGreaterThanOrEqual(400);
		expect(res.status).toBeLessThan(500);
		expect(res.headers.get("content-type")).toMatch(/application\/json/);
	});

	it("answers broken JSON with 400 saying where it broke (never repeating the body) and an oversized body with 413", async () => {
		const broken = await cluster.api().post("/projects/1/labels", { body: "{not json" });
		expect(broken.status).toBe(400);
		expect(broken.body).toEqual({ message: "400 Bad Request - the body is not valid JSON: expected a property name in double quotes (line 1, column 2)" });
		// Most of a megabyte, broken near its end: the answer names the column, not the text.
		const long = `{"name":"${"x".repeat(900_000)}" "color":"#fff"}`;
		const longBroken = await cluster.api().post("/projects/1/labels", { body: long });
		expect([longBroken.status, longBroken.text]).toEqual([
			400,
			JSON.stringify({ message: `400 Bad Request - the body is not valid JSON: expected ',' or '}' (line 1, column ${long.indexOf(' "color"') + 2})` }),
		]);
		const huge = await cluster.api().post("/projects/1/labels", { body: { name: "x".repeat(2 * 1024 * 1024), color: "#fff" } });
		expect(huge.status).toBe(413);
		expect(huge.body).toEqual({ message: "413 Request Entity Too Large" });
	});

	it("answers an unknown route with GitLab's 404 body", async () => {
		const res = await cluster.api().get("/projects/1/nothing-here");
		expect(res.status).toBe(404);
		expect(res.body).toEqual({ error: "404 Not Found" });
	});
});

describe("a backend that is down", () => {
	it("serves a known caller from the shared cache while accounts is down; an unknown token gets 503", async () => {
		const user = await createUser(cluster.api());
		const project = await createProject(as(user.token));
		expect((await as(user.token).get(`/projects/${project.id}/labels`)).status).toBe(200);
		const stranger = await createUser(cluster.api());
		await cluster.kill("accounts");
		try {
			const cached = await as(user.token).get(`/projects/${project.id}/labels`);
			expect(cached.status).toBe(200);
			expect(cached.body).toEqual([]);
			const unknown = await as(stranger.token).get(`/projects/${project.id}/labels`);
			expect(unknown.status).toBe(503);
			expect(unknown.body).toEqual({ message: "503 Service Unavailable" });
		} finally {
			await cluster.spawnNode("accounts", "accounts");
			await cluster.waitForRoute("GET", "/user");
		}
	});

	it("answers 503, not a hang, and recovers when the service is back", async () => {
		await cluster.kill("labels");
		const res = await cluster.api().get("/projects/1/labels");
		expect(res.status).toBe(503);
		expect(res.body).toEqual({ message: "503 Service Unavailable" });
		await cluster.spawnNode("labels", "labels");
		await cluster.waitForRoute("GET", "/projects/1/labels");
		expect((await cluster.api().get("/projects/1/labels")).status).toBe(200);
	});
});
