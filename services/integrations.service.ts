/**
 * Integration settings (docs/api.md#integrations): PUT/GET/DELETE /projects/:id/services/:slug for
 * every slug of the catalogue, master or above. Secrets (passwords, tokens, API keys, user keys)
 * are encrypted at rest with the secrets key and never returned. One record per project and slug
 * (a unique index on `project_slug`).
 *
 * Answers as GitLab 8.16: PUT and DELETE return `true`; GET returns the ProjectService entity
 * (an unsaved, inactive one for an integration never configured); an unknown slug is
 * `404 Service Not Found`. GitLab 8.16's service names (`slack`, `asana`, `irker`, …) are
 * aliases of the slugs, on the same record, and speak GitLab's field names. The workers read a
 * project's settings through `settingsFor` and keep them a while, until INTEGRATIONS_CHANGED_EVENT
 * (broadcast after every change) tells them to read again.
 */
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import { AccessLevel } from "../lib/accounts/access";
import type { ApiMeta } from "../lib/api/context";
import { notFound } from "../lib/api/errors";
import { encryptSecret } from "../lib/crypto/secrets";
import { findIntegration, resolveIntegration, type NamedIntegration } from "../lib/integrations/catalogue";
import { mergeSettings } from "../lib/integrations/settings";
import { INTEGRATIONS_CHANGED_EVENT, type IntegrationsChange } from "../lib/integrations/settings-cache";
import { UniqueViolation, type Collection } from "../lib/store/collection";
import { CacheCleanerMixin, RECLEAN_DELAY_MS, type CacheCleanerMethods } from "../mixins/cache-cleaner.mixin";
import { DbMixin } from "../mixins/db.mixin";
import { ProjectAccessMixin, type ProjectAccessMethods } from "../mixins/project-access.mixin";
import { SecretsMixin, type SecretsVars } from "../mixins/secrets.mixin";
import { integrationKey, integrationsCollection, type IntegrationDoc } from "../models/integration";
import { presentIntegration } from "../presenters/integration";

type Ctx<P = Record<string, unknown>> = Context<P & { id: string; slug: string }, ApiMeta>;

interface Methods extends ProjectAccessMethods, CacheCleanerMethods {
	definition(slug: string): NamedIntegration;
	save(projectId: number, named: NamedIntegration, input: Record<string, unknown>): Promise<void>;
	settingsChanged(projectId: number): Promise<void>;
}
interface Vars extends SecretsVars {
	db: { integrations: Collection<IntegrationDoc> };
}

const slugParams = { id: { type: "string" }, slug: { type: "string", max: 100 } } as const;

const IntegrationsService: ServiceSchema<ServiceSettingSchema, Methods, Vars> = {
	name: "integrations",
	mixins: [DbMixin({ integrations: integrationsCollection }), CacheCleanerMixin(), ProjectAccessMixin(), SecretsMixin()],

	actions: {
		show: {
			access: AccessLevel.MASTER,
			params: slugParams,
			async handler(ctx: Ctx) {
				const projectId = this.access(ctx).project.id;
				const { def, byGitLabName } = this.definition(ctx.params.slug);
				return presentIntegration(def, await this.db.integrations.findOne({ project_slug: integrationKey(projectId, def.slug) }), byGitLabName);
			},
		},

		update: {
			access: AccessLevel.MASTER,
			params: slugParams,
			async handler(ctx: Ctx) {
				const projectId = this.access(ctx).project.id;
				const named = this.definition(ctx.params.slug);
				const { id: _id, slug: _slug, ...input } = ctx.params;
				await this.save(projectId, named, input);
				await this.settingsChanged(projectId);
				return true;
			},
		},

		remove: {
			access: AccessLevel.MASTER,
			params: slugParams,
			async handler(ctx: Ctx) {
				const projectId = this.access(ctx).project.id;
				const { def } = this.definition(ctx.params.slug);
				// GitLab sets every field to nil and deactivates; the record stays.
				await this.db.integrations.update(
					{ project_slug: integrationKey(projectId, def.slug) },
					{ properties: {}, active: false, updated_at: new Date().toISOString() },
				);
				await this.settingsChanged(projectId);
				return true;
			},
		},

		/** Internal, for the workers: the stored record (secrets still encrypted), or null. */
		settingsFor: {
			visibility: "public",
			params: { projectKey: { type: "string", pattern: /^\d+$/ }, slug: { type: "string", max: 100 } },
			cache: { keys: ["projectKey", "slug"], ttl: 60 },
			async handler(ctx: Context<{ projectKey: string; slug: string }>): Promise<IntegrationDoc | null> {
				const def = findIntegration(ctx.params.slug);
				if (!def) return null;
				return this.db.integrations.findOne({ project_slug: integrationKey(ctx.params.projectKey, def.slug) });
			},
		},
	},

	methods: {
		/**
		 * Cleans the project's cached settings and tells the workers, which keep their own copy
		 * (lib/integrations/settings-cache.ts): now, and again once the cache's second clean is done
		 * (a read racing this write may have stored the old settings in between).
		 */
		async settingsChanged(projectId: number): Promise<void> {
			await this.cleanProjectCache(projectId);
			const announce = () =>
				this.broker.broadcast(INTEGRATIONS_CHANGED_EVENT, { projectId } satisfies IntegrationsChange).catch((err: Error) => {
					// The workers' copies then expire by their TTL.
					this.logger.warn(`Announcing the settings change of project ${projectId} failed: ${err.message}`);
				});
			await announce();
			setTimeout(announce, RECLEAN_DELAY_MS + 250).unref();
		},

		/** The spec's slug or GitLab 8.16's service name; 404 for anything else. */
		definition(slug: string): NamedIntegration {
			const named = resolveIntegration(slug);
			if (!named) throw notFound("Service");
			return named;
		},

		/** Validates and stores a PUT; a first PUT racing another one ends as an update. */
		async save(projectId: number, { def, byGitLabName }: NamedIntegration, input: Record<string, unknown>): Promise<void> {
			const key = integrationKey(projectId, def.slug);
			for (let attempt = 0; ; attempt++) {
				const current = await this.db.integrations.findOne({ project_slug: key });
				const { properties, secretsChanged } = mergeSettings(def, current?.properties, input, { byGitLabName });
				for (const name of secretsChanged) properties[name] = encryptSecret(String(properties[name]), this.secretsKey);
				const now = new Date().toISOString();
				if (current) {
					await this.db.integrations.update({ id: current.id }, { properties, active: true, updated_at: now });
					return;
				}
				try {
					await this.db.integrations.insert({
						project_id: projectId,
						slug: def.slug,
						project_slug: key,
						active: true,
						properties,
						created_at: now,
						updated_at: now,
					});
					return;
				} catch (err) {
					if (!(err instanceof UniqueViolation) || attempt > 0) throw err;
				}
			}
		},
	},
};

export default IntegrationsService;
