/**
 * What the integrations service's parts share: its `this`. v3's actions are integrations.ts here,
 * v4's integrations.v4.ts, the workers' internal.ts; the settings' writes are the service's methods.
 */
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import type { ApiMeta } from "../../../lib/api/context";
import type { IntegrationDef, NamedIntegration } from "../../../lib/integrations/catalogue";
import type { Collection } from "../../../lib/store/collection";
import type { CacheCleanerMethods } from "../../../mixins/cache.mixin";
import type { ProjectAccessMethods } from "../../../mixins/project-access.mixin";
import type { SecretsVars } from "../../../mixins/secrets.mixin";
import type { IntegrationDoc, StoredFlag } from "../../../models/integration";

export type Ctx<P = Record<string, unknown>> = Context<P & { id: string; slug: string }, ApiMeta>;

export interface IntegrationsMethods extends ProjectAccessMethods, CacheCleanerMethods {
	definition(slug: string): NamedIntegration;
	/** v4's PUT (GitLab's current fields) with its flags, stored with the settings; v3's without. */
	save(projectId: number, named: NamedIntegration, input: Record<string, unknown>, v4?: { flags: Partial<Record<StoredFlag, boolean>> }): Promise<void>;
	/** DELETE: every field cleared, inactive, the record kept. */
	clearSettings(projectId: number, def: IntegrationDef): Promise<void>;
	settingsChanged(projectId: number): Promise<void>;
	forgetInWorkers(projectId: number): Promise<void>;
}

export interface IntegrationsVars extends SecretsVars {
	db: { integrations: Collection<IntegrationDoc> };
}

export type IntegrationsModule = Partial<ServiceSchema<ServiceSettingSchema, IntegrationsMethods, IntegrationsVars>>;
