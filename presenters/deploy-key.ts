/** Deploy-key entities (docs/api.md#deploy-key-entity), pure. */

/** A deploy key as stored: one record per fingerprint, linked to projects separately. */
export interface DeployKeyDoc {
	id: number;
	title: string;
	/** The normalised key text (CR/LF removed, stripped), as shown. */
	key: string;
	/** MD5 of the key blob, colon-separated; unique in the store. */
	fingerprint: string;
	/** The user who added it first (null when unknown). */
	user_id: number | null;
	/** Admin-wide public keys (GitLab's `public` column); this service creates none. */
	public: boolean;
	created_at: string;
	updated_at: string;
}

/** A key's link to one project; `project_key` (`"<project_id>|<key_id>"`) carries the unique index. */
export interface DeployKeyLinkDoc {
	id: number;
	project_id: number;
	key_id: number;
	project_key: string;
	created_at: string;
}

/** The SSHKey entity of list, get and create: `{id, title, key, created_at}`. */
export function presentDeployKey(k: DeployKeyDoc) {
	return { id: k.id, title: k.title, key: k.key, created_at: k.created_at };
}

/** The DELETE response: the record with `updated_at`, `public`, `user_id` and `fingerprint`, in GitLab's column order. */
export function presentDeletedDeployKey(k: DeployKeyDoc) {
	return {
		id: k.id,
		user_id: k.user_id ?? null,
		created_at: k.created_at,
		updated_at: k.updated_at,
		key: k.key,
		title: k.title,
		fingerprint: k.fingerprint,
		public: !!k.public,
	};
}

export type DeployKeyEntity = ReturnType<typeof presentDeployKey>;
export type DeletedDeployKeyEntity = ReturnType<typeof presentDeletedDeployKey>;
