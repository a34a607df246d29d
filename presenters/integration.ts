/**
 * GitLab 8.16 `Entities::ProjectService` for GET /projects/:id/services/:slug. `properties` is
 * sliced to the integration's declared fields, and secret fields are never included, whoever
 * asks (later GitLab's rule, docs/api.md#decisions), nor the secrets inside a field (an IRC
 * channel key). Asked for by GitLab's service name, the
 * properties carry GitLab's field names (`bamboo_url`).
 */
import type { IntegrationDef } from "../lib/integrations/catalogue";
import { fieldLabel, fieldsOf, isSecret } from "../lib/integrations/catalogue";
import { EVENT_FLAGS, type EventFlag } from "../models/integration";
import type { IntegrationDoc } from "../models/integration";
import { boolean, integer, nullable, object, string, timestamp } from "./json-schema";

export interface IntegrationEntity extends Record<EventFlag, boolean> {
	id: number | null;
	title: string;
	created_at: string | null;
	updated_at: string | null;
	active: boolean;
	properties: Record<string, unknown>;
}

/** The stored settings a v3 GET shows: its declared fields that are set, secrets never, under the names the request used. */
function visibleProperties(def: IntegrationDef, doc: IntegrationDoc | null, byGitLabName: boolean): Record<string, unknown> {
	const stored = doc?.properties ?? {};
	const properties: Record<string, unknown> = {};
	for (const f of fieldsOf(def, "v3")) {
		if (isSecret(f)) continue;
		const v = stored[f.name];
		if (v !== undefined && v !== null)
			properties[fieldLabel(f, byGitLabName)] = f.embeddedSecrets && typeof v === "string" ? f.embeddedSecrets.shown(v) : v;
	}
	return properties;
}

/** The title an integration shows (a custom issue tracker's own, when it has one). */
export function integrationTitle(def: IntegrationDef, doc: IntegrationDoc | null): string {
	const custom = def.titleProperty ? doc?.properties?.[def.titleProperty] : undefined;
	return typeof custom === "string" && custom.trim() ? custom : def.title;
}

/** The settings as GET shows them; a never-configured integration is GitLab's unsaved object. */
export function presentIntegration(def: IntegrationDef, doc: IntegrationDoc | null, byGitLabName = false): IntegrationEntity {
	const properties = visibleProperties(def, doc, byGitLabName);
	const flags = Object.fromEntries(EVENT_FLAGS.map(flag => [flag, doc?.[flag] ?? true])) as Record<EventFlag, boolean>;
	return {
		id: doc?.id ?? null,
		title: integrationTitle(def, doc),
		created_at: doc?.created_at ?? null,
		updated_at: doc?.updated_at ?? null,
		active: !!doc?.active,
		...flags,
		properties,
	};
}

/** The shape above, for the API description (presenters/json-schema.ts): the properties are the integration's own fields. */
export const INTEGRATION = object(
	{
		id: nullable(integer),
		title: string,
		created_at: nullable(timestamp),
		updated_at: nullable(timestamp),
		active: boolean,
		...Object.fromEntries(EVENT_FLAGS.map(flag => [flag, boolean])),
		properties: { type: "object", additionalProperties: { type: ["string", "integer", "boolean"] } },
	},
	"Integration",
);
