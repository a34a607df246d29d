/**
 * Integration settings (docs/api.md#integrations): PUT/GET/DELETE /projects/:id/services/:slug for every slug
 * of the catalogue, master or above. Secrets (passwords, tokens, API keys, user keys) are
 * encrypted at rest with SECRETS_KEY (the key resolution the accounts service uses) and never
 * returned. One record per project and slug (a unique index on `project_slug`).
 *
 * Answers as GitLab 8.16: PUT and DELETE return `true`; GET returns the ProjectService entity
 * (an unsaved, inactive one for an integration never configured); an unknown slug is
 * `404 Service Not Found`. The workers read a project's settings through `settingsFor`.
 */
import type { Context, ServiceSchema } from "moleculer";
import { config } from "../config";
import { AccessLevel } from "../lib/access";
import type { ApiMeta } from "../lib/context";
import { encryptSecret, resolveSecretsKey } from "../lib/crypto";
import { notFound } from "../lib/errors";
import { findIntegration, type IntegrationDef } from "../lib/integrations/catalogue";
import { mergeSettings } from "../lib/integrations/settings";
import { CacheCleanerMixin } from "../mixins/cache-cleaner.mixin";
import { DbMixin, UniqueViolation } from "../mixins/db.mixin";
import { ProjectAccessMixin } from "../mixins/project-access.mixin";
import { presentIntegration, type IntegrationDoc } from "../presenters/integration";

type Ctx<P = Record<string, unknown>> = Context<P & { id: string; slug: string }, ApiMeta>;

const slugParams = { id: { type: "string" }, slug: { type: "string", max: 100 } } as const;

const IntegrationsService: ServiceSchema = {
	name: "integrations",
	mixins: [
		DbMixin({ integrations: { indexes: [{ fields: { project_slug: 1 }, unique: true }, { fields: { project_id: 1 } }] } }),
		CacheCleanerMixin(),
		ProjectAccessMixin(),
	],

	created() {
		this.secretsKey = resolveSecretsKey(config.secretsKey, config.dataDir).key;
	},

	actions: {
		show: {
			params: slugParams,
			async handler(ctx: Ctx) {
				const projectId = this.requireLevel(ctx, AccessLevel.MASTER).project.id;
				const def = this.definition(ctx.params.slug);
				return presentIntegration(def, await this.db.integrations.findOne({ project_slug: `${projectId}|${def.slug}` }));
			},
		},

		update: {
			params: slugParams,
			async handler(ctx: Ctx) {
				const projectId = this.requireLevel(ctx, AccessLevel.MASTER).project.id;
				const def = this.definition(ctx.params.slug);
				const { id, slug, ...input } = ctx.params;
				await this.save(projectId, def, input);
				await this.cleanProjectCache(projectId);
				return true;
			},
		},

		remove: {
			params: slugParams,
			async handler(ctx: Ctx) {
				const projectId = this.requireLevel(ctx, AccessLevel.MASTER).project.id;
				const def = this.definition(ctx.params.slug);
				// GitLab sets every field to nil and deactivates; the record stays.
				await this.db.integrations.update(
					{ project_slug: `${projectId}|${def.slug}` },
					{ properties: {}, active: false, updated_at: new Date().toISOString() },
				);
				await this.cleanProjectCache(projectId);
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
				return this.db.integrations.findOne({ project_slug: `${ctx.params.projectKey}|${def.slug}` });
			},
		},
	},

	methods: {
		definition(slug: string): IntegrationDef {
			const def = findIntegration(slug);
			if (!def) throw notFound("Service");
			return def;
		},

		/** Validates and stores a PUT; a first PUT racing another one ends as an update. */
		async save(projectId: number, def: IntegrationDef, input: Record<string, unknown>): Promise<void> {
			const key = `${projectId}|${def.slug}`;
			for (let attempt = 0; ; attempt++) {
				const current: IntegrationDoc | null = await this.db.integrations.findOne({ project_slug: key });
				const { properties, secretsChanged } = mergeSettings(def, current?.properties, input);
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
