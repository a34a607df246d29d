/**
 * Accounts as GitLab 8.16 presents them, on the in-process stack (gateway and accounts): the user
 * entities and the sign-in times, the projects lists and the users list (filtered, ordered and
 * paged in the store), `permissions` on a project, and the Member entity.
 */
import AccountsService from "../../../services/accounts.service";
import ApiService from "../../../services/api.service";
import { PasswordHasher } from "../../../lib/crypto/passwords";
import { startLocal, type LocalStack } from "../../support/broker";
import { whileFailing } from "../../support/races";
import { addMember, createProject, createUser, type TestUser } from "../../support/fixtures";
import { client } from "../../support/http";

let stack: LocalStack;
const as = (token: string) => client(stack.url, token);
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const AVATAR = /^https:\/\/www\.gravatar\.com\/avatar\/[0-9a-f]{32}\?s=80&d=identicon$/;

beforeAll(async () => {
	stack = await startLocal([ApiService, AccountsService]);
});

afterAll(() => stack?.stop());

/** GitLab 8.16's UserBasic, User and UserPublic, field by field, with their types. */
const userBasic = (u: TestUser) => ({
	name: `User ${u.username}`,
	username: u.username,
	id: u.id,
	state: "active",
	avatar_url: expect.stringMatching(AVATAR),
	web_url: `http://localhost/${u.username}`,
});
const user = (u: TestUser, profile: Record<string, unknown> = {}) => ({
	...userBasic(u),
	created_at: expect.stringMatching(ISO),
	is_admin: false,
	bio: null,
	location: null,
	skype: "",
	linkedin: "",
	twitter: "",
	website_url: "",
	organization: null,
	...profile,
});
const userPublic = (u: TestUser, profile: Record<string, unknown> = {}, signIn: Record<string, unknown> = {}) => ({
	...user(u, profile),
	last_sign_in_at: expect.stringMatching(ISO),
	confirmed_at: expect.stringMatching(ISO),
	email: `${u.username}@example.com`,
	theme_id: 2,
	color_scheme_id: 1,
	projects_limit: 100000,
	current_sign_in_at: expect.stringMatching(ISO),
	identities: [],
	can_create_group: true,
	can_create_project: true,
	two_factor_enabled: false,
	external: false,
	...signIn,
});

