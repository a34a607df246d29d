/** GitLab 8.16 project and member entities (lib/api/entities.rb: Project, ProjectWithAccess, BasicProjectDetails, Member). */
import { DEFAULT_BRANCH, type ProjectDoc } from "../models/project";
import type { UserDoc } from "../models/user";
import { alwaysNull, arrayOf, boolean, integer, nullable, object, propertiesOf, string, timestamp } from "./json-schema";
import { presentUserBasic, USER_BASIC } from "./user";

/** GitLab's notification level of a membership no one has changed: `global` (NotificationSetting.levels). */
const GLOBAL_NOTIFICATION_LEVEL = 3;

export const webUrlOf = (p: ProjectDoc, gitlabUrl: string) => `${gitlabUrl}/${p.path_with_namespace}`;

/** BasicProjectDetails: what `simple=true` lists. */
export function presentBasicProject(p: ProjectDoc, owner: UserDoc | null, gitlabUrl: string) {
	const webUrl = webUrlOf(p, gitlabUrl);
	return {
		id: p.id,
		http_url_to_repo: `${webUrl}.git`,
		web_url: webUrl,
		name: p.name,
		name_with_namespace: `${owner?.name ?? p.namespace} / ${p.name}`,
		path: p.path,
		path_with_namespace: p.path_with_namespace,
	};
}

/**
 * The Project entity, field by field as GitLab 8.16 has it. What this service does not have is
 * shown as a GitLab project without it shows it: no registry, LFS, avatar, stars, forks, issues,
 * shared groups, merge rules or archiving; shared runners on (GitLab's default).
 */
export function presentProject(p: ProjectDoc, owner: UserDoc | null, gitlabUrl: string) {
	const webUrl = webUrlOf(p, gitlabUrl);
	const host = new URL(gitlabUrl).host;
	return {
		id: p.id,
		description: p.description ?? "",
		default_branch: DEFAULT_BRANCH,
		tag_list: [] as string[],
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
		container_registry_enabled: false,
		issues_enabled: true,
		merge_requests_enabled: true,
		wiki_enabled: true,
		builds_enabled: true,
		snippets_enabled: true,
		created_at: p.created_at,
		last_activity_at: p.last_activity_at ?? p.created_at,
		shared_runners_enabled: true,
		lfs_enabled: false,
		creator_id: p.creator_id,
		namespace: { id: p.creator_id, name: p.namespace, path: p.namespace, kind: "user" },
		avatar_url: null,
		star_count: 0,
		forks_count: 0,
		open_issues_count: 0,
		public_builds: !!p.public_builds,
		shared_with_groups: [] as unknown[],
		only_allow_merge_if_build_succeeds: false,
		request_access_enabled: false,
		only_allow_merge_if_all_discussions_are_resolved: false,
		approvals_before_merge: 0,
	};
}

/**
 * ProjectWithAccess (`GET /projects/:id` and the projects lists): the Project with the caller's
 * `permissions`. `project_access` is the caller's own membership (null when not a member, admins
 * included); `group_access` is null, as projects here belong to users, not groups.
 */
export function presentProjectWithAccess(p: ProjectDoc, owner: UserDoc | null, gitlabUrl: string, memberLevel: number | null) {
	return { ...presentProject(p, owner, gitlabUrl), permissions: presentPermissions(memberLevel) };
}

/** ProjectWithAccess's `permissions`, alike in v3 and v4 (presenters/project.v4.ts). */
export function presentPermissions(memberLevel: number | null) {
	return {
		project_access: memberLevel ? { access_level: memberLevel, notification_level: GLOBAL_NOTIFICATION_LEVEL } : null,
		group_access: null,
	};
}

/** The Member entity: UserBasic with the membership's `access_level` and `expires_at` (memberships do not expire here: null). */
export function presentMember(u: UserDoc, accessLevel: number, gitlabUrl: string, expiresAt: string | null = null) {
	return { ...presentUserBasic(u, gitlabUrl), access_level: accessLevel, expires_at: expiresAt };
}

/** The shapes above, for the API description (presenters/json-schema.ts). */
export const BASIC_PROJECT = object(
	{ id: integer, http_url_to_repo: string, web_url: string, name: string, name_with_namespace: string, path: string, path_with_namespace: string },
	"BasicProject",
);
export const PROJECT = object(
	{
		id: integer,
		description: string,
		default_branch: string,
		tag_list: arrayOf(string),
		public: boolean,
		archived: boolean,
		visibility_level: integer,
		ssh_url_to_repo: string,
		http_url_to_repo: string,
		web_url: string,
		owner: nullable(USER_BASIC),
		name: string,
		name_with_namespace: string,
		path: string,
		path_with_namespace: string,
		container_registry_enabled: boolean,
		issues_enabled: boolean,
		merge_requests_enabled: boolean,
		wiki_enabled: boolean,
		builds_enabled: boolean,
		snippets_enabled: boolean,
		created_at: timestamp,
		last_activity_at: timestamp,
		shared_runners_enabled: boolean,
		lfs_enabled: boolean,
		creator_id: integer,
		namespace: object({ id: integer, name: string, path: string, kind: string }),
		avatar_url: alwaysNull,
		star_count: integer,
		forks_count: integer,
		open_issues_count: integer,
		public_builds: boolean,
		shared_with_groups: arrayOf({}),
		only_allow_merge_if_build_succeeds: boolean,
		request_access_enabled: boolean,
		only_allow_merge_if_all_discussions_are_resolved: boolean,
		approvals_before_merge: integer,
	},
	"Project",
);
/** presentPermissions's shape, alike in v3 and v4. */
export const PERMISSIONS = object({ project_access: nullable(object({ access_level: integer, notification_level: integer })), group_access: alwaysNull });
export const PROJECT_WITH_ACCESS = object({ ...propertiesOf(PROJECT), permissions: PERMISSIONS }, "ProjectWithAccess");
export const MEMBER = object({ ...propertiesOf(USER_BASIC), access_level: integer, expires_at: nullable(string) }, "Member");
