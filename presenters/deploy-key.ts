/** Deploy-key entities (docs/api.md#deploy-key-entity), pure. */
import type { DeployKeyDoc } from "../models/deploy-key";
import { boolean, integer, nullable, object, string, timestamp } from "./json-schema";

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

/** The shapes above, for the API description (presenters/json-schema.ts). */
export const DEPLOY_KEY = object({ id: integer, title: string, key: string, created_at: timestamp }, "DeployKey");
export const DELETED_DEPLOY_KEY = object(
	{
		id: integer,
		user_id: nullable(integer),
		created_at: timestamp,
		updated_at: timestamp,
		key: string,
		title: string,
		fingerprint: string,
		public: boolean,
	},
	"DeletedDeployKey",
);
