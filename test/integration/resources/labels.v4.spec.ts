/**
 * API v4's project labels (services/modules/labels/labels.v4.ts) on one in-process broker, beside
 * v3 on the same data: by id or title, pages, subscriptions (201, then 304), priority alone, 201 on
 * create, 204 on delete with If-Unmodified-Since, and v3's answers unchanged for the same labels.
 */
import AccountsService from "../../../services/accounts.service";
import ApiService from "../../../services/api.service";
import LabelsService from "../../../services/labels.service";
import { startLocal, type LocalStack } from "../../support/broker";
import { addMember, createProject, createUser, type TestUser } from "../../support/fixtures";
import type { Client } from "../../support/http";

let stack: LocalStack;
let owner: TestUser;
let guest: TestUser;
let projectId: number;
let v4: Client;
const labels = () => `/projects/${projectId}/labels`;

beforeAll(async () => {
	// The all-in-one's cacher (moleculer.config.ts), where the fast path answers cached reads.
	stack = await startLocal([ApiService, AccountsService, LabelsService], { cacher: { type: "MemoryLRU", options: { max: 1000 } } });
	owner = await createUser(stack.api());
	guest = await createUser(stack.api());
	projectId = (await createProject(stack.api(owner.token))).id;
	await addMember(stack.api(owner.token), projectId, guest.id, 10);
	v4 = stack.v4(owner.token);
});

afterAll(() => stack?.stop());

it("creates with 201 and GitLab v4's label, which v3 lists as its own", async () => {
	const res = await v4.post(labels(), { body: { name: "bug", color: "#d9534f", description: "Broken\n\nReally <b>broken</b>", priority: 2 } });
	expect(res.status).toBe(201);
	expect(res.body).toEqual({
		id: expect.any(Number),
		name: "bug",
		color: "#D9534F",
		description: "Broken\n\nReally <b>broken</b>",
		description_html: '<p dir="auto">Broken</p>\n<p dir="auto">Really &lt;b&gt;broken&lt;/b&gt;</p>',
		text_color: "#FFFFFF",
		subscribed: false,
		priority: 2,
		is_project_label: true,
	});
	const v3 = await stack.api(owner.token).get(labels());
	expect(v3.body).toEqual([
		{
			id: res.body.id,
			name: "bug",
			color: "#D9534F",
			description: "Broken\n\nReally <b>broken</b>",
			open_issues_count: 0,
			closed_issues_count: 0,
			open_merge_requests_count: 0,
			priority: 2,
			subscribed: false,
		},
	]);
	const dup = await v4.post(labels(), { body: { name: "bug", color: "#fff" } });
	expect([dup.status, dup.body]).toEqual([409, { message: "Label already exists" }]);
	const missing = await v4.post(labels(), { body: { name: "x" } });
	expect([missing.status, missing.body]).toEqual([400, { error: "color is missing" }]);
});

it("lists a page by title with the pagination headers, counts on request", async () => {
	for (const name of ["feature", "docs", "zeta"]) expect((await v4.post(labels(), { body: { name, color: "#eeeeee" } })).status).toBe(201);
	const page = await v4.get(labels(), { query: { per_page: 2, page: 2, with_counts: "true" } });
	expect(page.status).toBe(200);
	expect(page.body.map((l: { name: string }) => l.name)).toEqual(["feature", "zeta"]);
	expect(page.body[0]).toMatchObject({ open_issues_count: 0, closed_issues_count: 0, open_merge_requests_count: 0, text_color: "#333333" });
	expect([page.headers.get("x-total"), page.headers.get("x-page"), page.headers.get("x-per-page"), page.headers.get("x-total-pages")]).toEqual([
		"4",
		"2",
		"2",
		"2",
	]);
	const all = await v4.get(labels());
	expect(all.body.map((l: { name: string }) => l.name)).toEqual(["bug", "docs", "feature", "zeta"]);
	expect(all.body[0]).not.toHaveProperty("open_issues_count");
	expect(all.headers.get("x-total")).toBe("4");
});

