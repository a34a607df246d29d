/** The projects and users lists' store queries (lib/accounts/listing.ts), pure. */
import { allOf, containsPattern, projectFilters, projectSort, usersQuery, visibleProjectsCondition } from "../../../../lib/accounts/listing";

describe("projects lists", () => {
	it("see member projects and the public and internal ones", () => {
		expect(visibleProjectsCondition([3, 9])).toEqual({ $or: [{ id: { $in: [3, 9] } }, { visibility_level: { $in: [10, 20] } }] });
	});

	it("leave archived projects out unless asked for them, as GitLab 8.16's default archived=false", () => {
		expect(projectFilters({})).toEqual([{ archived: { $ne: true } }]);
		expect(projectFilters({ archived: false })).toEqual([{ archived: { $ne: true } }]);
		expect(projectFilters({ archived: true })).toEqual([{ archived: true }]);
	});

	it("filter by visibility name", () => {
		expect(projectFilters({ visibility: "public" })[1]).toEqual({ visibility_level: 20 });
		expect(projectFilters({ visibility: "internal" })[1]).toEqual({ visibility_level: 10 });
		expect(projectFilters({ visibility: "private" })[1]).toEqual({ visibility_level: 0 });
	});

	it("search the name, path, description and namespace, case-insensitively, reading nothing as a pattern", () => {
		const [, search] = projectFilters({ search: "  Dem.o(  " });
		const pattern = containsPattern("Dem.o(");
		expect(search).toEqual({ $or: [{ name: pattern }, { path: pattern }, { description: pattern }, { namespace: pattern }] });
		expect(pattern.$regex.test("my-dem.o(x")).toBe(true);
		expect(pattern.$regex.test("demXo(")).toBe(false);
		expect(containsPattern(".*").$regex.test("anything")).toBe(false);
		// A blank search is no search.
		expect(projectFilters({ search: "   " })).toHaveLength(1);
	});

	it("order by created_at desc unless told, with the id breaking ties in the same direction", () => {
		expect(projectSort({})).toEqual(["-created_at", "-id"]);
		expect(projectSort({ order_by: "name", sort: "asc" })).toEqual(["name", "id"]);
		expect(projectSort({ order_by: "path" })).toEqual(["-path", "-id"]);
		expect(projectSort({ order_by: "id", sort: "asc" })).toEqual(["id"]);
		// Nothing changes a project after it is made: these are its creation time.
		expect(projectSort({ order_by: "updated_at", sort: "asc" })).toEqual(["created_at", "id"]);
		expect(projectSort({ order_by: "last_activity_at" })).toEqual(["-created_at", "-id"]);
	});

	it("combine conditions with $and, and none as everything", () => {
		expect(allOf([])).toEqual({});
		expect(allOf([{ a: 1 }])).toEqual({ a: 1 });
		expect(allOf([{ a: 1 }, { b: 2 }])).toEqual({ $and: [{ a: 1 }, { b: 2 }] });
	});
});

describe("users list", () => {
	it("looks a user up by username, exactly and case-insensitively, for anyone", () => {
		expect(usersQuery({ username: " Root " }, false)).toEqual({ username_key: "root" });
		expect(usersQuery({ username: "root", search: "x", active: true }, true)).toEqual({ username_key: "root" });
	});

	it("lets anyone search usernames and names, and only admins e-mails too", () => {
		const pattern = containsPattern("ada");
		expect(usersQuery({ search: "ada" }, false)).toEqual({ $or: [{ username: pattern }, { name: pattern }] });
		expect(usersQuery({ search: "ada" }, true)).toEqual({ $or: [{ username: pattern }, { name: pattern }, { email: pattern }] });
	});

	it("gives the whole list to admins only", () => {
		expect(usersQuery({}, true)).toEqual({});
		expect(usersQuery({}, false)).toBeNull();
		expect(usersQuery({ search: "  " }, false)).toBeNull();
		expect(usersQuery({ active: true }, false)).toBeNull();
	});

	it("narrows by state, and by external for admins", () => {
		expect(usersQuery({ active: true }, true)).toEqual({ state: "active" });
		expect(usersQuery({ blocked: true, external: true }, true)).toEqual({ $and: [{ state: "blocked" }, { external: true }] });
		expect(usersQuery({ search: "a", external: true }, false)).toEqual({ $or: [{ username: containsPattern("a") }, { name: containsPattern("a") }] });
	});
});
