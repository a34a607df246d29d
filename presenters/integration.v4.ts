/**
 * API v4's integration entities (GitLab's ProjectIntegrationBasic < ProjectIntegration,
 * docs/api.md#v4-integrations), beside v3's; pure. The slug is GitLab's name; the flags are the
 * record's, or GitLab's defaults while unset; the properties are every field of GitLab's current
 * API for the integration, in its names, set or not (null, or GitLab's default), secrets never.
 */
import { fieldLabel, fieldsOf, isSecret, type IntegrationDef } from "../lib/integrations/catalogue";
import type { IntegrationDoc, StoredFlag } from "../models/integration";
import { integrationTitle } from "./integration";
import { boolean, integer, nullable, object, oneValue, propertiesOf, string, timestamp } from "./json-schema";

/**
 * The entity's flags in its order, each with the flag the record keeps it as (v4's `job_events` is
 * 8.16's `build_events`) and its value while unset: on for GitLab 8.16's (its Service model's
 * `default_value_for`), off for the events GitLab added since (its columns' defaults).
 */
const FLAGS: readonly [shown: string, kept: StoredFlag, unset: boolean][] = [
	["commit_events", "commit_events", true],
	["push_events", "push_events", true],
	["issues_events", "issues_events", true],
	["incident_events", "incident_events", false],
	["alert_events", "alert_events", false],
	["confidential_issues_events", "confidential_issues_events", true],
	["merge_requests_events", "merge_requests_events", true],
	["tag_push_events", "tag_push_events", true],
	["deployment_events", "deployment_events", false],
	["note_events", "note_events", true],
	["confidential_note_events", "confidential_note_events", true],
	["pipeline_events", "pipeline_events", true],
	["wiki_page_events", "wiki_page_events", true],
	["job_events", "build_events", true],
	["comment_on_event_enabled", "comment_on_event_enabled", true],
];

/** The record's flag a v4 name stands for (`job_events` → `build_events`); undefined for a name that is no flag. */
export const keptFlag = (shown: string): StoredFlag | undefined => FLAGS.find(([name]) => name === shown)?.[1];

/** ProjectIntegrationBasic: the list's rows. */
export function presentIntegrationBasicV4(def: IntegrationDef, doc: IntegrationDoc | null) {
	return {
		id: doc?.id ?? null,
		title: integrationTitle(def, doc),
		slug: def.gitlabName,
		created_at: doc?.created_at ?? null,
		updated_at: doc?.updated_at ?? null,
		active: !!doc?.active,
		...Object.fromEntries(FLAGS.map(([shown, kept, unset]) => [shown, doc?.[kept] ?? unset])),
		// Settings here are each project's own: none is inherited from an instance or group.
		inherited: false,
	};
}

/**
 * GitLab's `api_field_names` with their values: the current API's fields that are neither secret
 * nor a chat webhook, the stored value (without the secrets inside it), GitLab's default, or null.
 */
export function v4Properties(def: IntegrationDef, doc: IntegrationDoc | null): Record<string, unknown> {
	const stored = doc?.properties ?? {};
	const properties: Record<string, unknown> = {};
	for (const f of fieldsOf(def, "v4")) {
		if (isSecret(f) || f.v4Hidden) continue;
		const v = stored[f.name];
		properties[fieldLabel(f, true)] =
			v === undefined || v === null ? (f.default ?? null) : f.embeddedSecrets && typeof v === "string" ? f.embeddedSecrets.shown(v) : v;
	}
	return properties;
}

/** ProjectIntegration: one integration, with its settings. */
export function presentIntegrationV4(def: IntegrationDef, doc: IntegrationDoc | null) {
	return { ...presentIntegrationBasicV4(def, doc), properties: v4Properties(def, doc) };
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
		...Object.fromEntries(FLAGS.map(([shown]) => [shown, boolean])),
		inherited: oneValue(false),
	},
	"ProjectIntegrationBasicV4",
);
/** Every field of the integration (its own, per integration, in each PUT's operation): a value, or null while unset. */
export const INTEGRATION_V4 = object(
	{ ...propertiesOf(INTEGRATION_BASIC_V4), properties: { type: "object", additionalProperties: { type: ["string", "integer", "boolean", "null"] } } },
	"ProjectIntegrationV4",
);
