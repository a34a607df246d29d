/**
 * Each presenter against the schema declared beside it (presenters/json-schema.ts), which the API
 * description publishes: every property it writes is declared, with its type, and every declared
 * one is written, so the two cannot drift apart. Records with every optional field set and with
 * none, as the store may hold them.
 */
import Ajv2020 from "ajv/dist/2020";
import type { BuildDoc } from "../../../models/build";
import type { DeployKeyDoc } from "../../../models/deploy-key";
import type { IntegrationDoc } from "../../../models/integration";
import type { LabelDoc } from "../../../models/label";
import type { ProjectDoc } from "../../../models/project";
import type { SnippetDoc } from "../../../models/snippet";
import type { UserDoc } from "../../../models/user";
import { findIntegration } from "../../../lib/integrations/catalogue";
import { BUILD, ERASED_BUILD, presentBuild, presentErasedBuild } from "../../../presenters/build";
import { DELETED_DEPLOY_KEY, DEPLOY_KEY, presentDeletedDeployKey, presentDeployKey } from "../../../presenters/deploy-key";
import { INTEGRATION, presentIntegration } from "../../../presenters/integration";
import type { JsonSchema } from "../../../presenters/json-schema";
import { DELETED_LABEL, LABEL, LABEL_WITH_COUNTS, presentDeletedLabel, presentLabel, presentLabelWithCounts } from "../../../presenters/label";
import {
	BASIC_PROJECT,
	MEMBER,
	PROJECT,
	PROJECT_WITH_ACCESS,
	presentBasicProject,
	presentMember,
	presentProject,
	presentProjectWithAccess,
} from "../../../presenters/project";
import { DELETED_SNIPPET, presentDeletedSnippet, presentSnippet, SNIPPET } from "../../../presenters/snippet";
import { CURRENT_USER, presentCurrentUser, presentUser, presentUserBasic, presentUserPublic, USER, USER_BASIC, USER_PUBLIC } from "../../../presenters/user";
import type { PipelineDoc } from "../../../models/pipeline";
import {
	DEPLOY_KEY_WITH_PROJECTS_V4,
	presentDeployKeyWithProjectsV4,
	presentProjectDeployKeyV4,
	presentSshKeyV4,
	PROJECT_DEPLOY_KEY_V4,
	SSH_KEY_V4,
} from "../../../presenters/deploy-key.v4";
import { INTEGRATION_BASIC_V4, INTEGRATION_V4, presentIntegrationBasicV4, presentIntegrationV4 } from "../../../presenters/integration.v4";
import { JOB, presentJob } from "../../../presenters/job";
import { LABEL_V4, LABEL_WITH_COUNTS_V4, presentLabelV4 } from "../../../presenters/label.v4";
import { PIPELINE, PIPELINE_BASIC, presentPipeline, presentPipelineBasic } from "../../../presenters/pipeline";
import {
	BASIC_PROJECT_V4,
	MEMBER_V4,
	PROJECT_V4,
	PROJECT_WITH_ACCESS_V4,
	presentBasicProjectV4,
	presentMemberV4,
	presentProjectV4,
	presentProjectWithAccessV4,
} from "../../../presenters/project.v4";
import { presentSnippetV4, SNIPPET_V4 } from "../../../presenters/snippet.v4";
import {
	presentUserBasicV4,
	presentUserPublicV4,
	presentUserV4,
	presentUserWithAdminV4,
	USER_BASIC_V4,
	USER_PUBLIC_V4,
	USER_V4,
	USER_WITH_ADMIN_V4,
} from "../../../presenters/user.v4";

const ajv = new Ajv2020({ allErrors: true, allowUnionTypes: true });
ajv.addFormat("date-time", (text: string) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(text) && !Number.isNaN(Date.parse(text)));

