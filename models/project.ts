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
}

export const memberKey = (projectId: number, userId: number) => `${projectId}|${userId}`;

export const projectsCollection = {
	indexes: [
		{ fields: { path_key: 1 }, unique: true },
		{ fields: { name_key: 1 }, unique: true },
	],
} as const;

export const membersCollection = { indexes: [{ fields: { member_key: 1 }, unique: true }, { fields: { project_id: 1 } }] } as const;