describe("users", () => {
	it("POST /users answers GitLab's full user, with the profile it was given, never signed in yet", async () => {
		const username = `ada${Date.now()}`;
		const profile = {
			skype: "ada.l",
			linkedin: "ada",
			twitter: "@ada",
			website_url: "https://ada.example.com",
			organization: "Engines",
			location: "London",
			bio: "Analyst",
		};
		const res = await stack
			.api()
			.post("/users", { body: { username, name: `User ${username}`, email: `${username}@example.com`, password: "difference", ...profile } });
		expect(res.status).toBe(201);
		const u = { id: res.body.id, username, token: "" };
		expect(res.body).toEqual(userPublic(u, profile, { last_sign_in_at: null, current_sign_in_at: null }));
		expect(res.body.confirmed_at).toBe(res.body.created_at);
		expect(res.body).not.toHaveProperty("private_token");
		const tooLong = await stack
			.api()
			.post("/users", { body: { username: `${username}x`, name: "n", email: `x${username}@example.com`, password: "difference", bio: "b".repeat(256) } });
		expect([tooLong.status, tooLong.body]).toEqual([400, { error: "bio is invalid" }]);
	});

	it("records sign-in times for real: the first sign-in is both, each later one moves current to last", async () => {
		const u = await createUser(stack.api());
		const first = (await as(u.token).get("/user")).body;
		expect(first).toEqual({ ...userPublic(u), private_token: u.token });
		expect(first.last_sign_in_at).toBe(first.current_sign_in_at);
		await new Promise(resolve => setTimeout(resolve, 5));
		const second = await stack.api().post("/session", { token: null, body: { login: u.username, password: `password-${u.username}` } });
		expect(second.status).toBe(201);
		expect(second.body.last_sign_in_at).toBe(first.current_sign_in_at);
		expect(second.body.current_sign_in_at > first.current_sign_in_at).toBe(true);
		expect((await as(u.token).get("/user")).body).toEqual(second.body);
		// A wrong password is no sign-in.
		await stack.api().post("/session", { token: null, body: { login: u.username, password: "wrong-password" } });
		expect((await as(u.token).get("/user")).body.current_sign_in_at).toBe(second.body.current_sign_in_at);
	});

	it("GET /users/:id: the full user for admins, the User entity for others", async () => {
		const u = await createUser(stack.api());
		const other = await createUser(stack.api());
		expect((await stack.api().get(`/users/${u.id}`)).body).toEqual(userPublic(u));
		expect((await as(other.token).get(`/users/${u.id}`)).body).toEqual(user(u));
	});

	it("GET /users: anyone looks a user up by username or searches usernames and names; the whole list is for admins", async () => {
		const tag = `zeta${Date.now()}`;
		const a = await createUser(stack.api(), { username: `${tag}a` });
		const b = await createUser(stack.api(), { username: `${tag}b` });
		const byUsername = await as(b.token).get("/users", { query: { username: a.username.toUpperCase() } });
		expect([byUsername.status, byUsername.body]).toEqual([200, [userBasic(a)]]);
		expect(byUsername.headers.get("x-total")).toBe("1");
		const search = await as(b.token).get("/users", { query: { search: tag } });
		expect(search.body).toEqual([userBasic(a), userBasic(b)]);
		// Others do not search e-mails, which they do not see.
		expect((await as(b.token).get("/users", { query: { search: "@example.com" } })).body).toEqual([]);
		const refused = await as(b.token).get("/users");
		expect([refused.status, refused.body]).toEqual([403, { message: "Not authorized." }]);
		// Admins: the full user, e-mails searched, the whole list paged by id.
		expect((await stack.api().get("/users", { query: { search: `${tag}a@example` } })).body).toEqual([userPublic(a)]);
		const all = await stack.api().get("/users", { query: { per_page: 2, page: 1 } });
		expect(all.body.map((x: { id: number }) => x.id)).toEqual([1, all.body[1].id]);
		expect(Number(all.headers.get("x-total"))).toBeGreaterThanOrEqual(4);
		expect(all.headers.get("x-per-page")).toBe("2");
		expect(all.headers.get("link")).toContain('rel="next"');
		expect((await stack.api().get("/users", { query: { search: tag, blocked: "true" } })).body).toEqual([]);
		expect((await stack.api().get("/users", { query: { search: tag, active: "true" } })).body).toHaveLength(2);
	});

	it("GET /users refuses parameters out of bounds with Grape's errors", async () => {
		for (const [query, error] of [
			[{ search: "x".repeat(256) }, "search is invalid"],
			[{ active: "maybe" }, "active is invalid"],
			[{ page: "abc" }, "page is invalid"],
		] as const) {
			const res = await stack.api().get("/users", { query });
			expect([query, res.status, res.body]).toEqual([query, 400, { error }]);
		}
	});
});

