import { ServiceBroker } from "moleculer";
import { checkLabel, labelPriority, normalizeColor, PRIORITY_PARAM, titleErrors } from "../../../../lib/labels/label-rules";
import { presentDeletedLabel, presentLabel, presentLabelWithCounts } from "../../../../presenters/label";
import { costRatio } from "../../../support/timing";

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

describe("label priorities (GitLab 8.16: an Integer from 0, blank allowed)", () => {
	it.each([
		[undefined, undefined],
		[null, null],
		["", null],
		["  ", null],
		[0, 0],
		[3, 3],
		["12", 12],
		[" 7 ", 7],
		["999999999999999", 999999999999999],
	])("%j → %j", (raw, priority) => expect(labelPriority(raw)).toBe(priority));

	it.each([-1, 1.5, Number.MAX_SAFE_INTEGER + 1, "-1", "1.5", "foo", "1e3", "9999999999999999", [3], { $gt: 0 }, true])("refuses %j", raw => {
		expect(labelPriority(raw)).toBe("invalid");
	});

	it("costs time in proportion to what is sent, spaces included (a megabyte reaches the pattern before `max` refuses it)", () => {
		const check = new ServiceBroker({ logger: false }).validator!.compile({ priority: PRIORITY_PARAM }) as (params: object) => unknown;
		/** Spaces before a letter: every way of sharing them between two runs of spaces was tried (quadratic). */
		const checkOf = (n: number) => {
			const hostile = { priority: " ".repeat(n) + "x" };
			expect(check(hostile)).not.toBe(true);
			expect(labelPriority(hostile.priority)).toBe("invalid");
			return () => (check(hostile), labelPriority(hostile.priority));
		};
		// Four times the spaces: four times the time when linear, sixteen when quadratic (×16.8 before, ×3.5 now).
		const ratio = costRatio(checkOf(20_000), checkOf(5_000));
		expect(ratio).toBeLessThan(8);
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
		// A stored priority shows in the list only: create/edit answers and the deleted record stay as the spec has them.
		const prioritized = { ...doc, priority: 2 };
		expect(presentLabelWithCounts(prioritized).priority).toBe(2);
		expect(presentLabelWithCounts({ ...doc, priority: 0 }).priority).toBe(0);
		expect(presentLabel(prioritized)).toEqual({ name: "bug", color: "#FF0000", description: null });
		expect(presentDeletedLabel(prioritized)).toEqual(presentDeletedLabel(doc));
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
