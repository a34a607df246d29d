/** API v4's label (presenters/label.v4.ts) and the text colour of its background (lib/labels/label-rules.ts). */
import { textColorFor } from "../../../lib/labels/label-rules";
import type { LabelDoc } from "../../../models/label";
import { presentLabelV4 } from "../../../presenters/label.v4";

const label: LabelDoc = {
	id: 3,
	project_id: 1,
	title: "bug",
	color: "#D9534F",
	description: "Broken",
	priority: null,
	template: false,
	created_at: "2016-01-01T00:00:00.000Z",
	updated_at: "2016-01-01T00:00:00.000Z",
	project_title: "1|bug",
};

it("shows GitLab v4's ProjectLabel, counts only when asked", () => {
	expect(presentLabelV4(label, true)).toEqual({
		id: 3,
		name: "bug",
		color: "#D9534F",
		description: "Broken",
		description_html: '<p dir="auto">Broken</p>',
		text_color: "#FFFFFF",
		subscribed: true,
		priority: null,
		is_project_label: true,
	});
	const counted = presentLabelV4({ ...label, description: null, priority: 4 }, false, {
		open_issues_count: 0,
		closed_issues_count: 0,
		open_merge_requests_count: 0,
	});
	expect(Object.keys(counted)).toEqual([
		"id",
		"name",
		"color",
		"description",
		"description_html",
		"text_color",
		"open_issues_count",
		"closed_issues_count",
		"open_merge_requests_count",
		"subscribed",
		"priority",
		"is_project_label",
	]);
	expect([counted.description, counted.description_html, counted.priority]).toEqual([null, "", 4]);
});

it("writes dark text on light colours and white on dark ones", () => {
	expect(textColorFor("#FFFFFF")).toBe("#333333");
	expect(textColorFor("#EEEEEE")).toBe("#333333");
	expect(textColorFor("#428BCA")).toBe("#FFFFFF");
	expect(textColorFor("#000000")).toBe("#FFFFFF");
	expect(textColorFor("nonsense")).toBe("#FFFFFF");
});
