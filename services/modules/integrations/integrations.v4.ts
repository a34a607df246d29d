/**
 * API v4's integrations (docs/api.md#v4-integrations): the same settings as v3's, addressed by
 * GitLab's slugs (`slack`; the spec's slugs are taken too) under `/integrations` and its
 * `/services` alias, with the fields and events of GitLab's current API in its names
 * (lib/integrations/catalogue.ts): the active ones listed, one read (404 until it was ever set), a
 * PUT answering the integration (its flags kept too), a DELETE 204 (If-Unmodified-Since). Secrets
 * are never returned.
 */
import { AccessLevel } from "../../../lib/accounts/access";
import { readBoolean } from "../../../lib/api/booleans";
import { checkUnmodifiedSince } from "../../../lib/api/conditional";
import { invalidValue, notFound, paramError, routeNotFound } from "../../../lib/api/errors";
import { PAGE_PARAMS, paginated, parsePage } from "../../../lib/api/pagination";
import { findIntegration, resolveIntegration, v4FlagNames, type IntegrationDef, type NamedIntegration } from "../../../lib/integrations/catalogue";
import { PROJECT_CACHE_KEY } from "../../../lib/cache/write-generations";
import { integrationKey, type StoredFlag } from "../../../models/integration";
import { keptFlag, presentIntegrationBasicV4, presentIntegrationV4 } from "../../../presenters/integration.v4";
import type { Ctx, IntegrationsModule } from "./shared";
import { INTEGRATION_NAME } from "../../../lib/integrations/settings-schema";

const slugParams = { id: { type: "string" }, slug: { type: "string", max: 100 } } as const;
/** A read or a DELETE names an integration (400 otherwise), as the API description states. */
const namedParams = { ...slugParams, slug: { ...slugParams.slug, openapi: INTEGRATION_NAME } } as const;

/** The integration a v4 request names: GitLab's slug or the spec's, else Grape's 400 (`values:`) or, for a PUT, no such route. */
function named(slug: string, unknown: () => Error): NamedIntegration {
	const found = resolveIntegration(slug);
	if (!found) throw unknown();
	return { def: found.def, byGitLabName: true };
}

/**
 * The flags a PUT sends among those the integration takes (GitLab's `event_names`; others are
 * ignored, as Grape's declared parameters drop them), as v4 reads a boolean; anything else is
 * Grape's `400 <name> is invalid`.
 */
function eventFlags(def: IntegrationDef, input: Record<string, unknown>): Partial<Record<StoredFlag, boolean>> {
	const flags: Partial<Record<StoredFlag, boolean>> = {};
	const invalid: string[] = [];
	for (const name of v4FlagNames(def)) {
		const kept = keptFlag(name);
		if (kept === undefined || input[name] === undefined || input[name] === null || input[name] === "") continue;
		const value = readBoolean(input[name]);
		if (value === undefined) invalid.push(`${name} is invalid`);
		else flags[kept] = value;
	}
	if (invalid.length) throw paramError(invalid.join(", "));
	return flags;
}

export const IntegrationsV4: IntegrationsModule = {
	actions: {
		/** The active integrations, in one page (there are 20 at most). */
		listV4: {
			access: AccessLevel.MASTER,
			params: { id: { type: "string" }, ...PAGE_PARAMS },
			cache: { keys: [PROJECT_CACHE_KEY, "page", "per_page"], ttl: 60 },
			async handler(ctx: Ctx<{ page?: number; per_page?: number }>) {
				const active = await this.db.integrations.find({ project_id: this.access(ctx).project.id, active: true }, { sort: "id" });
				const rows = active.flatMap(doc => {
					const def = findIntegration(doc.slug);
					return def ? [presentIntegrationBasicV4(def, doc)] : [];
				});
				return paginated(rows, rows.length, { page: 1, perPage: Math.max(parsePage(ctx.params).perPage, rows.length) });
			},
		},

		showV4: {
			access: AccessLevel.MASTER,
			hedge: true,
			params: namedParams,
			async handler(ctx: Ctx) {
				const { def } = named(ctx.params.slug, () => invalidValue("slug"));
				const doc = await this.db.integrations.findOne({ project_slug: integrationKey(this.access(ctx).project.id, def.slug) });
				if (!doc) throw notFound("Integration");
				return presentIntegrationV4(def, doc);
			},
		},

		/** As v3's PUT, in GitLab's field names, with the event flags; 200 with the integration. */
		updateV4: {
			access: AccessLevel.MASTER,
			params: slugParams,
			async handler(ctx: Ctx) {
				const projectId = this.access(ctx).project.id;
				const integration = named(ctx.params.slug, routeNotFound);
				const { id: _id, slug: _slug, ...input } = ctx.params;
				await this.save(projectId, integration, input, { flags: eventFlags(integration.def, input) });
				await this.settingsChanged(projectId);
				return presentIntegrationV4(
					integration.def,
					await this.db.integrations.findOne({ project_slug: integrationKey(projectId, integration.def.slug) }),
				);
			},
		},

		/** As v3's DELETE (every field cleared, inactive, the record kept): 204. */
		removeV4: {
			access: AccessLevel.MASTER,
			params: namedParams,
			async handler(ctx: Ctx) {
				const projectId = this.access(ctx).project.id;
				const { def } = named(ctx.params.slug, () => invalidValue("slug"));
				const current = await this.db.integrations.findOne({ project_slug: integrationKey(projectId, def.slug) });
				checkUnmodifiedSince(ctx.meta, current?.updated_at);
				await this.clearSettings(projectId, def);
				ctx.meta.$statusCode = 204;
				return null;
			},
		},
	},
};
