/** API v4's ProjectLabel entity (docs/api.md#v4-labels), beside v3's in presenters/label.ts; pure. */
import { textColorFor } from "../lib/labels/label-rules";
import { paragraphsHtml } from "../lib/text/html";
import type { LabelDoc } from "../models/label";
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

export type LabelV4Entity = ReturnType<typeof presentLabelV4>;
