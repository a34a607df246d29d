/**
 * API v4's project and member entities (GitLab's BasicProjectDetails < Project, ProjectWithAccess,
 * Member), beside v3's in presenters/project.ts; pure. `visibility` is a word; what this service
 * does not have shows as a GitLab project without it (docs/api.md#v4-accounts).
 */
import { DEFAULT_BRANCH, type ProjectDoc } from "../models/project";
import type { UserDoc } from "../models/user";
import { alwaysNull, arrayOf, boolean, integer, nullable, object, oneOfValues, oneValue, propertiesOf, string, timestamp } from "./json-schema";
import { PERMISSIONS, presentPermissions, webUrlOf } from "./project";
import { presentUserBasicV4, USER_BASIC_V4 } from "./user.v4";

const VISIBILITY_NAMES: Record<number, "private" | "internal" | "public"> = { 0: "private", 10: "internal", 20: "public" };

/** `private`, `internal` or `public`, as v4 names a visibility level. */
export const visibilityOf = (level: number) => VISIBILITY_NAMES[level] ?? "private";

/** The project's namespace: its creator's, a user namespace (the creator's id stands for the namespace's). */
function namespaceOf(p: ProjectDoc, gitlabUrl: string) {
	return {
		id: p.creator_id,
		name: p.namespace,
		path: p.namespace,
		kind: "user",
		full_path: p.namespace,
		parent_id: null,
		avatar_url: null,
		web_url: `${gitlabUrl}/${p.namespace}`,
	};
}

/** BasicProjectDetails: what `simple=true` lists. */
export function presentBasicProjectV4(p: ProjectDoc, owner: UserDoc | null, gitlabUrl: string) {
	const webUrl = webUrlOf(p, gitlabUrl);
	return {
		id: p.id,
		description: p.description ?? null,
		name: p.name,
		name_with_namespace: `${owner?.name ?? p.namespace} / ${p.name}`,
		path: p.path,
		path_with_namespace: p.path_with_namespace,
		created_at: p.created_at,
		default_branch: DEFAULT_BRANCH,
		tag_list: [] as string[],
		topics: [] as string[],
		ssh_url_to_repo: `git@${new URL(gitlabUrl).host}:${p.path_with_namespace}.git`,
		http_url_to_repo: `${webUrl}.git`,
		web_url: webUrl,
		readme_url: null,
		forks_count: 0,
		avatar_url: null,
		star_count: 0,
		last_activity_at: p.last_activity_at ?? p.created_at,
		namespace: namespaceOf(p, gitlabUrl),
	};
}

/** The Project entity: `POST /projects` and the lists. */
export function presentProjectV4(p: ProjectDoc, owner: UserDoc | null, gitlabUrl: string) {
	const self = `${gitlabUrl}/api/v4/projects/${p.id}`;
	return {
		...presentBasicProjectV4(p, owner, gitlabUrl),
		_links: {
			self,
			issues: `${self}/issues`,
			merge_requests: `${self}/merge_requests`,
			repo_branches: `${self}/repository/branches`,
			labels: `${self}/labels`,
			events: `${self}/events`,
			members: `${self}/members`,
		},
		empty_repo: true,
		archived: false,
		visibility: visibilityOf(p.visibility_level),
		owner: owner ? presentUserBasicV4(owner, gitlabUrl) : null,
		container_registry_enabled: false,
		issues_enabled: true,
		merge_requests_enabled: true,
		wiki_enabled: true,
		jobs_enabled: true,
		snippets_enabled: true,
		shared_runners_enabled: true,
		lfs_enabled: false,
		creator_id: p.creator_id,
		import_status: "none",
		open_issues_count: 0,
		public_jobs: !!p.public_builds,
		shared_with_groups: [] as unknown[],
		only_allow_merge_if_pipeline_succeeds: false,
		request_access_enabled: false,
		only_allow_merge_if_all_discussions_are_resolved: false,
	};
}

/** ProjectWithAccess (`GET /projects/:id`, and the lists of a signed-in caller): the caller's own membership in `permissions`. */
export function presentProjectWithAccessV4(p: ProjectDoc, owner: UserDoc | null, gitlabUrl: string, memberLevel: number | null) {
	return { ...presentProjectV4(p, owner, gitlabUrl), permissions: presentPermissions(memberLevel) };
}

/** The Member entity: UserBasic with the membership (`membership_state` active: there are no invitations here). */
export function presentMemberV4(u: UserDoc, accessLevel: number, createdAt: string, gitlabUrl: string) {
	return { ...presentUserBasicV4(u, gitlabUrl), access_level: accessLevel, created_at: createdAt, expires_at: null, membership_state: "active" };
}

/** The shapes above, for the API description (presenters/json-schema.ts). */
const NAMESPACE_V4 = object(
	{ id: integer, name: string, path: string, kind: oneValue("user"), full_path: string, parent_id: alwaysNull, avatar_url: alwaysNull, web_url: string },
	"NamespaceV4",
);
export const BASIC_PROJECT_V4 = object(
	{
		id: integer,
		description: nullable(string),
		name: string,
		name_with_namespace: string,
		path: string,
		path_with_namespace: string,
		created_at: timestamp,
		default_branch: string,
		tag_list: arrayOf(string),
		topics: arrayOf(string),
		ssh_url_to_repo: string,
		http_url_to_repo: string,
		web_url: string,
		readme_url: alwaysNull,
		forks_count: integer,
		avatar_url: alwaysNull,
		star_count: integer,
		last_activity_at: timestamp,
		namespace: NAMESPACE_V4,
	},
	"BasicProjectV4",
);
export const PROJECT_V4 = object(
	{
		...propertiesOf(BASIC_PROJECT_V4),
		_links: object({ self: string, issues: string, merge_requests: string, repo_branches: string, labels: string, events: string, members: string }),
		empty_repo: boolean,
		archived: boolean,
		visibility: oneOfValues("private", "internal", "public"),
		owner: nullable(USER_BASIC_V4),
		container_registry_enabled: boolean,
		issues_enabled: boolean,
		merge_requests_enabled: boolean,
		wiki_enabled: boolean,
		jobs_enabled: boolean,
		snippets_enabled: boolean,
		shared_runners_enabled: boolean,
		lfs_enabled: boolean,
		creator_id: integer,
		import_status: string,
		open_issues_count: integer,
		public_jobs: boolean,
		shared_with_groups: arrayOf({}),
		only_allow_merge_if_pipeline_succeeds: boolean,
		request_access_enabled: boolean,
		only_allow_merge_if_all_discussions_are_resolved: boolean,
	},
	"ProjectV4",
);
export const PROJECT_WITH_ACCESS_V4 = object({ ...propertiesOf(PROJECT_V4), permissions: PERMISSIONS }, "ProjectWithAccessV4");
export const MEMBER_V4 = object(
	{ ...propertiesOf(USER_BASIC_V4), access_level: integer, created_at: timestamp, expires_at: alwaysNull, membership_state: oneValue("active") },
	"MemberV4",
);
