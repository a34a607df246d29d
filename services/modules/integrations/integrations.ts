/**
 * API v3's integration settings (docs/api.md#integrations): GET, PUT and DELETE
 * /projects/:id/services/:slug, master or above. Reading, saving and clearing them are the
 * service's methods, which v4's actions share.
 */
import { AccessLevel } from "../../../lib/accounts/access";
import { integrationKey } from "../../../models/integration";
import { presentIntegration } from "../../../presenters/integration";
import type { Ctx, IntegrationsModule } from "./shared";

const slugParams = { id: { type: "string" }, slug: { type: "string", max: 100 } } as const;

export const Integrations: IntegrationsModule = {
	actions: {
		show: {
			access: AccessLevel.MASTER,
			hedge: true,
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
				await this.clearSettings(projectId, def);
				return true;
			},
		},
	},
};
