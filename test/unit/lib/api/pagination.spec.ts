import { paginated, paginationHeaders, pageWindow, parsePage, wantsPage } from "../../../../lib/api/pagination";

describe("parsePage", () => {
	it.each([
		[{}, { page: 1, perPage: 20 }],
		[
			{ page: "3", per_page: "5" },
			{ page: 3, perPage: 5 },
		],
		[
			{ page: 2, per_page: 500 },
			{ page: 2, perPage: 100 },
		],
		[
			{ page: "0", per_page: "0" },
			{ page: 1, perPage: 20 },
		],
		[
			{ page: "-4", per_page: "-1" },
			{ page: 1, perPage: 20 },
		],
		[
			{ page: "abc", per_page: { $gt: 1 } },
			{ page: 1, perPage: 20 },
		],
		[{ page: "99999999999999999999" }, { page: 1, perPage: 20 }],
	])("%j → %j", (input, expected) => {
		expect(parsePage(input)).toEqual(expected);
	});

	it("tells whether the caller asked for a page", () => {
		expect(wantsPage({})).toBe(false);
		expect(wantsPage({ per_page: "2" })).toBe(true);
		expect(wantsPage({ page: "1" })).toBe(true);
	});

	it("turns a page into offset and limit", () => {
		expect(pageWindow({ page: 3, perPage: 20 })).toEqual({ offset: 40, limit: 20 });
	});
});

describe("paginationHeaders", () => {
	const base = "http://h/api/v3/projects/1/builds";

	it("writes GitLab's headers for a middle page, with sorted query keys", () => {
		const headers = paginationHeaders(paginated([], 45, { page: 2, perPage: 20 }), base, { scope: ["running", "failed"], id: "1" });
		expect(headers).toEqual({
			"X-Total": "45",
			"X-Total-Pages": "3",
			"X-Per-Page": "20",
			"X-Page": "2",
			"X-Next-Page": "3",
			"X-Prev-Page": "1",
			Link:
				`<${base}?id=1&page=1&per_page=20&scope%5B%5D=running&scope%5B%5D=failed>; rel="prev", ` +
				`<${base}?id=1&page=3&per_page=20&scope%5B%5D=running&scope%5B%5D=failed>; rel="next", ` +
				`<${base}?id=1&page=1&per_page=20&scope%5B%5D=running&scope%5B%5D=failed>; rel="first", ` +
				`<${base}?id=1&page=3&per_page=20&scope%5B%5D=running&scope%5B%5D=failed>; rel="last"`,
		});
	});

	it("leaves next and prev empty on a single page, and counts an empty list as one page", () => {
		const headers = paginationHeaders(paginated([], 0, { page: 1, perPage: 20 }), base, {});
		expect(headers["X-Total-Pages"]).toBe("1");
		expect(headers["X-Next-Page"]).toBe("");
		expect(headers["X-Prev-Page"]).toBe("");
		expect(headers.Link).toBe(`<${base}?page=1&per_page=20>; rel="first", <${base}?page=1&per_page=20>; rel="last"`);
	});

	it("points prev at the last page from beyond the end", () => {
		const headers = paginationHeaders(paginated([], 5, { page: 9, perPage: 2 }), base, {});
		expect(headers["X-Prev-Page"]).toBe("3");
		expect(headers["X-Next-Page"]).toBe("");
	});
});
