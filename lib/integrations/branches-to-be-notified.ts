/**
 * GitLab's `branches_to_be_notified` (docs/integrations.md#branches-to-be-notified), pure: which
 * pushes an integration that has it acts on. `all` is every branch; `default`, `protected` and
 * `default_and_protected` are the default branch alone, the one branch here that is protected
 * (GitLab protects a project's default branch when it makes it, and nothing here protects
 * another). Tag pushes are always notified, as GitLab fires them whatever the setting.
 */
import { DEFAULT_BRANCH } from "../../models/project";
import { isTagRef, refName, type PushPayload } from "../push/payload";
import type { IntegrationDef } from "./catalogue";

/** The push's default branch: the one its project names (the git server's), else this service's. */
function defaultBranchOf(push: PushPayload): string {
	const named = push.project?.default_branch;
	return typeof named === "string" && named.trim() ? named : DEFAULT_BRANCH;
}

/** Whether a push is notified under the integration's `branches_to_be_notified` (unset: its default, GitLab's; none: every branch). */
export function notifiesPush(def: IntegrationDef, properties: Record<string, unknown>, push: PushPayload): boolean {
	if (isTagRef(push.ref)) return true;
	const stored = properties.branches_to_be_notified;
	const branches = typeof stored === "string" && stored ? stored : def.fields.find(f => f.name === "branches_to_be_notified")?.default;
	return branches === undefined || branches === "all" || refName(push.ref) === defaultBranchOf(push);
}