it("searches titles and descriptions as GitLab's Label.search does, so a script deletes only what it finds", async () => {
	const names = (query: Record<string, string>) =>
		v4.get(labels(), { query }).then(r => [r.status, r.body.map((l: { name: string }) => l.name), r.headers.get("x-total")]);
	expect((await v4.put(`${labels()}/docs`, { body: { description: "Needs a REVIEW before release" } })).status).toBe(200);
	// A word of three characters or more anywhere, in any case; every such word in one field.
	expect(await names({ search: "review" })).toEqual([200, ["docs"], "1"]);
	expect(await names({ search: "FEAT" })).toEqual([200, ["feature"], "1"]);
	expect(await names({ search: "review release" })).toEqual([200, ["docs"], "1"]);
	expect(await names({ search: "review zeta" })).toEqual([200, [], "0"]);
	// Shorter words match a whole title or description only, and nothing is read as a pattern.
	expect(await names({ search: "bu" })).toEqual([200, [], "0"]);
	expect(await names({ search: "BUG" })).toEqual([200, ["bug"], "1"]);
	expect(await names({ search: ".*" })).toEqual([200, [], "0"]);
	// Blank: every label. With counts and pages as without a search; include_ancestor_groups is taken and changes nothing.
	expect(await names({ search: " " })).toEqual([200, ["bug", "docs", "feature", "zeta"], "4"]);
	const counted = await v4.get(labels(), { query: { search: "feat", per_page: "1", with_counts: "yes", include_ancestor_groups: "false" } });
	expect([counted.status, counted.body.length, counted.headers.get("x-total")]).toEqual([200, 1, "1"]);
	expect(counted.body[0]).toMatchObject({ name: "feature", open_issues_count: 0 });
	const tooLong = await v4.get(labels(), { query: { search: "x".repeat(256) } });
	expect([tooLong.status, tooLong.body]).toEqual([400, { error: "search is invalid" }]);
	const badFlag = await v4.get(labels(), { query: { include_ancestor_groups: "maybe" } });
	expect([badFlag.status, badFlag.body]).toEqual([400, { error: "include_ancestor_groups is invalid" }]);
	// The script: delete what the search finds, and only that.
	for (const label of (await v4.get(labels(), { query: { search: "zeta" } })).body) expect((await v4.del(`${labels()}/${label.id}`)).status).toBe(204);
	expect(await names({})).toEqual([200, ["bug", "docs", "feature"], "3"]);
	expect((await v4.post(labels(), { body: { name: "zeta", color: "#eeeeee" } })).status).toBe(201);
});

it("answers a repeated list from the cache before moleculer-web takes it, with the same page and headers", async () => {
	const gateway = stack.broker.getLocalService("api") as unknown as { httpHandler(...args: unknown[]): unknown };
	const first = await v4.get(labels());
	const spy = jest.spyOn(gateway, "httpHandler");
	try {
		const again = await v4.get(labels());
		expect(spy).not.toHaveBeenCalled();
		expect(again.text).toBe(first.text);
		for (const name of ["x-total", "x-total-pages", "x-page", "x-per-page", "x-next-page", "x-prev-page", "link", "content-type"])
			expect([name, again.headers.get(name)]).toEqual([name, first.headers.get(name)]);
	} finally {
		spy.mockRestore();
	}
});

it("finds a label by id or by title, and 404s either way when there is none", async () => {
	const [bug] = (await v4.get(labels())).body;
	expect((await v4.get(`${labels()}/${bug.id}`)).body).toEqual(bug);
	expect((await v4.get(`${labels()}/bug`)).body).toEqual(bug);
	for (const ref of ["999999", "nothing", "%20"]) {
		const res = await v4.get(`${labels()}/${ref}`);
		expect([ref, res.status, res.body]).toEqual([ref, 404, { message: "404 Label Not Found" }]);
	}
});

