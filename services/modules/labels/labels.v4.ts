/**
 * API v4's project labels (docs/api.md#v4-labels): the same labels, addressed by id or title,
 * always paginated, with the caller's subscriptions (`subscribe`/`unsubscribe`, 304 when nothing
 * changes), priority in an edit of its own, 201 on create, 204 on delete (If-Unmodified-Since);
 * the deprecated name-addressed PUT and DELETE on /labels keep working.
 */
import { AccessLevel } from "../../../lib/accounts/access";
import { BOOLEAN_PARAM, isTrue } from "../../../lib/api/booleans";
import { checkUnmodifiedSince } from "../../../lib/api/conditional";
import { notFound } from "../../../lib/api/errors";
import { checkParamGroups, type ParamGroup } from "../../../lib/api/param-groups";
import { PAGE_PARAMS, pageWindow, paginated, parsePage } from "../../../lib/api/pagination";
import { PRIORITY_PARAM } from "../../../lib/labels/label-rules";
import { labelSearch, MAX_LABEL_SEARCH } from "../../../lib/labels/label-search";
import { UniqueViolation } from "../../../lib/store/collection";
import { PROJECT_CACHE_KEY } from "../../../lib/cache/write-generations";
import { projectUserKey, subscriptionKey, type LabelDoc } from "../../../models/label";
import { presentLabelV4 } from "../../../presenters/label.v4";
import { color, optionalColor, optionalText, optionalTitle, priorityParam, text, title, type Ctx, type LabelsModule } from "./shared";

/** The label a request names: the path's `label_id`, or the deprecated forms' body `label_id` or `name`, exactly one of them. */
const LABEL_REF = { label_id: optionalText, name: optionalText } as const;
const LABEL_REF_GROUPS: ParamGroup[] = [{ exactlyOneOf: ["label_id", "name"] }];
/** v4's edits need one of these too (Grape's `at_least_one_of`). */
const EDIT_GROUPS: ParamGroup[] = [...LABEL_REF_GROUPS, { atLeastOneOf: ["new_name", "color", "description", "priority"] }];
type LabelRef = { label_id?: string; name?: string };
type EditParams = LabelRef & { new_name?: string; color?: string; description?: string; priority?: unknown };

/** The label a request names, as GitLab reads it, once `groups` are checked. */
function labelRef(params: LabelRef, groups: ParamGroup[]): string {
	checkParamGroups(groups, params);
	return (params.label_id ?? params.name)!;
}

/** Not modified: no body (subscribe when subscribed, unsubscribe when not). */
function notModified(ctx: Ctx<unknown>): null {
	ctx.meta.$statusCode = 304;
	return null;
}

