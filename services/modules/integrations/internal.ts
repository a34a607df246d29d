/**
 * What the push workers ask the integrations service (not routed): a project's stored settings,
 * and whether this node knows the asking worker's forget action, so that it may keep them a while.
 */
import type { Context } from "moleculer";
import { findIntegration } from "../../../lib/integrations/catalogue";
import { FORGET_SETTINGS_ACTION, KNOWS_WORKER_ACTION } from "../../../lib/integrations/settings-cache";
import { integrationKey, type IntegrationDoc } from "../../../models/integration";
import type { IntegrationsModule } from "./shared";

export const InternalIntegrations: IntegrationsModule = {
	actions: {
		/** Internal, for the workers: whether this node has discovered the calling node's forget action (then it may keep settings). */
		[KNOWS_WORKER_ACTION.slice("integrations.".length)]: {
			visibility: "public",
			params: { action: { type: "string", max: 200 } },
			handler(ctx: Context<{ action: string }>): boolean {
				if (!ctx.params.action.endsWith(`.${FORGET_SETTINGS_ACTION}`)) return false;
				const list = this.broker.registry.getActionEndpoints(ctx.params.action) as { endpoints?: { id: string; isAvailable: boolean }[] } | undefined;
				const endpoints = list?.endpoints ?? [];
				return endpoints.some(ep => ep.id === ctx.nodeID && ep.isAvailable);
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
};