function problems(schema: JsonSchema, value: unknown): string[] {
	const validate = ajv.compile(schema);
	return validate(JSON.parse(JSON.stringify(value))) ? [] : (validate.errors ?? []).map(e => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`);
}

const URL = "https://gitlab.example.com";
const AT = "2016-01-11T09:13:33.000Z";
const bare: UserDoc = { id: 2, username: "ada", email: "ada@example.com", name: "Ada", state: "active", is_admin: false, created_at: AT };
const full: UserDoc = {
	...bare,
	bio: "b",
	location: "l",
	skype: "s",
	linkedin: "li",
	twitter: "t",
	website_url: "w",
	organization: "o",
	projects_limit: 10,
	last_sign_in_at: AT,
	current_sign_in_at: AT,
	confirmed_at: AT,
	theme_id: 1,
	color_scheme_id: 2,
};
const project: ProjectDoc = {
	id: 3,
	name: "Demo",
	path: "demo",
	namespace: "ada",
	path_with_namespace: "ada/demo",
	description: null,
	visibility_level: 20,
	public_builds: true,
	creator_id: 2,
	created_at: AT,
};
const label: LabelDoc = {
	id: 4,
	project_id: 3,
	title: "bug",
	color: "#FF0000",
	description: null,
	template: false,
	created_at: AT,
	updated_at: AT,
	project_title: "3|bug",
};
const key: DeployKeyDoc = {
	id: 5,
	title: "ci",
	key: "ssh-ed25519 AAAA",
	fingerprint: "3f:a2",
	user_id: null,
	public: false,
	created_at: AT,
	updated_at: AT,
	lock_version: 0,
};
const snippet: SnippetDoc = {
	id: 6,
	project_id: 3,
	title: "t",
	file_name: "a.rb",
	content: "puts 1",
	visibility_level: 20,
	author_id: 2,
	expires_at: null,
	created_at: AT,
	updated_at: AT,
};
const build: BuildDoc = {
	id: 7,
	project_id: 3,
	seq: 1,
	project_seq: "3|1",
	project_status: "3|success",
	project_sha: "3|0ff3",
	name: "rspec",
	stage: "test",
	ref: "master",
	tag: false,
	status: "success",
	coverage: 98.5,
	created_at: AT,
	started_at: AT,
	finished_at: AT,
	commit: {
		id: "0ff3",
		short_id: "0ff3",
		title: "Fix",
		message: "Fix",
		author_name: "Ada",
		author_email: "ada@example.com",
		created_at: "2016-01-11T10:13:33+01:00",
	},
	user_id: 2,
	artifacts: { filename: "a.zip", size: 10, file: "x" },
	erased_at: null,
	erased_by: null,
};
const integration: IntegrationDoc = {
	id: 8,
	project_id: 3,
	slug: "irc-gateway",
	active: true,
	properties: { recipients: "#dev", server_port: 6697, colorize_messages: true },
	created_at: AT,
	updated_at: AT,
	project_slug: "3|irc-gateway",
};

const PLACE = { gitlabUrl: URL, projectPath: "ada/demo" };
/** A key its SHA-256 fingerprint can be made of. */
const SSH_KEY_LINE = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEwgFBl5SRtPGVShM/hPmTwQiiscvAquHc9RJ+ZVCwdX ci";
const pipeline: PipelineDoc = {
	id: 9,
	project_id: 3,
	iid: 1,
	sha: "0ff3",
	ref: "master",
	tag: false,
	user_id: 2,
	status: "success",
	created_at: AT,
	updated_at: AT,
	started_at: AT,
	finished_at: AT,
	project_sha_ref: "3|0ff3|master",
	project_ref: "3|master",
};

it.each([
	["UserBasic", USER_BASIC, presentUserBasic(bare, URL)],
	["User, bare", USER, presentUser(bare, URL)],
	["User, full", USER, presentUser(full, URL)],
	["UserPublic, bare", USER_PUBLIC, presentUserPublic(bare, URL)],
	["UserPublic, full", USER_PUBLIC, presentUserPublic(full, URL)],
	["UserWithPrivateToken", CURRENT_USER, presentCurrentUser(full, URL, "AbCdEfGhIjKlMnOpQrSt")],
	["BasicProject", BASIC_PROJECT, presentBasicProject(project, bare, URL)],
	["Project", PROJECT, presentProject(project, bare, URL)],
	["Project without its owner", PROJECT, presentProject(project, null, URL)],
	["ProjectWithAccess, a member", PROJECT_WITH_ACCESS, presentProjectWithAccess(project, bare, URL, 30)],
	["ProjectWithAccess, not a member", PROJECT_WITH_ACCESS, presentProjectWithAccess(project, bare, URL, null)],
	["Member", MEMBER, presentMember(bare, 40, URL)],
	["Label", LABEL, presentLabel(label)],
	["LabelWithCounts", LABEL_WITH_COUNTS, presentLabelWithCounts({ ...label, priority: 2 })],
	["DeletedLabel", DELETED_LABEL, presentDeletedLabel({ ...label, description: "d" })],
	["DeployKey", DEPLOY_KEY, presentDeployKey(key)],
	["DeletedDeployKey", DELETED_DEPLOY_KEY, presentDeletedDeployKey(key)],
	["Snippet", SNIPPET, presentSnippet(snippet, bare, { gitlabUrl: URL, projectPath: "ada/demo" })],
	["Snippet without its author", SNIPPET, presentSnippet(snippet, null, { gitlabUrl: URL, projectPath: "ada/demo" })],
	["DeletedSnippet", DELETED_SNIPPET, presentDeletedSnippet(snippet)],
	["Build", BUILD, presentBuild(build, full, URL)],
	["Build without a user, artifacts or coverage", BUILD, presentBuild({ ...build, artifacts: null, coverage: null, started_at: null }, null, URL)],
	["ErasedBuild", ERASED_BUILD, presentErasedBuild(build, bare, URL)],
	["Integration", INTEGRATION, presentIntegration(findIntegration("irc-gateway")!, integration)],
	["Integration never set", INTEGRATION, presentIntegration(findIntegration("irc-gateway")!, null)],
	// API v4's.
	["UserBasicV4", USER_BASIC_V4, presentUserBasicV4(bare, URL)],
	["UserV4, bare", USER_V4, presentUserV4(bare, URL)],
	["UserV4, full", USER_V4, presentUserV4(full, URL)],
	["UserPublicV4", USER_PUBLIC_V4, presentUserPublicV4(full, URL)],
	["UserWithAdminV4", USER_WITH_ADMIN_V4, presentUserWithAdminV4({ ...bare, is_admin: true }, URL)],
	["BasicProjectV4", BASIC_PROJECT_V4, presentBasicProjectV4(project, bare, URL)],
	["ProjectV4", PROJECT_V4, presentProjectV4(project, bare, URL)],
	["ProjectV4 without its owner", PROJECT_V4, presentProjectV4({ ...project, description: "d", last_activity_at: AT }, null, URL)],
	["ProjectWithAccessV4", PROJECT_WITH_ACCESS_V4, presentProjectWithAccessV4(project, bare, URL, 40)],
	["MemberV4", MEMBER_V4, presentMemberV4(bare, 30, AT, URL)],
	["ProjectLabelV4", LABEL_V4, presentLabelV4({ ...label, description: "a\n\nb", priority: 1 }, true)],
	[
		"ProjectLabelWithCountsV4",
		LABEL_WITH_COUNTS_V4,
		presentLabelV4(label, false, { open_issues_count: 0, closed_issues_count: 0, open_merge_requests_count: 0 }),
	],
	["SSHKeyV4", SSH_KEY_V4, presentSshKeyV4(key)],
	["DeployKeysProjectV4", PROJECT_DEPLOY_KEY_V4, presentProjectDeployKeyV4({ ...key, key: SSH_KEY_LINE }, { can_push: true })],
	[
		"DeployKeyWithProjectsV4",
		DEPLOY_KEY_WITH_PROJECTS_V4,
		presentDeployKeyWithProjectsV4({ ...key, key: SSH_KEY_LINE }, [
			{ id: 3, description: null, name: "Demo", name_with_namespace: "ada / Demo", path: "demo", path_with_namespace: "ada/demo", created_at: AT },
		]),
	],
	["ProjectSnippetV4", SNIPPET_V4, presentSnippetV4({ ...snippet, description: "d", file_paths: ["a.rb", "dir/b c.rb"] }, bare, PLACE)],
	["ProjectSnippetV4 without its author", SNIPPET_V4, presentSnippetV4(snippet, null, PLACE)],
	["Job, successful, with artifacts", JOB, presentJob(build, full, pipeline, PLACE, Date.parse(AT))],
	["Job, failed, without artifacts, user or pipeline", JOB, presentJob({ ...build, status: "failed", artifacts: null, coverage: null }, null, null, PLACE)],
	["Job, pending", JOB, presentJob({ ...build, status: "pending", started_at: null, finished_at: null, artifacts: null }, null, null, PLACE)],
	["PipelineBasic", PIPELINE_BASIC, presentPipelineBasic(pipeline, PLACE)],
	["Pipeline", PIPELINE, presentPipeline(pipeline, bare, PLACE)],
	["Pipeline without builds yet", PIPELINE, presentPipeline({ ...pipeline, status: null, started_at: null, finished_at: null }, null, PLACE)],
	["ProjectIntegrationBasicV4", INTEGRATION_BASIC_V4, presentIntegrationBasicV4(findIntegration("irc-gateway")!, integration)],
	["ProjectIntegrationV4", INTEGRATION_V4, presentIntegrationV4(findIntegration("irc-gateway")!, integration)],
	["ProjectIntegrationV4 never set", INTEGRATION_V4, presentIntegrationV4(findIntegration("irc-gateway")!, null)],
])("%s fits its schema", (_what, schema, value) => {
	expect(problems(schema, value)).toEqual([]);
});

it("a field the schema does not declare, or one it lacks, does not fit", () => {
	expect(problems(LABEL, { ...presentLabel(label), extra: 1 })).toEqual([' must NOT have additional properties {"additionalProperty":"extra"}']);
	const { color: _color, ...without } = presentLabel(label);
	expect(problems(LABEL, without)).toEqual([' must have required property \'color\' {"missingProperty":"color"}']);
});
