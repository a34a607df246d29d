/**
 * API v4's integration entities (GitLab's ProjectIntegrationBasic < ProjectIntegration,
 * docs/api.md#v4-integrations), beside v3's; pure. The slug is GitLab's name, the properties
 * GitLab's field names, secrets never; the event flags this service does not keep show as
 * GitLab's defaults.
 */
import type { IntegrationDef } from "../lib/integrations/catalogue";
import type { IntegrationDoc } from "../models/integration";
import { boolean, integer, nullable, object, propertiesOf, string, timestamp } from "./json-schema";
import { INTEGRATION, integrationTitle, visibleProperties } from "./integration";

/** ProjectIntegrationBasic: the list's rows. */
export function presentIntegrationBasicV4(def: IntegrationDef, doc: IntegrationDoc | null) {
	const flag = (name: keyof IntegrationDoc) => (doc?.[name] as boolean | undefined) ?? true;
	return {
		id: doc?.id ?? null,
		title: integrationTitle(def, doc),
		slug: def.gitlabName,
		created_at: doc?.created_at ?? null,
		updated_at: doc?.updated_at ?? null,
		active: !!doc?.active,
		commit_events: true,
		push_events: flag("push_events"),
		issues_events: flag("issues_events"),
		confidential_issues_events: true,
		merge_requests_events: flag("merge_requests_events"),
		tag_push_events: flag("tag_push_events"),
		note_events: flag("note_events"),
		confidential_note_events: true,
		pipeline_events: flag("pipeline_events"),
		wiki_page_events: true,
		job_events: flag("build_events"),
		comment_on_event_enabled: true,
	};
}

/** ProjectIntegration: one integration, with its settings. */
export function presentIntegrationV4(def: IntegrationDef, doc: IntegrationDoc | null) {
	return { ...presentIntegrationBasicV4(def, doc), properties: visibleProperties(def, doc, true) };
}

/** The shapes above, for the API description (presenters/json-schema.ts). */
export const INTEGRATION_BASIC_V4 = object(
	{
		id: nullable(integer),
		title: string,
		slug: string,
		created_at: nullable(timestamp),
		updated_at: nullable(timestamp),
		active: boolean,
		commit_events: boolean,
		push_events: boolean,
		issues_events: boolean,
		confidential_issues_events: boolean,
		merge_requests_events: boolean,
		tag_push_events: boolean,
		note_events: boolean,
		confidential_note_events: boolean,
		pipeline_events: boolean,
		wiki_page_events: boolean,
		job_events: boolean,
		comment_on_event_enabled: boolean,
	},
	"ProjectIntegrationBasicV4",
);
export const INTEGRATION_V4 = object({ ...propertiesOf(INTEGRATION_BASIC_V4), properties: propertiesOf(INTEGRATION).properties }, "ProjectIntegrationV4");