export const LabelsV4: LabelsModule = {
	actions: {
		/** A page of the project's labels by title; `search` narrows it (lib/labels/label-search.ts). */
		listV4: {
			access: AccessLevel.NONE,
			auth: "optional",
			params: {
				id: "string",
				search: { type: "string", optional: true, max: MAX_LABEL_SEARCH },
				with_counts: BOOLEAN_PARAM,
				// Accepted as GitLab declares it; a project here belongs to no group, so it changes nothing.
				include_ancestor_groups: BOOLEAN_PARAM,
				...PAGE_PARAMS,
			},
			cache: { keys: [PROJECT_CACHE_KEY, "#user.id", "search", "with_counts", "page", "per_page"], ttl: 300 },
			async handler(ctx: Ctx<{ search?: string; with_counts?: unknown; page?: number; per_page?: number }>) {
				const projectId = this.access(ctx).project.id;
				const found = labelSearch(ctx.params.search);
				const query = found ? { $and: [{ project_id: projectId }, found] } : { project_id: projectId };
				const page = parsePage(ctx.params);
				const [[rows, total], subscribed] = await Promise.all([
					this.db.labels.findPage(query, pageWindow(page), { sort: "title" }),
					this.subscribedLabels(ctx, projectId),
				]);
				const counts = isTrue(ctx.params.with_counts) ? { open_issues_count: 0, closed_issues_count: 0, open_merge_requests_count: 0 } : undefined;
				return paginated(
					rows.map(l => presentLabelV4(l, subscribed.has(l.id), counts)),
					total,
					page,
				);
			},
		},

		getV4: {
			access: AccessLevel.NONE,
			auth: "optional",
			params: { id: "string", label_id: text, include_ancestor_groups: BOOLEAN_PARAM },
			cache: { keys: [PROJECT_CACHE_KEY, "#user.id", "label_id"], ttl: 300 },
			async handler(ctx: Ctx<{ label_id: string }>) {
				const label = await this.labelOf(ctx, ctx.params.label_id);
				return presentLabelV4(label, await this.isSubscribed(ctx, label));
			},
		},

		createV4: {
			access: AccessLevel.REPORTER,
			params: { id: "string", name: title, color, description: optionalText, priority: PRIORITY_PARAM },
			async handler(ctx: Ctx<{ name: string; color: string; description?: string; priority?: unknown }>) {
				const { name, color, description } = ctx.params;
				const priority = priorityParam(ctx.params.priority);
				const label = await this.insertLabel(this.access(ctx).project.id, { name, color, description, priority });
				ctx.meta.$statusCode = 201;
				return presentLabelV4(label, false);
			},
		},

		/** `PUT /labels/:label_id`, and the deprecated `PUT /labels` with `label_id` or `name`; a priority alone is an edit. */
		updateV4: {
			access: AccessLevel.REPORTER,
			params: { id: "string", ...LABEL_REF, new_name: optionalTitle, color: optionalColor, description: optionalText, priority: PRIORITY_PARAM },
			paramGroups: EDIT_GROUPS,
			async handler(ctx: Ctx<EditParams>) {
				const ref = labelRef(ctx.params, EDIT_GROUPS);
				const priority = priorityParam(ctx.params.priority);
				const { new_name, color, description } = ctx.params;
				const label = await this.labelOf(ctx, ref);
				const changed = await this.changeLabel(label.project_id, label, { new_name, color, description, priority });
				return presentLabelV4(changed, await this.isSubscribed(ctx, changed));
			},
		},

		/** `DELETE /labels/:label_id`, and the deprecated `DELETE /labels` with `label_id` or `name`: 204. */
		removeV4: {
			access: AccessLevel.REPORTER,
			params: { id: "string", ...LABEL_REF },
			paramGroups: LABEL_REF_GROUPS,
			async handler(ctx: Ctx<LabelRef>) {
				const label = await this.labelOf(ctx, labelRef(ctx.params, LABEL_REF_GROUPS));
				checkUnmodifiedSince(ctx.meta, label.updated_at);
				await this.deleteLabel(label.project_id, label);
				ctx.meta.$statusCode = 204;
				return null;
			},
		},

		/** Any reader: 201 with the label, or 304 when the caller is subscribed already. */
		subscribe: {
			access: AccessLevel.NONE,
			params: { id: "string", label_id: text },
			async handler(ctx: Ctx<{ label_id: string }>) {
				const label = await this.labelOf(ctx, ctx.params.label_id);
				const userId = ctx.meta.user!.id;
				try {
					await this.db.label_subscriptions.insert({
						label_id: label.id,
						user_id: userId,
						project_id: label.project_id,
						label_user: subscriptionKey(label.id, userId),
						project_user: projectUserKey(label.project_id, userId),
					});
				} catch (err) {
					if (err instanceof UniqueViolation) return notModified(ctx);
					throw err;
				}
				await this.cleanProjectCache(label.project_id);
				ctx.meta.$statusCode = 201;
				return presentLabelV4(label, true);
			},
		},

		/** Any reader: 201 with the label, or 304 when the caller was not subscribed. */
		unsubscribe: {
			access: AccessLevel.NONE,
			params: { id: "string", label_id: text },
			async handler(ctx: Ctx<{ label_id: string }>) {
				const label = await this.labelOf(ctx, ctx.params.label_id);
				if (!(await this.db.label_subscriptions.remove({ label_user: subscriptionKey(label.id, ctx.meta.user!.id) }))) return notModified(ctx);
				await this.cleanProjectCache(label.project_id);
				ctx.meta.$statusCode = 201;
				return presentLabelV4(label, false);
			},
		},
	},

	methods: {
		/** The project's label with this id, else with this title (GitLab's `find_label`); 404 `Label Not Found`. */
		async labelOf(ctx: Ctx<unknown>, ref: string): Promise<LabelDoc> {
			const projectId = this.access(ctx).project.id;
			const byId = /^\d{1,15}$/.test(ref) ? await this.db.labels.findOne({ id: Number(ref), project_id: projectId }) : null;
			const label = byId ?? (await this.labelByTitle(projectId, ref));
			if (!label) throw notFound("Label");
			return label;
		},

		/** The ids of the labels of a project the caller is subscribed to. */
		async subscribedLabels(ctx: Ctx<unknown>, projectId: number): Promise<Set<number>> {
			const user = ctx.meta.user;
			if (!user) return new Set();
			return new Set((await this.db.label_subscriptions.find({ project_user: projectUserKey(projectId, user.id) })).map(s => s.label_id));
		},

		async isSubscribed(ctx: Ctx<unknown>, label: LabelDoc): Promise<boolean> {
			const user = ctx.meta.user;
			return !!user && !!(await this.db.label_subscriptions.findOne({ label_user: subscriptionKey(label.id, user.id) }));
		},
	},
};
