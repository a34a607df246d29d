/**
 * A push worker's integration settings (mixins/push-worker.mixin.ts): read from `integrations`
 * with the secrets decrypted here, kept per project, and forgotten at once when `integrations`
 * announces a change (docs/architecture.md#settings-cache).
 */
import type { ServiceSchema, ServiceSettingSchema } from "moleculer";
import { config } from "../config";
import { decryptSecret, isEncrypted } from "../lib/crypto/secrets";
import { serviceModule } from "../lib/moleculer/service-module";
import { SecretsMixin, type SecretsVars } from "./secrets.mixin";
import { findIntegration, isSecret } from "../lib/integrations/catalogue";
import { changedProject, FORGET_SETTINGS_ACTION, KNOWS_WORKER_ACTION } from "../lib/integrations/settings-cache";
import { ProjectCache } from "../lib/cache/project-cache";

export interface IntegrationSettings {
	active: boolean;
	properties: Record<string, unknown>;
	[flag: string]: unknown;
}

/** What the mixin keeps on the worker instance. */
interface PushSettingsVars extends SecretsVars {
	settingsCache: ProjectCache<IntegrationSettings | null>;
	settingsReachable?: boolean;
	settingsReachableCheck?: Promise<void> | null;
	settingsReachableNext?: number;
}

export interface PushSettingsMethods {
	loadSettings(projectId: number): Promise<IntegrationSettings | null>;
	checkReachable(): Promise<void>;
	fetchSettings(projectId: number): Promise<IntegrationSettings | null>;
}

/** How often a worker asks whether `integrations` can reach it yet (it keeps no settings until then). */
const REACHABLE_CHECK_MS = 1000;

export function PushSettingsMixin(slug: string): Partial<ServiceSchema> {
	const def = findIntegration(slug)!;
	const schema: Partial<ServiceSchema<ServiceSettingSchema, PushSettingsMethods, PushSettingsVars>> = {
		mixins: [SecretsMixin()],
		actions: {
			/** `integrations` changed a project's settings: read them again (lib/integrations/settings-cache.ts). Called on each instance. */
			[FORGET_SETTINGS_ACTION]: {
				visibility: "public",
				params: { projectId: { type: "number", integer: true, positive: true } },
				handler(ctx: { params: unknown }) {
					const projectId = changedProject(ctx.params);
					if (projectId !== null) this.settingsCache.invalidate(projectId);
					return true;
				},
			},
		},

		created() {
			this.settingsCache = new ProjectCache<IntegrationSettings | null>({
				ttlMs: config.pushSettingsCacheTtlMs,
				maxEntries: config.pushSettingsCacheMaxEntries,
			});
		},

		methods: {
			/** The project's settings for this integration with secrets in clear, or null; kept a while (see settings-cache.ts). */
			loadSettings(projectId: number): Promise<IntegrationSettings | null> {
				// Until every `integrations` node can reach this instance, a change could miss it: no keeping yet.
				if (!this.settingsReachable) {
					void this.checkReachable();
					return this.fetchSettings(projectId);
				}
				return this.settingsCache.get(projectId, () => this.fetchSettings(projectId));
			},

			/**
			 * Whether every `integrations` node has discovered this instance's forget action (a new node
			 * is discovered a moment after it starts consuming). Asked at most every REACHABLE_CHECK_MS.
			 */
			checkReachable(): Promise<void> {
				try {
					if (this.settingsReachableCheck || Date.now() < (this.settingsReachableNext ?? 0)) return Promise.resolve();
					this.settingsReachableNext = Date.now() + REACHABLE_CHECK_MS;
					const action = `${this.name}.${FORGET_SETTINGS_ACTION}`;
					const endpoints = this.broker.registry.getActionEndpoints(KNOWS_WORKER_ACTION) as { endpoints?: { id: string }[] } | undefined;
					const nodes = (endpoints?.endpoints ?? []).map(ep => ep.id);
					this.settingsReachableCheck = Promise.all(
						nodes.map(nodeID => this.broker.call(KNOWS_WORKER_ACTION, { action }, { nodeID, timeout: REACHABLE_CHECK_MS, retries: 0 })),
					)
						.then(answers => {
							if (answers.length > 0 && answers.every(Boolean)) this.settingsReachable = true;
						})
						.catch(() => undefined)
						.finally(() => (this.settingsReachableCheck = null));
					return Promise.resolve();
				} catch (err) {
					// As from an async function: the caller gets a rejected promise, never a throw.
					return Promise.reject(err as Error);
				}
			},

			async fetchSettings(projectId: number): Promise<IntegrationSettings | null> {
				const doc: IntegrationSettings | null = await this.broker.call("integrations.settingsFor", { projectKey: String(projectId), slug });
				if (!doc) return null;
				const properties: Record<string, unknown> = { ...doc.properties };
				for (const f of def.fields)
					if (isSecret(f) && isEncrypted(properties[f.name])) properties[f.name] = decryptSecret(String(properties[f.name]), this.secretsKey);
				return { ...doc, properties };
			},
		},
	};
	return serviceModule(schema);
}
