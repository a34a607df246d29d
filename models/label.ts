/** Labels as stored: one per project and title (docs/api.md#labels). */

export interface LabelDoc {
	id: number;
	project_id: number;
	title: string;
	/** `#RRGGBB`. */
	color: string;
	description: string | null;
	/**
	 * GitLab 8.16's label priority in its project (kept in its own table there, so not part of the
	 * delete answer's record): a whole number from 0, or null for none (absent on labels stored
	 * before it was kept).
	 */
	priority?: number | null;
	template: boolean;
	created_at: string;
	updated_at: string;
	/** labelKey(project_id, title): unique, so two racing creates make one label. */
	project_title: string;
}

export const labelKey = (projectId: number, title: string) => `${projectId}|${title}`;

export const labelsCollection = {
	indexes: [{ fields: { project_title: 1 }, unique: true }, { fields: { project_id: 1, title: 1 } }],
} as const;

/** A user's subscription to a label (API v4's subscribe and unsubscribe). */
export interface LabelSubscriptionDoc {
	id: number;
	label_id: number;
	user_id: number;
	project_id: number;
	/** subscriptionKey(label_id, user_id): unique, one subscription per user and label. */
	label_user: string;
	/** projectUserKey(project_id, user_id): a user's subscriptions in a project, for a list's `subscribed`. */
	project_user: string;
}

export const subscriptionKey = (labelId: number, userId: number) => `${labelId}|${userId}`;
export const projectUserKey = (projectId: number, userId: number) => `${projectId}|${userId}`;

export const labelSubscriptionsCollection = {
	indexes: [{ fields: { label_user: 1 }, unique: true }, { fields: { project_user: 1 } }, { fields: { label_id: 1 } }],
} as const;