describe("projects", () => {
	let owner: TestUser;
	let viewer: TestUser;
	const made: Record<string, { id: number; path_with_namespace: string }> = {};

	beforeAll(async () => {
		owner = await createUser(stack.api());
		viewer = await createUser(stack.api());
		const api = as(owner.token);
		made.priv = await createProject(api, { name: "Alpha private" });
		made.internal = await createProject(api, { name: "Beta internal", visibility_level: 10 });
		made.pub = await createProject(api, { name: "Gamma public", visibility_level: 20 });
		made.shared = await createProject(api, { name: "Delta shared" });
		await addMember(api, made.shared.id, viewer.id, 30);
		made.viewers = await createProject(as(viewer.token), { name: "Epsilon own" });
	});

	const ids = (body: { id: number }[]) => body.map(p => p.id);
	const ofOwner = (body: { id: number; owner: { id: number } }[]) => body.filter(p => p.owner.id === owner.id || p.owner.id === viewer.id).map(p => p.id);

	it("GET /projects: the caller's member projects and the public and internal ones, newest first, with permissions", async () => {
		const res = await as(viewer.token).get("/projects", { query: { per_page: 100 } });
		expect(res.status).toBe(200);
		expect(ofOwner(res.body)).toEqual([made.viewers.id, made.shared.id, made.pub.id, made.internal.id]);
		expect(ids(res.body)).not.toContain(made.priv.id);
		const shared = res.body.find((p: { id: number }) => p.id === made.shared.id);
		expect(shared.permissions).toEqual({ project_access: { access_level: 30, notification_level: 3 }, group_access: null });
		const pub = res.body.find((p: { id: number }) => p.id === made.pub.id);
		expect(pub.permissions).toEqual({ project_access: null, group_access: null });
		expect(res.headers.get("x-total")).toBe(String(res.body.length));
		for (const h of ["x-total-pages", "x-per-page", "x-page", "x-next-page", "x-prev-page", "link"]) expect([h, res.headers.get(h)]).not.toEqual([h, null]);
	});

	it("search, visibility, order_by and sort, archived, simple, and pages", async () => {
		const api = as(viewer.token);
		const search = await api.get("/projects", { query: { search: "GAMMA" } });
		expect(ids(search.body)).toEqual([made.pub.id]);
		expect(ids((await api.get("/projects", { query: { search: owner.username, order_by: "name", sort: "asc" } })).body)).toEqual([
			made.internal.id,
			made.shared.id,
			made.pub.id,
		]);
		expect(ids((await api.get("/projects", { query: { search: owner.username, visibility: "internal" } })).body)).toEqual([made.internal.id]);
		expect((await api.get("/projects", { query: { archived: "true" } })).body).toEqual([]);
		const byId = await api.get("/projects", { query: { search: owner.username, order_by: "id", sort: "asc" } });
		expect(ids(byId.body)).toEqual([made.internal.id, made.pub.id, made.shared.id]);
		const simple = await api.get("/projects", { query: { search: "Gamma", simple: "true" } });
		expect(simple.body).toEqual([
			{
				id: made.pub.id,
				http_url_to_repo: `http://localhost/${made.pub.path_with_namespace}.git`,
				web_url: `http://localhost/${made.pub.path_with_namespace}`,
				name: "Gamma public",
				name_with_namespace: `User ${owner.username} / Gamma public`,
				path: "gamma-public",
				path_with_namespace: made.pub.path_with_namespace,
			},
		]);
		const page2 = await api.get("/projects", { query: { search: owner.username, per_page: 2, page: 2 } });
		expect(ids(page2.body)).toEqual([made.internal.id]);
		expect([page2.headers.get("x-total"), page2.headers.get("x-total-pages"), page2.headers.get("x-prev-page"), page2.headers.get("x-next-page")]).toEqual([
			"3",
			"2",
			"1",
			"",
		]);
		for (const [query, error] of [
			[{ order_by: "stars" }, "order_by does not have a valid value"],
			[{ sort: "up" }, "sort does not have a valid value"],
			[{ visibility: "secret" }, "visibility does not have a valid value"],
			[{ archived: "perhaps" }, "archived is invalid"],
			[{ search: "s".repeat(256) }, "search is invalid"],
			[{ per_page: "many" }, "per_page is invalid"],
		] as const) {
			const res = await api.get("/projects", { query });
			expect([query, res.status, res.body]).toEqual([query, 400, { error }]);
		}
	});

	it("GET /projects/owned: the caller's own; GET /projects/all: every project, for admins only", async () => {
		expect(ids((await as(owner.token).get("/projects/owned")).body)).toEqual([made.shared.id, made.pub.id, made.internal.id, made.priv.id]);
		const owned = (await as(owner.token).get("/projects/owned")).body[0];
		expect(owned.permissions).toEqual({ project_access: { access_level: 50, notification_level: 3 }, group_access: null });
		const all = await stack.api().get("/projects/all", { query: { per_page: 100 } });
		expect(all.status).toBe(200);
		expect(ids(all.body)).toEqual(expect.arrayContaining([made.priv.id, made.viewers.id]));
		// An admin is no member: no project_access.
		expect(all.body.find((p: { id: number }) => p.id === made.priv.id).permissions.project_access).toBeNull();
		const refused = await as(viewer.token).get("/projects/all");
		expect([refused.status, refused.body]).toEqual([403, { message: "403 Forbidden" }]);
	});

	it("GET /projects/:id is GitLab 8.16's project with the caller's permissions", async () => {
		const res = await as(viewer.token).get(`/projects/${made.shared.id}`);
		expect(res.status).toBe(200);
		expect(res.body).toEqual({
			id: made.shared.id,
			description: "",
			default_branch: "master",
			tag_list: [],
			public: false,
			archived: false,
			visibility_level: 0,
			ssh_url_to_repo: `git@localhost:${made.shared.path_with_namespace}.git`,
			http_url_to_repo: `http://localhost/${made.shared.path_with_namespace}.git`,
			web_url: `http://localhost/${made.shared.path_with_namespace}`,
			owner: userBasic(owner),
			name: "Delta shared",
			name_with_namespace: `User ${owner.username} / Delta shared`,
			path: "delta-shared",
			path_with_namespace: made.shared.path_with_namespace,
			container_registry_enabled: false,
			issues_enabled: true,
			merge_requests_enabled: true,
			wiki_enabled: true,
			builds_enabled: true,
			snippets_enabled: true,
			created_at: expect.stringMatching(ISO),
			last_activity_at: expect.stringMatching(ISO),
			shared_runners_enabled: true,
			lfs_enabled: false,
			creator_id: owner.id,
			namespace: { id: owner.id, name: owner.username, path: owner.username, kind: "user" },
			avatar_url: null,
			star_count: 0,
			forks_count: 0,
			open_issues_count: 0,
			public_builds: true,
			shared_with_groups: [],
			only_allow_merge_if_build_succeeds: false,
			request_access_enabled: false,
			only_allow_merge_if_all_discussions_are_resolved: false,
			approvals_before_merge: 0,
			permissions: { project_access: { access_level: 30, notification_level: 3 }, group_access: null },
		});
		expect((await stack.api().get(`/projects/${made.shared.id}`)).body.permissions).toEqual({ project_access: null, group_access: null });
	});

	it("HEAD answers every GET path with the GET's status and headers and no body, as GitLab does", async () => {
		const viewerApi = as(viewer.token);
		const get = await viewerApi.get(`/projects/${made.shared.id}`);
		const head = await viewerApi.request("HEAD", `/projects/${made.shared.id}`);
		expect([head.status, head.text, head.headers.get("content-type"), head.headers.get("content-length")]).toEqual([
			200,
			"",
			"application/json",
			String(Buffer.byteLength(get.text)),
		]);
		const page = await viewerApi.request("HEAD", "/projects", { query: { per_page: 1 } });
		expect([page.status, page.text, page.headers.get("x-per-page"), page.headers.get("x-page")]).toEqual([200, "", "1", "1"]);
		// A GET's rules and errors, without their bodies.
		const hidden = await viewerApi.request("HEAD", `/projects/${made.priv.id}`);
		expect([hidden.status, hidden.text]).toEqual([404, ""]);
		expect((await client(stack.url).request("HEAD", "/user")).status).toBe(401);
		expect((await viewerApi.request("HEAD", "/no-such-path")).status).toBe(404);
	});

	it("POST /projects takes GitLab 8.16's `public` when no visibility_level is given", async () => {
		const creator = await createUser(stack.api());
		const made = async (form: Record<string, string>) => {
			const res = await as(creator.token).post("/projects", { form });
			expect(res.status).toBe(201);
			return [res.body.visibility_level, res.body.public];
		};
		expect(await made({ name: "pub", public: "true" })).toEqual([20, true]);
		expect(await made({ name: "priv", public: "false" })).toEqual([0, false]);
		expect(await made({ name: "internal", public: "true", visibility_level: "10" })).toEqual([10, false]);
	});

	it.each([
		["the membership's write fails", ["members.insert"]],
		["the project's write fails", ["projects.insert"]],
		// The disk filling up between the two writes: nothing can be written or withdrawn after the first.
		["the membership's write and every removal fail", ["members.insert", "members.remove", "projects.remove"]],
	])("POST /projects when %s leaves neither a project nor a membership behind, and the retry succeeds", async (_what, failing) => {
		const creator = await createUser(stack.api());
		const db = (stack.broker.getLocalService("accounts") as unknown as { db: Record<string, { find: (query: object) => Promise<unknown[]> }> }).db;
		const failed = await whileFailing(stack.broker, "accounts", failing, () => as(creator.token).post("/projects", { body: { name: "half made" } }));
		expect([failed.status, failed.body]).toEqual([500, { message: "500 Internal Server Error" }]);
		expect((await as(creator.token).get("/projects/owned")).body).toEqual([]);
		expect((await stack.api().get(`/projects/${encodeURIComponent(`${creator.username}/half-made`)}`)).status).toBe(404);
		expect(await db.members.find({ user_id: creator.id })).toEqual([]);
		const retried = await as(creator.token).post("/projects", { body: { name: "half made" } });
		expect([retried.status, retried.body.path_with_namespace]).toEqual([201, `${creator.username}/half-made`]);
		expect((await as(creator.token).get(`/projects/${retried.body.id}`)).body.permissions.project_access.access_level).toBe(50);
		// A name taken: refused, and no membership written for it.
		const again = await as(creator.token).post("/projects", { body: { name: "half made" } });
		expect([again.status, again.body]).toEqual([400, { message: { name: ["has already been taken"], path: ["has already been taken"] } }]);
		expect(((await db.members.find({ user_id: creator.id })) as { project_id: number }[]).map(m => m.project_id)).toEqual([retried.body.id]);
	});
});

