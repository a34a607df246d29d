/** API v4's deploy key entities (GitLab's SSHKey, DeployKeysProject, DeployKeyWithProjects), beside v3's; pure. */
import { sha256FingerprintOf } from "../lib/deploy-keys/ssh-key";
import type { DeployKeyDoc, DeployKeyLinkDoc } from "../models/deploy-key";
import { alwaysNull, arrayOf, boolean, integer, nullable, object, propertiesOf, string, timestamp } from "./json-schema";

/** SSHKey: `POST …/enable`'s answer. */
export function presentSshKeyV4(k: DeployKeyDoc) {
	return { id: k.id, title: k.title, created_at: k.created_at, expires_at: null, key: k.key };
}

/** The key with both fingerprints (MD5 as `ssh-keygen -l -E md5` prints it, and SHA-256). */
function withFingerprints(k: DeployKeyDoc) {
	return { ...presentSshKeyV4(k), fingerprint: k.fingerprint, fingerprint_sha256: sha256FingerprintOf(k.key) };
}

/** DeployKeysProject: a project's key, with this project's write access. */
export function presentProjectDeployKeyV4(k: DeployKeyDoc, link: Pick<DeployKeyLinkDoc, "can_push">) {
	return { ...withFingerprints(k), can_push: !!link.can_push };
}

/** The instance's keys for admins: each with the projects it may push to. */
export function presentDeployKeyWithProjectsV4(k: DeployKeyDoc, projectsWithWriteAccess: unknown[]) {
	return { ...withFingerprints(k), projects_with_write_access: projectsWithWriteAccess };
}

/** The shapes above, for the API description (presenters/json-schema.ts). */
export const SSH_KEY_V4 = object({ id: integer, title: string, created_at: timestamp, expires_at: alwaysNull, key: string }, "SSHKeyV4");
const WITH_FINGERPRINTS = { ...propertiesOf(SSH_KEY_V4), fingerprint: string, fingerprint_sha256: string };
export const PROJECT_DEPLOY_KEY_V4 = object({ ...WITH_FINGERPRINTS, can_push: boolean }, "DeployKeysProjectV4");
/** A project a key may push to, as the instance's list shows it. */
const PUSHED_PROJECT = object(
	{ id: integer, description: nullable(string), name: string, name_with_namespace: string, path: string, path_with_namespace: string, created_at: timestamp },
	"ProjectIdentityV4",
);
export const DEPLOY_KEY_WITH_PROJECTS_V4 = object({ ...WITH_FINGERPRINTS, projects_with_write_access: arrayOf(PUSHED_PROJECT) }, "DeployKeyWithProjectsV4");
