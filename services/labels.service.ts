/**
 * Project labels (docs/api.md#labels): addressed by name in v3, by id or name in v4
 * (services/modules/labels/labels.v4.ts), unique per project (a unique index, so two racing
 * creates give one label), colours stored as #RRGGBB. Reads are cached per project and every
 * write cleans exactly that project's entries. The rules both versions apply are the methods here.
 */
import type { ServiceSchema, ServiceSettingSchema } from "moleculer";
import { AccessLevel } from "../lib/accounts/access";
import { conflict, notFound, validation } from "../lib/api/errors";
import { PAGE_PARAMS, pageWindow, paginated, parsePage, wantsPage } from "../lib/api/pagination";
import { checkParamGroups, type ParamGroup } from "../lib/api/param-groups";
import { checkLabel, PRIORITY_PARAM } from "../lib/labels/label-rules";
import { UniqueViolation } from "../lib/store/collection";
import { CacheCleanerMixin, PROJECT_CACHE_KEY } from "../mixins/cache-cleaner.mixin";
import { DbMixin } from "../mixins/db.mixin";
import { ProjectAccessMixin } from "../mixins/project-access.mixin";
import { labelKey, labelsCollection, labelSubscriptionsCollection, type LabelDoc } from "../models/label";
import { presentDeletedLabel, presentLabel, presentLabelWithCounts } from "../presenters/label";
import { LabelsV4 } from "./modules/labels/labels.v4";
import {
	color,
	optionalColor,
	optionalText,
	optionalTitle,
	priorityParam,
	text,
	title,
	type Ctx,
	type LabelChanges,
	type LabelsMethods,
	type LabelsVars,
	type NewLabel,
} from "./modules/labels/shared";

/** The spec's rule (docs/api.md#decisions): an edit renames or recolours; a priority alone, like a description alone, is not an edit. */
const UPDATE_GROUPS: ParamGroup[] = [{ atLeastOneOf: ["new_name", "color"] }];

const LabelsService: ServiceSchema<ServiceSettingSchema, LabelsMethods, LabelsVars> = {
	name: "labels",
	mixins: [
		DbMixin({ labels: labelsCollection, label_subscriptions: labelSubscriptionsCollection }),
		CacheCleanerMixin(),
		ProjectAccessMixin(),
		LabelsV4 as unknown as Partial<ServiceSchema>,
	],

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

	methods: {
		labelByTitle(projectId: number, title: string): Promise<LabelDoc | null> {
			return this.db.labels.findOne({ project_title: labelKey(projectId, title) });
		},

		/** A new label: its name checked, then taken or not (409), then its colour, as GitLab orders them. */
		async insertLabel(projectId: number, { name, color, description, priority }: NewLabel): Promise<LabelDoc> {
			const titleCheck = checkLabel({ title: name });
			if (titleCheck.errors) throw validation(titleCheck.errors);
			// GitLab answers a duplicate before it looks at the colour.
			if (await this.labelByTitle(projectId, name)) throw conflict("Label already exists");
			const colorCheck = checkLabel({ color });
			if (colorCheck.errors) throw validation(colorCheck.errors);
			const now = new Date().toISOString();
			try {
				const label = await this.db.labels.insert({
					project_id: projectId,
					title: name,
					color: colorCheck.color!,
					description: description ?? null,
					priority: priority ?? null,
					template: false,
					created_at: now,
					updated_at: now,
					project_title: labelKey(projectId, name),
				});
				await this.cleanProjectCache(projectId);
				return label;
			} catch (err) {
				if (err instanceof UniqueViolation) throw conflict("Label already exists");
				throw err;
			}
		},

		/** An edit of a label as it was found (a rename that came between makes this one a 404, not a second rename). */
		async changeLabel(projectId: number, label: LabelDoc, { new_name, color, description, priority }: LabelChanges): Promise<LabelDoc> {
			const checked = checkLabel({ title: new_name, color });
			if (checked.errors) throw validation(checked.errors);
			const set: Partial<LabelDoc> = { updated_at: new Date().toISOString() };
			if (new_name !== undefined) Object.assign(set, { title: new_name, project_title: labelKey(projectId, new_name) });
			if (checked.color !== undefined) set.color = checked.color;
			if (description !== undefined) set.description = description;
			if (priority !== undefined) set.priority = priority;
			try {
				// Still under the name it was found by.
				const updated = await this.db.labels.updateOne({ id: label.id, project_title: label.project_title }, set);
				if (!updated) throw notFound("Label");
				await this.cleanProjectCache(projectId);
				return updated;
			} catch (err) {
				if (err instanceof UniqueViolation) throw validation({ title: ["has already been taken"] });
				throw err;
			}
		},

		/** Removes a label and the subscriptions to it; a label already gone is a 404. */
		async deleteLabel(projectId: number, label: LabelDoc): Promise<void> {
			if (!(await this.db.labels.remove({ id: label.id }))) throw notFound("Label");
			await this.db.label_subscriptions.remove({ label_id: label.id });
			await this.cleanProjectCache(projectId);
		},
	},
};

export default LabelsService;