describe("members", () => {
	it("are GitLab 8.16's Member entity, and GET /projects/:id/members/:user_id shows one", async () => {
		const owner = await createUser(stack.api());
		const dev = await createUser(stack.api());
		const project = await createProject(as(owner.token));
		const added = await as(owner.token).post(`/projects/${project.id}/members`, { body: { user_id: dev.id, access_level: 30 } });
		const member = { ...userBasic(dev), access_level: 30, expires_at: null };
		expect([added.status, added.body]).toEqual([201, member]);
		const one = await as(dev.token).get(`/projects/${project.id}/members/${dev.id}`);
		expect([one.status, one.body]).toEqual([200, member]);
		const ownerMember = { ...userBasic(owner), access_level: 50, expires_at: null };
		expect((await as(owner.token).get(`/projects/${project.id}/members`)).body).toEqual([ownerMember, member]);
		const stranger = await createUser(stack.api());
		const missing = await as(owner.token).get(`/projects/${project.id}/members/${stranger.id}`);
		expect([missing.status, missing.body]).toEqual([404, { message: "404 Not found" }]);
		const bad = await as(owner.token).get(`/projects/${project.id}/members/abc`);
		expect([bad.status, bad.body]).toEqual([400, { error: "user_id is invalid" }]);
		// Not readable by a stranger to the private project.
		expect((await as(stranger.token).get(`/projects/${project.id}/members/${dev.id}`)).status).toBe(404);
	});

	it("answer adds, changes and removals as GitLab 8.16 does: an existing member, a non-member, a level it does not know", async () => {
		const owner = await createUser(stack.api());
		const dev = await createUser(stack.api());
		const stranger = await createUser(stack.api());
		const project = await createProject(as(owner.token));
		const members = `/projects/${project.id}/members`;
		expect((await as(owner.token).post(members, { body: { user_id: dev.id, access_level: 30 } })).status).toBe(201);
		// Adding a member again: 201 with the member as it is, its level unchanged.
		const again = await as(owner.token).post(members, { body: { user_id: dev.id, access_level: 40 } });
		expect([again.status, again.body]).toEqual([201, { ...userBasic(dev), access_level: 30, expires_at: null }]);
		expect((await as(owner.token).get(`${members}/${dev.id}`)).body.access_level).toBe(30);
		// A level that is none of 10–50.
		const unknownLevel = { message: "Access level is not known" };
		const added = await as(owner.token).post(members, { body: { user_id: stranger.id, access_level: 35 } });
		expect([added.status, added.body]).toEqual([422, unknownLevel]);
		const changed = await as(owner.token).put(`${members}/${dev.id}`, { body: { access_level: 60 } });
		expect([changed.status, changed.body]).toEqual([422, unknownLevel]);
		const notANumber = await as(owner.token).put(`${members}/${dev.id}`, { body: { access_level: "abc" } });
		expect([notANumber.status, notANumber.body]).toEqual([400, { error: "access_level is invalid" }]);
		// Changing a user who is not a member: the record look-up's 404; removing one: 200, access revoked.
		const notMember = await as(owner.token).put(`${members}/${stranger.id}`, { body: { access_level: 30 } });
		expect([notMember.status, notMember.body]).toEqual([404, { message: "404 Not found" }]);
		const revoked = await as(owner.token).del(`${members}/${stranger.id}`);
		expect([revoked.status, revoked.body]).toEqual([200, { message: "Access revoked", id: stranger.id }]);
		expect((await as(owner.token).get(members)).body.map((m: { id: number }) => m.id)).toEqual([owner.id, dev.id]);
		// The creator's own ownership is not changed here, and a developer changes nothing.
		expect((await as(owner.token).del(`${members}/${owner.id}`)).status).toBe(403);
		expect((await as(dev.token).del(`${members}/${stranger.id}`)).status).toBe(403);
	});

	it("are listed a page at a time, as GitLab 8.16 pages them, with its headers", async () => {
		const owner = await createUser(stack.api());
		const project = await createProject(as(owner.token));
		const others = await Promise.all(Array.from({ length: 3 }, () => createUser(stack.api())));
		for (const u of others)
			expect((await as(owner.token).post(`/projects/${project.id}/members`, { body: { user_id: u.id, access_level: 20 } })).status).toBe(201);
		const ids = [owner, ...others].map(u => u.id).sort((a, b) => a - b);
		const first = await as(owner.token).get(`/projects/${project.id}/members`, { query: { per_page: 3 } });
		expect([first.status, first.body.map((m: { id: number }) => m.id), first.headers.get("x-total"), first.headers.get("x-next-page")]).toEqual([
			200,
			ids.slice(0, 3),
			"4",
			"2",
		]);
		const second = await as(owner.token).get(`/projects/${project.id}/members`, { query: { per_page: 3, page: 2 } });
		expect(second.body.map((m: { id: number }) => m.id)).toEqual(ids.slice(3));
		const all = await as(owner.token).get(`/projects/${project.id}/members`);
		expect([all.body.length, all.headers.get("x-per-page")]).toEqual([4, "20"]);
		// Kaminari's bound: at most 100 a page.
		const tooMany = await as(owner.token).get(`/projects/${project.id}/members`, { query: { per_page: 1000 } });
		expect([tooMany.status, tooMany.body.length, tooMany.headers.get("x-per-page")]).toEqual([200, 4, "100"]);
		const notANumber = await as(owner.token).get(`/projects/${project.id}/members`, { query: { per_page: "abc" } });
		expect([notANumber.status, notANumber.body]).toEqual([400, { error: "per_page is invalid" }]);
	});
	it("are narrowed by `query` as GitLab 8.16's User.search narrows them: username or name, anywhere, in any case (admins: e-mail too)", async () => {
		// Digits only after "owner": a made-up username's random letters could hold the `z` searched for below.
		const owner = await createUser(stack.api(), { username: `owner${process.pid}${Date.now()}` });
		const project = await createProject(as(owner.token));
		const tag = Date.now().toString(36);
		const zelda = await createUser(stack.api(), { username: `zelda${tag}` });
		const zed = await createUser(stack.api(), { username: `zed${tag}` });
		for (const u of [zelda, zed]) await addMember(as(owner.token), project.id, u.id, 20);
		const ids = (query: Record<string, string | number>, token = owner.token) =>
			as(token)
				.get(`/projects/${project.id}/members`, { query })
				.then(r => [r.status, r.status === 200 ? r.body.map((m: { id: number }) => m.id) : r.body, r.headers.get("x-total")]);
		expect(await ids({ query: `ZELDA${tag}` })).toEqual([200, [zelda.id], "1"]);
		expect(await ids({ query: `z` })).toEqual([200, [zelda.id, zed.id], "2"]);
		// Names are "User <username>": every member's matches.
		expect(await ids({ query: "user " })).toEqual([200, [owner.id, zelda.id, zed.id], "3"]);
		// E-mails only for admins; nothing in the text is read as a pattern.
		expect(await ids({ query: "@example.com" })).toEqual([200, [], "0"]);
		expect(await ids({ query: `${tag}@example.com` }, stack.rootToken)).toEqual([200, [zelda.id, zed.id], "2"]);
		expect(await ids({ query: ".*" })).toEqual([200, [], "0"]);
		// Blank: everyone, paged as before; too long: refused like any other parameter.
		expect(await ids({ query: " ", per_page: 2 })).toEqual([200, [owner.id, zelda.id], "3"]);
		expect(await ids({ query: "x".repeat(256) })).toEqual([400, { error: "query is invalid" }, null]);
	});
});

