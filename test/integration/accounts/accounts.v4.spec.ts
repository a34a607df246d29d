/**
 * API v4's accounts subset (services/modules/accounts/*.v4.ts) on one in-process broker, beside v3
 * on the same records: the current user, users, projects with `visibility` as a word, and members
 * as v4 answers them (409 for a second add, 404 for a non-member, 204 on removal).
 */
import AccountsService from "../../../services/accounts.service";
import ApiService from "../../../services/api.service";
import { startLocal, type LocalStack } from "../../support/broker";
import { createUser, type TestUser } from "../../support/fixtures";

let stack: LocalStack;
let owner: TestUser;
let other: TestUser;

beforeAll(async () => {
	stack = await startLocal([ApiService, AccountsService]);
	owner = await createUser(stack.api());
	other = await createUser(stack.api());
});

afterAll(() => stack?.stop());

describe("users", () => {
	it("GET /user is UserPublic for a user, UserWithAdmin for an admin, never the private token", async () => {
		const me = await stack.v4(owner.token).get("/user");
		expect(me.status).toBe(200);
		expect(me.body).toMatchObject({ id: owner.id, username: owner.username, state: "active", locked: false, email: `${owner.username}@example.com` });
		expect(me.body).not.toHaveProperty("private_token");
		expect(me.body).not.toHaveProperty("is_admin");
		const root = await stack.v4().get("/user");
		expect(root.body).toMatchObject({ id: 1, username: "root", is_admin: true });
		expect((await stack.v4(null).get("/user")).status).toBe(401);
	});

	it("creates users as admin (201), and shows them to others as User or UserBasic", async () => {
		const body = { username: `v4user${process.pid}`, name: "Vee Four", email: `v4user${process.pid}@example.com`, password: "password1" };
		const created = await stack.v4().post("/users", { body });
		expect(created.status).toBe(201);
		expect(created.body).toMatchObject({ username: body.username, is_admin: false, email: body.email });
		expect((await stack.v4(owner.token).post("/users", { body: { ...body, username: "x" } })).status).toBe(403);
		const dup = await stack.v4().post("/users", { body });
		expect([dup.status, dup.body]).toEqual([409, { message: "Email has already been taken" }]);
		const shown = await stack.v4(owner.token).get(`/users/${created.body.id}`);
		expect(shown.body).toMatchObject({ id: created.body.id, username: body.username, bio: "", public_email: null });
		expect(shown.body).not.toHaveProperty("email");
		const found = await stack.v4(owner.token).get("/users", { query: { username: body.username.toUpperCase() } });
		expect(found.body).toEqual([
			{
				id: created.body.id,
				username: body.username,
				name: "Vee Four",
				state: "active",
				locked: false,
				avatar_url: expect.any(String),
				web_url: expect.any(String),
			},
		]);
		expect(found.headers.get("x-total")).toBe("1");
	});
});

