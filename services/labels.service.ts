/**
 * Project labels (docs/api.md#labels): addressed by name, unique per project (a unique index, so two
 * racing creates give one label), colours stored as #RRGGBB. Reads are cached per project and
 * every write cleans exactly that project's entries.
 */
import type { Context, ServiceSchema } from "moleculer";
import { AccessLevel } from "../lib/access";
import type { ApiMeta } from "../lib/context";
import { conflict, missing, notFound, paramError, validation } from "../lib/errors";
import { labelErrors, normalizeColor } from "../lib/label-rules";
import { PAGE_PARAMS, pageWindow, paginated, parsePage, wantsPage } from "../lib/pagination";
import { CacheCleanerMixin, PROJECT_CACHE_KEY } from "../mixins/cache-cleaner.mixin";
import { DbMixin, UniqueViolation } from "../mixins/db.mixin";
import { ProjectAccessMixin } from "../mixins/project-access.mixin";
import { presentDeletedLabel, presentLabel, presentLabelWithCounts, type LabelDoc } from "../presenters/label";

type Ctx<P> = Context<P, ApiMeta>;
const text = { type: "string", max: 1024 } as const;
const optionalText = { ...text, optional: true } as const;

const LabelsService: ServiceSchema = {
	name: "labels",
	mixins: [
		DbMixin({ labels: { indexes: [{ fields: { project_title: 1 }, unique: true }, { fields: { project_id: 1, title: 1 } }] } }),
		CacheCleanerMixin(),
		ProjectAccessMixin(),
	],

	actions: {
		/** Every label of the project, by name; a page of them when the caller asks for one. */
		list: {
			params: { id: "string", ...PAGE_PARAMS },
			cache: { keys: [PROJECT_CACHE_KEY, "page", "per_page"], ttl: 300 },
			async handler(ctx: Ctx<{ page?: unknown; per_page?: unknown }>) {
				const projectId = this.access(ctx).project.id;
				if (!wantsPage(ctx.params)) {
					const labels: LabelDoc[] = await this.db.labels.find({ project_id: projectId }, { sort: "title" });
					return labels.map(l => presentLabelWithCounts(l));
				}
				const page = parsePage(ctx.params);
				const [rows, total] = await Promise.all([
					this.db.labels.find({ project_id: projectId }, { sort: "title", ...pageWindow(page) }),
					this.db.labels.count({ project_id: projectId }),
				]);
				return paginated(
					(rows as LabelDoc[]).map(l => presentLabelWithCounts(l)),
					total,
					page,
				);
			},
		},

		create: {
			params: { id: "string", name: text, color: text, description: optionalText },
			async handler(ctx: Ctx<{ name: string; color: string; description?: string }>) {
				const projectId = this.requireLevel(ctx, AccessLevel.REPORTER).project.id;
				const { name, color, description } = ctx.params;
				const titleInvalid = labelErrors({ title: name });
				if (titleInvalid) throw validation(titleInvalid);
				// GitLab answers a duplicate before it looks at the colour.
				if (await this.db.labels.findOne({ project_title: `${projectId}|${name}` })) throw conflict("Label already exists");
				const normalized = normalizeColor(color);
				if (!normalized) throw validation({ color: ["must be a valid color code"] });
				const now = new Date().toISOString();
				try {
					const label: LabelDoc = await this.db.labels.insert({
						project_id: projectId,
						title: name,
						color: normalized,
						description: description ?? null,
						template: false,
						created_at: now,
						updated_at: now,
						project_title: `${projectId}|${name}`,
					});
					await this.cleanProjectCache(projectId);
					return presentLabel(label);
				} catch (err) {
					if (err instanceof UniqueViolation) throw conflict("Label already exists");
					throw err;
				}
			},
		},

		update: {
			params: { id: "string", name: text, new_name: optionalText, color: optionalText, description: optionalText },
			async handler(ctx: Ctx<{ name: string; new_name?: string; color?: string; description?: string }>) {
				const projectId = this.requireLevel(ctx, AccessLevel.REPORTER).project.id;
				const { name, new_name, color, description } = ctx.params;
				if (new_name === undefined && color === undefined) throw paramError("new_name, color are missing, at least one parameter must be provided");
				const label: LabelDoc | null = await this.db.labels.findOne({ project_title: `${projectId}|${name}` });
				if (!label) throw notFound("Label");
				const invalid = labelErrors({ title: new_name, color });
				if (invalid) throw validation(invalid);
				const set: Partial<LabelDoc> = { updated_at: new Date().toISOString() };
				if (new_name !== undefined) Object.assign(set, { title: new_name, project_title: `${projectId}|${new_name}` });
				if (color !== undefined) set.color = normalizeColor(color)!;
				if (description !== undefined) set.description = description;
				try {
					const updated: LabelDoc | null = await this.db.labels.updateOne({ id: label.id }, set);
					if (!updated) throw notFound("Label");
					await this.cleanProjectCache(projectId);
					return presentLabel(updated);
				} catch (err) {
					if (err instanceof UniqueViolation) throw validation({ title: ["has already been taken"] });
					throw err;
				}
			},
		},

		/** `DELETE /labels?name=` or `DELETE /labels/:name`. */
		remove: {
			params: { id: "string", name: optionalText },
			async handler(ctx: Ctx<{ name?: string }>) {
				const projectId = this.requireLevel(ctx, AccessLevel.REPORTER).project.id;
				if (ctx.params.name === undefined) throw missing("name");
				const label: LabelDoc | null = await this.db.labels.findOne({ project_title: `${projectId}|${ctx.params.name}` });
				if (!label || !(await this.db.labels.remove({ id: label.id }))) throw notFound("Label");
				await this.cleanProjectCache(projectId);
				return presentDeletedLabel(label);
			},
		},
	},
};

export default LabelsService;
