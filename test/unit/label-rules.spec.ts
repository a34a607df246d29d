import { checkLabel, normalizeColor, titleErrors } from "../../lib/labels/label-rules";
import { presentDeletedLabel, presentLabel, presentLabelWithCounts } from "../../presenters/label";

describe("label colours", () => {
	it.each([
		["#FA0", "#FFAA00"],
		["#fa0", "#FFAA00"],
		["#ffaabb", "#FFAABB"],
		[" #123456 ", "#123456"],
	])("%s → %s", (input, output) => expect(normalizeColor(input)).toBe(output));

	it.each(["#FFAA", "#FF", "#FFAAFFFF", "red", "FFAABB", "#GGGGGG", ""])("refuses %j", input => {
		expect(normalizeColor(input)).toBeNull();
	});
});

describe("label titles", () => {
	it("allows anything but commas, blank and overlong", () => {
		expect(titleErrors("Foo & Bar?")).toEqual([]);
		expect(titleErrors("a,b")).toEqual(["is invalid"]);
		expect(titleErrors("")).toEqual(["can't be blank", "is invalid"]);
		expect(titleErrors("x".repeat(256))).toEqual(["is too long (maximum is 255 characters)"]);
	});

	it("keys errors by model attribute", () => {
		expect(checkLabel({ title: "a,b", color: "nope" }).errors).toEqual({ title: ["is invalid"], color: ["must be a valid color code"] });
		expect(checkLabel({ title: "ok", color: "#abc" }).errors).toBeNull();
		expect(checkLabel({}).errors).toBeNull();
	});

	it("gives the colour in its stored form, parsed once", () => {
		expect(checkLabel({ color: "#abc" })).toEqual({ errors: null, color: "#AABBCC" });
		expect(checkLabel({ title: "x" })).toEqual({ errors: null, color: undefined });
	});

	it('treats an explicit null (JSON `"color": null`) as an invalid value, not a crash', () => {
		expect(checkLabel({ title: null, color: null }).errors).toEqual({ title: ["can't be blank", "is invalid"], color: ["must be a valid color code"] });
		expect(checkLabel({ color: 123 }).errors).toEqual({ color: ["must be a valid color code"] });
	});
});

describe("label presenters", () => {
	const doc = {
		id: 4,
		project_id: 2,
		title: "bug",
		color: "#FF0000",
		description: null,
		template: false,
		created_at: "c",
		updated_at: "u",
		project_title: "2|bug",
	};
	it("shapes create/edit, list and delete responses as the spec says", () => {
		expect(presentLabel(doc)).toEqual({ name: "bug", color: "#FF0000", description: null });
		const listed = presentLabelWithCounts(doc);
		expect(listed).toEqual({
			id: 4,
			name: "bug",
			color: "#FF0000",
			description: null,
			open_issues_count: 0,
			closed_issues_count: 0,
			open_merge_requests_count: 0,
			priority: null,
			subscribed: false,
		});
		// GitLab 8.16's Label entity order.
		expect(Object.keys(listed)).toEqual([
			"id",
			"name",
			"color",
			"description",
			"open_issues_count",
			"closed_issues_count",
			"open_merge_requests_count",
			"priority",
			"subscribed",
		]);
		expect(presentDeletedLabel(doc)).toEqual({
			id: 4,
			title: "bug",
			color: "#FF0000",
			description: null,
			template: false,
			project_id: 2,
			created_at: "c",
			updated_at: "u",
		});
	});
});
