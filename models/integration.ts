/** Integration settings as stored: one record per project and slug, secrets encrypted. */

/**
 * The event flags GitLab 8.16 shows (which events an integration acts on), in its entity's order;
 * all true unless a record says otherwise, as GitLab's Service model defaults them
 * (`default_value_for`, which a new or never-saved service gets, whatever the columns' defaults).
 */
export const EVENT_FLAGS = [
	"push_events",
	"issues_events",
	"merge_requests_events",
	"tag_push_events",
	"note_events",
	"build_events",
	"pipeline_events",
] as const;
export type EventFlag = (typeof EVENT_FLAGS)[number];

/**
 * Every flag a record keeps: GitLab 8.16's above, the event flags GitLab's current API added (set by
 * v4's PUT, docs/api.md#v4-integrations), and Jira's `comment_on_event_enabled`. One unset shows
 * as GitLab's default (presenters/integration.v4.ts).
 */
export type StoredFlag =
	| EventFlag
	| "commit_events"
	| "confidential_issues_events"
	| "confidential_note_events"
	| "wiki_page_events"
	| "deployment_events"
	| "incident_events"
	| "alert_events"
	| "comment_on_event_enabled";

export interface IntegrationDoc extends Partial<Record<StoredFlag, boolean>> {
	id: number;
	project_id: number;
	/** The spec's slug (GitLab's service names are aliases of it: one record, either name). */
	slug: string;
	active: boolean;
	/** Declared fields only; secret ones as `v1:…` ciphertext (lib/crypto/secrets.ts). */
	properties: Record<string, unknown>;
	created_at: string;
	updated_at: string;
	/** integrationKey(project_id, slug): unique. */
	project_slug: string;
}

export const integrationKey = (projectId: number | string, slug: string) => `${projectId}|${slug}`;

export const integrationsCollection = {
	indexes: [{ fields: { project_slug: 1 }, unique: true }, { fields: { project_id: 1 } }],
} as const;
