/** Label entities (docs/api.md#label-entity, and #decisions). */
import type { LabelDoc } from "../models/label";

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
