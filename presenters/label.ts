/** Label entities (docs/api.md#label-entity, and #decisions). */
import type { LabelDoc } from "../models/label";
import { boolean, integer, nullable, object, propertiesOf, string, timestamp } from "./json-schema";

export interface LabelCounts {
	open_issues_count: number;
	closed_issues_count: number;
	open_merge_requests_count: number;
}

/** Create and edit responses: name, color, description only. */
export function presentLabel(l: LabelDoc) {
	return { name: l.title, color: l.color, description: l.description ?? null };
}

/**
 * The list: GitLab 8.16's Label entity, `id` first, with the three counts (this service has no
 * issues or merge requests: zero), `priority` (the label's in its project, or null) and
 * `subscribed` (false: there is nothing to subscribe to).
 */
export function presentLabelWithCounts(l: LabelDoc, counts: LabelCounts = { open_issues_count: 0, closed_issues_count: 0, open_merge_requests_count: 0 }) {
	return { id: l.id, ...presentLabel(l), ...counts, priority: l.priority ?? null, subscribed: false };
}

/** The delete response: the deleted record (without `priority`, which GitLab 8.16 kept in another table). */
export function presentDeletedLabel(l: LabelDoc) {
	return {
		id: l.id,
		title: l.title,
		color: l.color,
		description: l.description ?? null,
		template: !!l.template,
		project_id: l.project_id,
		created_at: l.created_at,
		updated_at: l.updated_at,
	};
}

/** The shapes above, for the API description (presenters/json-schema.ts). */
export const LABEL = object({ name: string, color: string, description: nullable(string) }, "Label");
export const LABEL_WITH_COUNTS = object(
	{
		id: integer,
		...propertiesOf(LABEL),
		open_issues_count: integer,
		closed_issues_count: integer,
		open_merge_requests_count: integer,
		priority: nullable(integer),
		subscribed: boolean,
	},
	"LabelWithCounts",
);
export const DELETED_LABEL = object(
	{
		id: integer,
		title: string,
		color: string,
		description: nullable(string),
		template: boolean,
		project_id: integer,
		created_at: timestamp,
		updated_at: timestamp,
	},
	"DeletedLabel",
);
