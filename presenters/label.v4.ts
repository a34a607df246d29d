/** API v4's ProjectLabel entity (docs/api.md#v4-labels), beside v3's in presenters/label.ts; pure. */
import { textColorFor } from "../lib/labels/label-rules";
import { paragraphsHtml } from "../lib/text/html";
import type { LabelDoc } from "../models/label";
import { boolean, integer, nullable, object, oneValue, propertiesOf, string } from "./json-schema";
import type { LabelCounts } from "./label";

/**
 * `{id, name, color, description, description_html, text_color, [counts], subscribed, priority,
 * is_project_label}`: the counts only when the list asks `with_counts` (always 0 here: no issues or
 * merge requests); `subscribed` is the caller's.
 */
export function presentLabelV4(l: LabelDoc, subscribed: boolean, counts?: LabelCounts) {
	return {
		id: l.id,
		name: l.title,
		color: l.color,
		description: l.description ?? null,
		description_html: paragraphsHtml(l.description),
		text_color: textColorFor(l.color),
		...counts,
		subscribed,
		priority: l.priority ?? null,
		is_project_label: true,
	};
}

/** The shapes above, for the API description (presenters/json-schema.ts): the counts only where the list asks for them. */
export const LABEL_V4 = object(
	{
		id: integer,
		name: string,
		color: string,
		description: nullable(string),
		description_html: string,
		text_color: string,
		subscribed: boolean,
		priority: nullable(integer),
		is_project_label: oneValue(true),
	},
	"ProjectLabelV4",
);
export const LABEL_WITH_COUNTS_V4 = object(
	{ ...propertiesOf(LABEL_V4), open_issues_count: integer, closed_issues_count: integer, open_merge_requests_count: integer },
	"ProjectLabelWithCountsV4",
);
