/**
 * What the labels service's parts share: its `this` (the collections and the label rules every
 * version applies). v3's actions are labels.ts here, v4's labels.v4.ts; the rules are services/labels.service.ts.
 */
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import type { ApiMeta } from "../../../lib/api/context";
import { paramError } from "../../../lib/api/errors";
import { COLOR_DOC, labelPriority, TITLE_DOC } from "../../../lib/labels/label-rules";
import type { Collection } from "../../../lib/store/collection";
import type { CacheCleanerMethods } from "../../../mixins/cache.mixin";
import type { ProjectAccessMethods } from "../../../mixins/project-access.mixin";
import type { LabelDoc, LabelSubscriptionDoc } from "../../../models/label";

export type Ctx<P = Record<string, unknown>> = Context<P, ApiMeta>;

/** Names, colours and descriptions as both versions declare them. */
export const text = { type: "string", max: 1024 } as const;
export const optionalText = { ...text, optional: true } as const;
/** A new title and colour: the model's rules (lib/labels/label-rules.ts) stated in the API description. */
export const title = { ...text, openapi: TITLE_DOC } as const;
export const optionalTitle = { ...title, optional: true } as const;
export const color = { ...text, openapi: COLOR_DOC } as const;
export const optionalColor = { ...color, optional: true } as const;

/** The priority a create or edit was sent (lib/labels/label-rules.ts): undefined when none, null to clear it. */
export function priorityParam(raw: unknown): number | null | undefined {
	const priority = labelPriority(raw);
	if (priority === "invalid") throw paramError("priority is invalid");
	return priority;
}

export interface LabelsVars {
	db: { labels: Collection<LabelDoc>; label_subscriptions: Collection<LabelSubscriptionDoc> };
}

/** A label's new fields, as a create sends them (already read from the parameters). */
export interface NewLabel {
	name: string;
	color: string;
	description?: string;
	priority?: number | null;
}

/** An edit's fields: undefined leaves a field as it is; a null priority clears it. */
export interface LabelChanges {
	new_name?: string;
	color?: string;
	description?: string;
	priority?: number | null;
}

export interface LabelsMethods extends ProjectAccessMethods, CacheCleanerMethods {
	labelByTitle(projectId: number, title: string): Promise<LabelDoc | null>;
	insertLabel(projectId: number, fields: NewLabel): Promise<LabelDoc>;
	changeLabel(projectId: number, label: LabelDoc, changes: LabelChanges): Promise<LabelDoc>;
	deleteLabel(projectId: number, label: LabelDoc): Promise<void>;
	// v4's (services/modules/labels/labels.v4.ts):
	labelOf(ctx: Ctx<unknown>, ref: string): Promise<LabelDoc>;
	subscribedLabels(ctx: Ctx<unknown>, projectId: number): Promise<Set<number>>;
	isSubscribed(ctx: Ctx<unknown>, label: LabelDoc): Promise<boolean>;
}

export type LabelsModule = Partial<ServiceSchema<ServiceSettingSchema, LabelsMethods, LabelsVars>>;
