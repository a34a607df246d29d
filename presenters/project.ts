/** GitLab 8.x project and member entities. */
import type { ProjectDoc } from "../models/project";
import type { UserDoc } from "../models/user";
import { presentUser, presentUserBasic } from "./user";

export function presentProject(p: ProjectDoc, owner: UserDoc | null, gitlabUrl: string) {
	const webUrl = `${gitlabUrl}/${p.path_with_namespace}`;
	const host = new URL(gitlabUrl).host;
	return {
		id: p.id,
		description: p.description ?? "",
		default_branch: "master",
		tag_list: [],
		public: p.visibility_level === 20,
		archived: false,
		visibility_level: p.visibility_level,
		ssh_url_to_repo: `git@${host}:${p.path_with_namespace}.git`,
		http_url_to_repo: `${webUrl}.git`,
		web_url: webUrl,
		owner: owner ? presentUserBasic(owner, gitlabUrl) : null,
		name: p.name,
		name_with_namespace: `${owner?.name ?? p.namespace} / ${p.name}`,
		path: p.path,
		path_with_namespace: p.path_with_namespace,
		namespace: { id: p.creator_id, name: p.namespace, path: p.namespace, kind: "user" },
		issues_enabled: true,
		merge_requests_enabled: true,
		wiki_enabled: true,
		builds_enabled: true,
		snippets_enabled: true,
		public_builds: !!p.public_builds,
		created_at: p.created_at,
		last_activity_at: p.last_activity_at ?? p.created_at,
		creator_id: p.creator_id,
	};
}

export function presentMember(u: UserDoc, accessLevel: number, gitlabUrl: string) {
	return { ...presentUser(u, gitlabUrl), access_level: accessLevel };
}
