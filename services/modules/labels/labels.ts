/**
 * API v3's project labels (docs/api.md#labels): addressed by name, a page only when asked for.
 * The rules both versions apply are the service's methods (services/labels.service.ts).
 */
import { AccessLevel } from "../../../lib/accounts/access";
import { notFound } from "../../../lib/api/errors";
import { PAGE_PARAMS, pageWindow, paginated, parsePage, wantsPage } from "../../../lib/api/pagination";
import { checkParamGroups, type ParamGroup } from "../../../lib/api/param-groups";
import { PRIORITY_PARAM } from "../../../lib/labels/label-rules";
import { PROJECT_CACHE_KEY } from "../../../lib/cache/write-generations";
import { presentDeletedLabel, presentLabel, presentLabelWithCounts } from "../../../presenters/label";
import { color, optionalColor, optionalText, optionalTitle, priorityParam, text, title, type Ctx, type LabelsModule } from "./shared";

/** The spec's rule (docs/api.md#decisions): an edit renames or recolours; a priority alone, like a description alone, is not an edit. */
const UPDATE_GROUPS: ParamGroup[] = [{ atLeastOneOf: ["new_name", "color"] }];

export const Labels: LabelsModule = {
	actions: {
		/** Every label of the project, by name; a page of them when the caller asks for one. */
		list: {
			access: AccessLevel.NONE,
			params: { id: "string", ...PAGE_PARAMS },
			cache: { keys: [PROJECT_CACHE_KEY, "page", "per_page"], ttl: 300 },
			async handler(ctx: Ctx<{ page?: number; per_page?: number }>) {
				const projectId = this.access(ctx).project.id;
				const query = { project_id: projectId };
				if (!wantsPage(ctx.params)) return (await this.db.labels.find(query, { sort: "title" })).map(l => presentLabelWithCounts(l));
				const page = parsePage(ctx.params);
				const [rows, total] = await this.db.labels.findPage(query, pageWindow(page), { sort: "title" });
				return paginated(
					rows.map(l => presentLabelWithCounts(l)),
					total,
					page,
				);
			},
		},

		create: {
			access: AccessLevel.REPORTER,
			params: { id: "string", name: title, color, description: optionalText, priority: PRIORITY_PARAM },
			async handler(ctx: Ctx<{ name: string; color: string; description?: string; priority?: unknown }>) {
				const { name, color, description } = ctx.params;
				const priority = priorityParam(ctx.params.priority);
				return presentLabel(await this.insertLabel(this.access(ctx).project.id, { name, color, description, priority }));
			},
		},

		update: {
			access: AccessLevel.REPORTER,
			params: { id: "string", name: text, new_name: optionalTitle, color: optionalColor, description: optionalText, priority: PRIORITY_PARAM },
			paramGroups: UPDATE_GROUPS,
			async handler(ctx: Ctx<{ name: string; new_name?: string; color?: string; description?: string; priority?: unknown }>) {
				const projectId = this.access(ctx).project.id;
				const { name, new_name, color, description } = ctx.params;
				checkParamGroups(UPDATE_GROUPS, ctx.params);
				const priority = priorityParam(ctx.params.priority);
				const label = await this.labelByTitle(projectId, name);
				if (!label) throw notFound("Label");
				return presentLabel(await this.changeLabel(projectId, label, { new_name, color, description, priority }));
			},
		},

		/** `DELETE /labels?name=` or `DELETE /labels/:name`. */
		remove: {
			access: AccessLevel.REPORTER,
			params: { id: "string", name: text },
			async handler(ctx: Ctx<{ name: string }>) {
				const projectId = this.access(ctx).project.id;
				const label = await this.labelByTitle(projectId, ctx.params.name);
				if (!label) throw notFound("Label");
				await this.deleteLabel(projectId, label);
				return presentDeletedLabel(label);
			},
		},
	},
};
