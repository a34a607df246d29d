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
 * project's settings through `settingsFor` and keep them a while: every change has each worker
 * instance forget them before it answers. v3's actions, v4's and the workers' are
 * services/modules/integrations/; reading and writing the settings are the methods here.
 */
import type { ServiceSchema, ServiceSettingSchema } from "moleculer";
import { conflict, notFound } from "../lib/api/errors";
import { encryptSecret } from "../lib/crypto/secrets";
import { resolveIntegration, type IntegrationDef, type NamedIntegration } from "../lib/integrations/catalogue";
import { mergeSettings } from "../lib/integrations/settings";
import { FORGET_SETTINGS_ACTION } from "../lib/integrations/settings-cache";
import { PUSH_GROUPS } from "../lib/push/channel";
import { UniqueViolation } from "../lib/store/collection";
import { serviceModule } from "../lib/moleculer/service-module";
import { CacheCleanerMixin } from "../mixins/cache.mixin";
import { DbMixin } from "../mixins/db.mixin";
import { ProjectAccessMixin } from "../mixins/project-access.mixin";
import { checkSecretsKeyInStore, SecretsMixin } from "../mixins/secrets.mixin";
import { integrationKey, integrationsCollection, type StoredFlag } from "../models/integration";
import { secretsKeyCheckCollection } from "../models/secrets-key-check";
import { Integrations } from "./modules/integrations/integrations";
import { IntegrationsV4 } from "./modules/integrations/integrations.v4";
import { InternalIntegrations } from "./modules/integrations/internal";
import type { IntegrationsMethods as Methods, IntegrationsVars as Vars } from "./modules/integrations/shared";

/** How long a write waits for a worker instance to forget the project's settings. */
const FORGET_TIMEOUT_MS = 2000;

/** A PUT that keeps finding its settings changed under it gives up (409) after this many tries. */
const MAX_SAVE_ATTEMPTS = 10;

/** Now, and always later than `previous`: the compare-and-set of a PUT tells every write apart by it. */
function changedAt(previous: string | undefined): string {
	const at = Date.now();
	const before = previous ? Date.parse(previous) : NaN;
	return new Date(Number.isFinite(before) && before >= at ? before + 1 : at).toISOString();
}

/** A failed call's message (a Moleculer error's), or the reason itself. */
function reasonText(reason: unknown): string {
	const message = (reason as { message?: unknown } | null | undefined)?.message;
	return typeof message === "string" ? message : String(reason);
}

const IntegrationsService: ServiceSchema<ServiceSettingSchema, Methods, Vars> = {
	name: "integrations",
	mixins: [
		DbMixin({ integrations: integrationsCollection, integrations_secrets_key: secretsKeyCheckCollection }),
		CacheCleanerMixin(),
		ProjectAccessMixin(),
		SecretsMixin(),
		serviceModule(InternalIntegrations),
		serviceModule(Integrations),
		serviceModule(IntegrationsV4),
	],

	/** Integration secrets are encrypted with it: a different key stops here (the service's own hook runs after its mixins'). */
	started() {
		return checkSecretsKeyInStore(this);
	},

	methods: {
		/** GitLab sets every field to nil and deactivates; the record stays. A new `updated_at`: a PUT that read before this does not write. */
		async clearSettings(projectId: number, def: IntegrationDef): Promise<void> {
			const key = integrationKey(projectId, def.slug);
			const current = await this.db.integrations.findOne({ project_slug: key });
			if (current) await this.db.integrations.update({ project_slug: key }, { properties: {}, active: false, updated_at: changedAt(current.updated_at) });
			await this.settingsChanged(projectId);
		},

		/**
		 * Cleans the project's cached settings, and has every worker instance forget its copy
		 * (lib/integrations/settings-cache.ts) before the write answers: an event published after
		 * it reads the new settings. Once is enough: a read racing this write can store its old
		 * answer neither in the shared cache (the project's write generation refuses it) nor in a
		 * worker's (a load under way when its copy is forgotten is not kept).
		 */
		async settingsChanged(projectId: number): Promise<void> {
			await this.cleanProjectCache(projectId);
			await this.forgetInWorkers(projectId);
		},

		/** Each running instance of each push worker (every node that offers it) drops the project's settings; bounded in time. */
		async forgetInWorkers(projectId: number): Promise<void> {
			const calls: Promise<unknown>[] = [];
			for (const worker of PUSH_GROUPS) {
				const action = `${worker}.${FORGET_SETTINGS_ACTION}`;
				const endpoints =
					(this.broker.registry.getActionEndpoints(action) as { endpoints?: { id: string; isAvailable: boolean }[] } | undefined)?.endpoints ?? [];
				for (const ep of endpoints)
					if (ep.isAvailable) calls.push(this.broker.call(action, { projectId }, { nodeID: ep.id, timeout: FORGET_TIMEOUT_MS, retries: 0 }));
			}
			const failed = (await Promise.allSettled(calls)).filter((r): r is PromiseRejectedResult => r.status === "rejected");
			// Those instances keep the old settings until their TTL (PUSH_SETTINGS_CACHE_TTL_MS).
			if (failed.length)
				this.logger.warn(`${failed.length} worker instance(s) did not forget project ${projectId}'s settings: ${reasonText(failed[0].reason)}`);
		},

		/** The spec's slug or GitLab 8.16's service name; 404 for anything else. */
		definition(slug: string): NamedIntegration {
			const named = resolveIntegration(slug);
			if (!named) throw notFound("Service");
			return named;
		},

		/**
		 * Validates and stores a PUT, merged onto the settings it read: written only if they are still
		 * those (compare-and-set on `updated_at`), else merged again onto what is there now, so a PUT
		 * never undoes a DELETE (a revocation) or another PUT that came between. A first PUT racing
		 * another one ends as an update.
		 */
		async save(
			projectId: number,
			{ def, byGitLabName }: NamedIntegration,
			input: Record<string, unknown>,
			v4?: { flags: Partial<Record<StoredFlag, boolean>> },
		): Promise<void> {
			const flags = v4?.flags ?? {};
			const version = v4 ? "v4" : "v3";
			const key = integrationKey(projectId, def.slug);
			for (let attempt = 0; ; attempt++) {
				if (attempt >= MAX_SAVE_ATTEMPTS) throw conflict("Service is being changed by another request");
				const current = await this.db.integrations.findOne({ project_slug: key });
				const { properties, secretsChanged } = mergeSettings(def, current?.properties, input, { byGitLabName, version });
				for (const name of secretsChanged) properties[name] = encryptSecret(String(properties[name]), this.secretsKey);
				const now = changedAt(current?.updated_at);
				if (current) {
					if (
						await this.db.integrations.update(
							{ id: current.id, updated_at: current.updated_at },
							{ ...flags, properties, active: true, updated_at: now },
						)
					)
						return;
					continue;
				}
				try {
					await this.db.integrations.insert({
						...flags,
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
					// Another first PUT won: merge onto it.
					if (!(err instanceof UniqueViolation)) throw err;
				}
			}
		},
	},
};

export default IntegrationsService;