it("edits by id, a priority alone too, and keeps the deprecated PUT with name or label_id", async () => {
	const docs = (await v4.get(`${labels()}/docs`)).body;
	const prio = await v4.put(`${labels()}/${docs.id}`, { body: { priority: 7 } });
	expect([prio.status, prio.body.priority, prio.body.name]).toEqual([200, 7, "docs"]);
	const cleared = await v4.put(`${labels()}/docs`, { form: { priority: "" } });
	expect(cleared.body.priority).toBeNull();
	const renamed = await v4.put(labels(), { body: { name: "docs", new_name: "documentation", color: "#000" } });
	expect([renamed.status, renamed.body.name, renamed.body.color]).toEqual([200, "documentation", "#000000"]);
	const byId = await v4.put(labels(), { body: { label_id: String(docs.id), description: "Words" } });
	expect([byId.status, byId.body.description]).toEqual([200, "Words"]);
	const none = await v4.put(`${labels()}/${docs.id}`, { body: {} });
	expect([none.status, none.body]).toEqual([400, { error: "new_name, color, description, priority are missing, at least one parameter must be provided" }]);
	const both = await v4.put(labels(), { body: { name: "documentation", label_id: String(docs.id), color: "#111" } });
	expect([both.status, both.body]).toEqual([400, { error: "label_id, name are mutually exclusive" }]);
	const neither = await v4.put(labels(), { body: { color: "#111" } });
	expect([neither.status, neither.body]).toEqual([400, { error: "label_id, name are missing, exactly one parameter must be provided" }]);
	const taken = await v4.put(`${labels()}/${docs.id}`, { body: { new_name: "bug" } });
	expect([taken.status, taken.body]).toEqual([400, { message: { title: ["has already been taken"] } }]);
	const badColor = await v4.put(`${labels()}/${docs.id}`, { body: { color: "blue-ish" } });
	expect([badColor.status, badColor.body]).toEqual([400, { message: { color: ["must be a valid color code"] } }]);
});

it("subscribes and unsubscribes the caller: 201, then 304 with no body; the list says so for that caller only", async () => {
	const guestV4 = stack.v4(guest.token);
	const first = await guestV4.post(`${labels()}/bug/subscribe`);
	expect([first.status, first.body.subscribed, first.body.name]).toEqual([201, true, "bug"]);
	const again = await guestV4.post(`${labels()}/bug/subscribe`);
	expect([again.status, again.text]).toEqual([304, ""]);
	expect((await guestV4.get(labels())).body.find((l: { name: string }) => l.name === "bug").subscribed).toBe(true);
	expect((await v4.get(labels())).body.find((l: { name: string }) => l.name === "bug").subscribed).toBe(false);
	expect((await guestV4.get(`${labels()}/bug`)).body.subscribed).toBe(true);
	const off = await guestV4.post(`${labels()}/bug/unsubscribe`);
	expect([off.status, off.body.subscribed]).toEqual([201, false]);
	const offAgain = await guestV4.post(`${labels()}/bug/unsubscribe`);
	expect([offAgain.status, offAgain.text]).toEqual([304, ""]);
	expect((await guestV4.get(labels())).body.find((l: { name: string }) => l.name === "bug").subscribed).toBe(false);
	expect((await guestV4.post(`${labels()}/nothing/subscribe`)).status).toBe(404);
	// A guest may read and subscribe, not edit.
	expect((await guestV4.put(`${labels()}/bug`, { body: { color: "#fff" } })).status).toBe(403);
});

it("deletes with 204, by id, title or the deprecated form, and honours If-Unmodified-Since with 412", async () => {
	const zeta = (await v4.get(`${labels()}/zeta`)).body;
	const stale = await v4.del(`${labels()}/${zeta.id}`, { headers: { "If-Unmodified-Since": "Thu, 01 Jan 2015 00:00:00 GMT" } });
	expect([stale.status, stale.body]).toEqual([412, { message: "412 Precondition Failed" }]);
	const fresh = await v4.del(`${labels()}/${zeta.id}`, { headers: { "If-Unmodified-Since": new Date(Date.now() + 60_000).toUTCString() } });
	expect([fresh.status, fresh.text]).toEqual([204, ""]);
	expect((await v4.del(`${labels()}/${zeta.id}`)).status).toBe(404);
	expect((await v4.del(labels(), { query: { name: "feature" } })).status).toBe(204);
	const nameless = await v4.del(labels());
	expect([nameless.status, nameless.body]).toEqual([400, { error: "label_id, name are missing, exactly one parameter must be provided" }]);
	expect((await v4.get(labels())).body.map((l: { name: string }) => l.name)).toEqual(["bug", "documentation"]);
	// v3's answers for the same project are v3's.
	const v3Delete = await stack.api(owner.token).del(`${labels()}/documentation`);
	expect(v3Delete.status).toBe(200);
	expect(v3Delete.body).toMatchObject({ title: "documentation", template: false, project_id: projectId });
});
