/** Deploy keys as stored: one record per fingerprint, linked to the projects that use it. */

export interface DeployKeyDoc {
	id: number;
	title: string;
	/** The normalised key text (CR/LF removed, stripped), as shown. */
	key: string;
	/** MD5 of the key blob, colon-separated; unique in the store. */
	fingerprint: string;
	/** The user who added it first (null when unknown). */
	user_id: number | null;
	/**
	 * The project it was added to first: until that project's link is made, only callers who can
	 * reach that project may join the key (absent on keys stored before it was kept).
	 */
	created_for_project_id?: number;
	/** Admin-wide public keys (GitLab's `public` column); this service creates none. */
	public: boolean;
	created_at: string;
	updated_at: string;
	/** Bumped by every confirmed link: a key is only removed at the version its remover saw. */
	lock_version: number;
}

/** A key's link to one project. */
export interface DeployKeyLinkDoc {
	id: number;
	project_id: number;
	key_id: number;
	/** keyLinkKey(project_id, key_id): unique, a project links a key once. */
	project_key: string;
	created_at: string;
	/** v4's write access for this project (absent on links made before it was kept: none). */
	can_push?: boolean;
	/** Its last change (v4's PUT of `can_push`), for v4's conditional DELETE. */
	updated_at?: string;
}

export const keyLinkKey = (projectId: number, keyId: number) => `${projectId}|${keyId}`;

export const deployKeysCollection = { indexes: [{ fields: { fingerprint: 1 }, unique: true }] } as const;

export const deployKeyLinksCollection = {
	indexes: [{ fields: { project_key: 1 }, unique: true }, { fields: { key_id: 1 } }, { fields: { project_id: 1 } }],
} as const;