describe("projects", () => {
	it("creates with visibility as a word (201), reads it with permissions, and v3 sees the same project", async () => {
		const res = await stack.v4(owner.token).post("/projects", { body: { name: "Vee Four", visibility: "internal", description: "d" } });
		expect(res.status).toBe(201);
		expect(res.body).toMatchObject({
			name: "Vee Four",
			path: "vee-four",
			path_with_namespace: `${owner.username}/vee-four`,
			visibility: "internal",
			description: "d",
			namespace: { name: owner.username, path: owner.username, kind: "user", full_path: owner.username },
			owner: { id: owner.id, username: owner.username },
			public_jobs: true,
		});
		expect(res.body).not.toHaveProperty("visibility_level");
		const byPath = await stack.v4(owner.token).get(`/projects/${encodeURIComponent(res.body.path_with_namespace)}`);
		expect(byPath.body).toMatchObject({ id: res.body.id, permissions: { project_access: { access_level: 50 }, group_access: null } });
		expect((await stack.api(owner.token).get(`/projects/${res.body.id}`)).body).toMatchObject({ id: res.body.id, visibility_level: 10 });

		const onlyPath = await stack.v4(owner.token).post("/projects", { body: { path: "just-a-path" } });
		expect([onlyPath.status, onlyPath.body.name, onlyPath.body.visibility]).toEqual([201, "just-a-path", "private"]);
		const none = await stack.v4(owner.token).post("/projects", { body: {} });
		expect([none.status, none.body]).toEqual([400, { error: "name, path are missing, at least one parameter must be provided" }]);
		const bad = await stack.v4(owner.token).post("/projects", { body: { name: "x", visibility: "secret" } });
		expect([bad.status, bad.body]).toEqual([400, { error: "visibility does not have a valid value" }]);
	});

	it("lists what the caller sees, its member projects with membership=true, its own with owned=true", async () => {
		const mine = (await stack.v4(other.token).post("/projects", { body: { name: "Mine" } })).body;
		const seen = await stack.v4(other.token).get("/projects", { query: { per_page: 100 } });
		const names = seen.body.map((p: { name: string }) => p.name);
		expect(names).toEqual(expect.arrayContaining(["Mine", "Vee Four"]));
		expect(names).not.toContain("just-a-path");
		const membership = await stack.v4(other.token).get("/projects", { query: { membership: "true" } });
		expect(membership.body.map((p: { id: number }) => p.id)).toEqual([mine.id]);
		const owned = await stack.v4(other.token).get("/projects", { query: { owned: "true", simple: "true" } });
		expect(owned.body).toEqual([expect.objectContaining({ id: mine.id, name: "Mine", namespace: expect.any(Object) })]);
		expect(owned.body[0]).not.toHaveProperty("visibility");
	});
});

describe("members", () => {
	it("adds (201, then 409), reads, changes, and removes (204, then 404) as v4 does", async () => {
		const project = (await stack.v4(owner.token).post("/projects", { body: { name: "Team" } })).body;
		const members = `/projects/${project.id}/members`;
		const v4 = stack.v4(owner.token);
		const added = await v4.post(members, { form: { user_id: other.id, access_level: 30 } });
		expect(added.status).toBe(201);
		expect(added.body).toEqual({
			id: other.id,
			username: other.username,
			name: `User ${other.username}`,
			state: "active",
			locked: false,
			avatar_url: expect.any(String),
			web_url: expect.any(String),
			access_level: 30,
			created_at: expect.any(String),
			expires_at: null,
			membership_state: "active",
		});
		const again = await v4.post(members, { body: { user_id: other.id, access_level: 30 } });
		expect([again.status, again.body]).toEqual([409, { message: "Member already exists" }]);
		const badLevel = await v4.put(`${members}/${other.id}`, { body: { access_level: 35 } });
		expect([badLevel.status, badLevel.body]).toEqual([400, { error: "access_level does not have a valid value" }]);
		const changed = await v4.put(`${members}/${other.id}`, { body: { access_level: 40 } });
		expect([changed.status, changed.body.access_level]).toEqual([200, 40]);
		const list = await v4.get(members);
		expect(list.body.map((m: { id: number; access_level: number }) => [m.id, m.access_level])).toEqual([
			[owner.id, 50],
			[other.id, 40],
		]);
		expect((await v4.get(`${members}/${other.id}`)).body.access_level).toBe(40);
		const stale = await v4.del(`${members}/${other.id}`, { headers: { "If-Unmodified-Since": "Thu, 01 Jan 2015 00:00:00 GMT" } });
		expect(stale.status).toBe(412);
		const removed = await v4.del(`${members}/${other.id}`);
		expect([removed.status, removed.text]).toEqual([204, ""]);
		for (const res of [
			await v4.del(`${members}/${other.id}`),
			await v4.get(`${members}/${other.id}`),
			await v4.put(`${members}/${other.id}`, { body: { access_level: 30 } }),
		])
			expect([res.status, res.body]).toEqual([404, { message: "404 Not found" }]);
		expect((await v4.del(`${members}/${owner.id}`)).status).toBe(403);
		// The removed member lost the project at once.
		expect((await stack.v4(other.token).get(`/projects/${project.id}`)).status).toBe(404);
	});
});