describe("sudo", () => {
	let alice: TestUser;
	let admin: TestUser;

	beforeAll(async () => {
		alice = await createUser(stack.api());
		admin = await createUser(stack.api(), { admin: true });
	});

	it("lets an admin act as a user named by username or id, in the Sudo header or the sudo parameter", async () => {
		for (const [how, opts] of [
			["header, username", { headers: { Sudo: alice.username } }],
			["header, id", { headers: { SUDO: String(alice.id) } }],
			["query, username in capitals", { query: { sudo: alice.username.toUpperCase() } }],
		] as const) {
			const res = await as(admin.token).get("/user", opts);
			expect([how, res.status, res.body.id, res.body.username]).toEqual([how, 200, alice.id, alice.username]);
		}
		// In a body, as a number, on a write: the project is alice's.
		const name = `sudo${Date.now()}`;
		const created = await as(admin.token).post("/projects", { body: { name, sudo: alice.id } });
		expect([created.status, created.body.creator_id, created.body.owner.id]).toEqual([201, alice.id, alice.id]);
		expect(created.body.path_with_namespace).toBe(`${alice.username}/${name}`);
		// Without sudo, the admin is the admin.
		expect((await as(admin.token).get("/user")).body.id).toBe(admin.id);
	});

	it("refuses it to anyone but an admin, names an unknown user, and asks an anonymous caller to sign in", async () => {
		const notAdmin = await as(alice.token).get("/user", { headers: { Sudo: admin.username } });
		expect([notAdmin.status, notAdmin.body]).toEqual([403, { message: "403 Forbidden  - Must be admin to use sudo" }]);
		const unknown = await as(admin.token).get("/user", { query: { sudo: "nobody-at-all" } });
		expect([unknown.status, unknown.body]).toEqual([404, { message: "404 No user id or username for: nobody-at-all Not Found" }]);
		const long = "x".repeat(300);
		const tooLong = await as(admin.token).get("/user", { headers: { Sudo: long } });
		expect([tooLong.status, tooLong.body]).toEqual([404, { message: `404 No user id or username for: ${long} Not Found` }]);
		const anonymous = await client(stack.url).get("/user", { headers: { Sudo: alice.username } });
		expect([anonymous.status, anonymous.body]).toEqual([401, { message: "401 Unauthorized" }]);
	});
});

