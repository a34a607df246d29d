/** API v4's deploy key entities (GitLab's SSHKey, DeployKeysProject, DeployKeyWithProjects), beside v3's; pure. */
import { sha256FingerprintOf } from "../lib/deploy-keys/ssh-key";
import type { DeployKeyDoc, DeployKeyLinkDoc } from "../models/deploy-key";

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
