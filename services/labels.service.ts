/**
 * Project labels (docs/api.md#labels): addressed by name in v3, by id or name in v4
 * (services/modules/labels/labels.v4.ts), unique per project (a unique index, so two racing
 * creates give one label), colours stored as #RRGGBB. Reads are cached per project and every
 * write cleans exactly that project's entries. The rules both versions apply are the methods here.
 */
import type { ServiceSchema, ServiceSettingSchema } from "moleculer";
import { conflict, notFound, validation } from "../lib/api/errors";
import { checkLabel } from "../lib/labels/label-rules";
import { UniqueViolation } from "../lib/store/collection";
import { serviceModule } from "../lib/moleculer/service-module";
import { CacheCleanerMixin } from "../mixins/cache.mixin";
import { DbMixin } from "../mixins/db.mixin";
import { ProjectAccessMixin } from "../mixins/project-access.mixin";
import { labelKey, labelsCollection, labelSubscriptionsCollection, type LabelDoc } from "../models/label";
import { Labels } from "./modules/labels/labels";
import { LabelsV4 } from "./modules/labels/labels.v4";
import { type LabelChanges, type LabelsMethods, type LabelsVars, type NewLabel } from "./modules/labels/shared";

const LabelsService: ServiceSchema<ServiceSettingSchema, LabelsMethods, LabelsVars> = {
	name: "labels",
	mixins: [
		DbMixin({ labels: labelsCollection, label_subscriptions: labelSubscriptionsCollection }),
		CacheCleanerMixin(),
		ProjectAccessMixin(),
		serviceModule(Labels),
		serviceModule(LabelsV4),
	],

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