describe("sign-in", () => {
	it("takes no more sign-ins at once than the hasher can check: the others are refused before the throttle counts them", async () => {
		type AccountsThis = { hasher: PasswordHasher; loginThrottle: { check: (...args: unknown[]) => Promise<unknown> } };
		const accounts = stack.broker.getLocalService("accounts") as unknown as AccountsThis;
		const realHasher = accounts.hasher;
		const throttle = accounts.loginThrottle;
		const realCheck = throttle.check.bind(throttle);
		let checked = 0;
		// A hasher of three places whose checks wait until the test lets them go: the three sign-ins it
		// holds are under way while the others come, however fast or slow the machine is.
		const held = new PasswordHasher(1, 2);
		const realVerify = held.verify.bind(held);
		let release!: () => void;
		const gate = new Promise<void>(resolve => (release = resolve));
		held.verify = async (password, stored) => (await gate, realVerify(password, stored));
		accounts.hasher = held;
		throttle.check = (...args) => (checked++, realCheck(...args));
		try {
			const meta = { clientAddress: "10.9.8.7" };
			let answered = 0;
			// The held ones go once all the others have their answer (with more than three held, never).
			const logins = Array.from({ length: 40 }, (_, i) =>
				stack.broker.call("accounts.login", { login: `nobody-${i}`, password: "guess" }, { meta }).finally(() => ++answered === 37 && release()),
			);
			const codes = (await Promise.allSettled(logins)).map(s => (s.status === "rejected" ? (s.reason as { code: number }).code : 201));
			expect([codes.filter(c => c === 401).length, codes.filter(c => c === 429).length]).toEqual([3, 37]);
			// Each check takes a day-long count for its login name: only the three checked made one.
			expect(checked).toBe(3);
		} finally {
			accounts.hasher = realHasher;
			throttle.check = realCheck;
		}
	});
});
