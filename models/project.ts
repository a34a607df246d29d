/** Projects and their members as stored. */

export interface ProjectDoc {
	id: number;
	name: string;
	path: string;
	/** The creator's username. */
	namespace: string;
	path_with_namespace: string;
	description: string | null;
	visibility_level: number;
	public_builds: boolean;
	creator_id: number;
	created_at: string;
	last_activity_at?: string;
	/** Lower-case `namespace/path` and `namespace/name`: unique, as GitLab's routes are. */
	path_key?: string;
	name_key?: string;
}

export interface MemberDoc {
	id: number;
	project_id: number;
	user_id: number;
	access_level: number;
	/** memberKey(project_id, user_id): unique, one membership per user and project. */
	member_key: string;
	created_at: string;
	/** Its last change of level (absent: never changed), for v4's conditional DELETE. */
	updated_at?: string;
}

/**
 * The branch every project here names as its default (`default_branch`): there is no repository to
 * have another, and what a ref-less request means (v4's `GET /pipelines/latest`).
 */
export const DEFAULT_BRANCH = "master";

export const memberKey = (projectId: number, userId: number) => `${projectId}|${userId}`;

/**
 * Besides the unique routes: the projects lists' filters (a creator's own, the public and internal
 * ones) and their default order (newest first).
 */
export const projectsCollection = {
	indexes: [
		{ fields: { path_key: 1 }, unique: true },
		{ fields: { name_key: 1 }, unique: true },
		{ fields: { creator_id: 1, created_at: -1 } },
		{ fields: { visibility_level: 1, created_at: -1 } },
		{ fields: { created_at: -1 } },
	],
} as const;

/** By project (a project's members) and by user (the projects a user is a member of). */
export const membersCollection = {
	indexes: [{ fields: { member_key: 1 }, unique: true }, { fields: { project_id: 1 } }, { fields: { user_id: 1 } }],
} as const;
