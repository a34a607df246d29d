/**
 * Scripts written for GitLab 8.16 work unchanged: the same calls through the two v3 clients that
 * exist, the ruby-gitlab gem (Debian ruby-gitlab) and the `gitlab` npm package (version 3), with
 * GitLab's service names, the projects list, a users search and deploy keys, against the gateway and the
 * services as separate processes over the real NATS. Every field GitLab 8.16's entities have is
 * checked with its type and, where it is known, its value.
 */
import { Gitlab } from "gitlab";
import path from "path";
import { startCluster, type Cluster } from "../../support/cluster";
import { runCommand } from "../../support/commands";
import { internalApi, SHA_A, SHA_B } from "../../support/builds";
import { addMember, createProject, createUser, type TestUser } from "../../support/fixtures";
import { client } from "../../support/http";
import { KeyFactory } from "../../support/ssh-keys";

let cluster: Cluster;
let owner: TestUser;
let member: TestUser;
let project: { id: number; path_with_namespace: string };
let projectName: string;
let buildId: number;
const keyFactory = new KeyFactory();
/** A deploy key of another of the owner's projects, for the clients to enable on `project`: one for each. */
let gemKey: { id: number; title: string; key: string; created_at: string };
let npmKey: typeof gemKey;
let keysProjectId: number;

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const AVATAR = /^https:\/\/www\.gravatar\.com\/avatar\/[0-9a-f]{32}\?s=80&d=identicon$/;
const as = (token: string) => client(cluster.url, token);

type Kind = "string" | "number" | "boolean" | "null" | "array" | "object";
const kindOf = (v: unknown): Kind => (v === null ? "null" : Array.isArray(v) ? "array" : (typeof v as Kind));

/** Each field present with one of its GitLab 8.16 types ("string|null" for a nullable string). */
function expectTypes(entity: Record<string, unknown>, types: Record<string, string>) {
	const wrong = Object.entries(types)
		.filter(([field, type]) => !(field in entity) || !type.split("|").includes(kindOf(entity[field])))
		.map(([field, type]) => `${field}: want ${type}, got ${field in entity ? kindOf(entity[field]) : "nothing"}`);
	expect(wrong).toEqual([]);
}

const USER_BASIC = { name: "string", username: "string", id: "number", state: "string", avatar_url: "string", web_url: "string" };
const USER = {
	...USER_BASIC,
	created_at: "string",
	is_admin: "boolean",
	bio: "string|null",
	location: "string|null",
	skype: "string",
	linkedin: "string",
	twitter: "string",
	website_url: "string",
	organization: "string|null",
};
const USER_PUBLIC = {
	...USER,
	last_sign_in_at: "string|null",
	confirmed_at: "string|null",
	email: "string",
	theme_id: "number",
	color_scheme_id: "number",
	projects_limit: "number",
	current_sign_in_at: "string|null",
	identities: "array",
	can_create_group: "boolean",
	can_create_project: "boolean",
	two_factor_enabled: "boolean",
	external: "boolean",
};
const PROJECT_SERVICE = {
	id: "number|null",
	title: "string",
	created_at: "string|null",
	updated_at: "string|null",
	active: "boolean",
	push_events: "boolean",
	issues_events: "boolean",
	merge_requests_events: "boolean",
	tag_push_events: "boolean",
	note_events: "boolean",
	build_events: "boolean",
	pipeline_events: "boolean",
	properties: "object",
};
const PROJECT = {
	id: "number",
	description: "string|null",
	default_branch: "string|null",
	tag_list: "array",
	public: "boolean",
	archived: "boolean",
	visibility_level: "number",
	ssh_url_to_repo: "string",
	http_url_to_repo: "string",
	web_url: "string",
	owner: "object",
	name: "string",
	name_with_namespace: "string",
	path: "string",
	path_with_namespace: "string",
	container_registry_enabled: "boolean|null",
	issues_enabled: "boolean",
	merge_requests_enabled: "boolean",
	wiki_enabled: "boolean",
	builds_enabled: "boolean",
	snippets_enabled: "boolean",
	created_at: "string",
	last_activity_at: "string",
	shared_runners_enabled: "boolean",
	lfs_enabled: "boolean",
	creator_id: "number",
	namespace: "object",
	avatar_url: "string|null",
	star_count: "number",
	forks_count: "number",
	open_issues_count: "number",
	public_builds: "boolean",
	shared_with_groups: "array",
	only_allow_merge_if_build_succeeds: "boolean",
	request_access_enabled: "boolean",
	only_allow_merge_if_all_discussions_are_resolved: "boolean|null",
	permissions: "object",
};

beforeAll(async () => {
	cluster = await startCluster({ nodes: { api: "api", backend: "accounts,integrations,snippets,builds,deploy-keys" } });
	await cluster.waitForRoute("GET", "/projects/1/services/slack");
	await cluster.waitForRoute("GET", "/projects/1/snippets");
	await cluster.waitForRoute("GET", "/projects/1/deploy_keys");
	owner = await createUser(cluster.api());
	member = await createUser(cluster.api());
	projectName = `Client project ${Date.now()}`;
	project = await createProject(as(owner.token), { name: projectName, visibility_level: 10 });
	await addMember(as(owner.token), project.id, member.id, 30);
	const ci = internalApi(cluster.url, cluster.internalSecret);
	buildId = await ci.build({ project_id: project.id, sha: SHA_A, user_id: owner.id });
	await ci.build({ project_id: project.id, sha: SHA_B });
	keysProjectId = (await createProject(as(owner.token))).id;
	const addKey = async (title: string) => {
		const res = await as(owner.token).post(`/projects/${keysProjectId}/deploy_keys`, { body: { title, key: (await keyFactory.generate("ed25519")).line } });
		expect(res.status).toBe(201);
		return res.body;
	};
	gemKey = await addKey("for the gem");
	npmKey = await addKey("for the npm client");
}, 180000);

afterAll(async () => {
	keyFactory.cleanup();
	await cluster?.stop();
});

describe("the ruby-gitlab gem", () => {
	let out: Record<string, any>;

	beforeAll(async () => {
		const args = [cluster.url, cluster.rootToken, owner.token, project.id, projectName, member.id, member.username, SHA_A, buildId, gemKey.id].map(String);
		const gem = await runCommand("ruby", [path.join(__dirname, "../../support/ruby-gitlab-compat.rb"), ...args], { timeoutMs: 60000 });
		expect([gem.status, gem.stderr]).toEqual([0, ""]);
		out = JSON.parse(gem.stdout);
	});

	it("sets integrations by GitLab's service names, reads them back in GitLab's field names, and deletes them", () => {
		expect(out.put).toEqual({ slack: true, asana: true, irker: true, hipchat: true, pushover: true, bamboo: true, drone_ci: true, jira: true });
		for (const entity of Object.values<Record<string, unknown>>(out.get)) expectTypes(entity, PROJECT_SERVICE);
		expect(out.get.slack).toMatchObject({ id: expect.any(Number), title: "Team chat", active: true, pipeline_events: true, build_events: true });
		expect(out.get.slack.properties).toEqual({ webhook: "https://hooks.example.com/services/T0/B0/x", username: "ci-bot", channel: "#builds" });
		// One record, either name.
		expect(out.get["team-chat"]).toEqual(out.get.slack);
		expect(out.get.asana.properties).toEqual({ restrict_to_branch: "master,release" });
		expect(out.get.irker.properties).toEqual({ recipients: "irc://irc.example.net/#dev", server_port: 6659, colorize_messages: true });
		expect(out.get.hipchat.properties).toEqual({ color: "pink", server: "https://chat.example.com" });
		expect(out.get.pushover.properties).toEqual({ priority: "2", sound: "my-sound" });
		expect(out.get.bamboo.properties).toEqual({ bamboo_url: "https://bamboo.example.com", build_key: "PLAN", username: "ci" });
		expect(out.get["build-server-a"].properties).toEqual({ build_server_url: "https://bamboo.example.com", build_key: "PLAN", username: "ci" });
		expect(out.get.drone_ci.properties).toEqual({ drone_url: "https://drone.example.com" });
		expect(out.get.jira.properties).toEqual({
			project_url: "https://jira.example.com/issues/?jql=project=PROJ",
			issues_url: "https://jira.example.com/browse/:id",
			new_issue_url: "https://jira.example.com/secure/CreateIssue.jspa",
		});
		expect(JSON.stringify(out.get)).not.toMatch(/asana-secret-key|hipchat-secret|app-key|user-key|bamboo-pass|drone-token/);
		expect(out.delete_irker).toBe(true);
		expect(out.irker_after).toMatchObject({ id: out.get.irker.id, active: false, properties: {} });
		expect(out.unknown).toEqual([404, "404 Service Not Found"]);
	});

	it("finds the project in the projects list, and reads its permissions", () => {
		expect(out.projects.map((p: { id: number }) => p.id)).toEqual([project.id]);
		expectTypes(out.projects[0], PROJECT);
		expect(out.projects[0].permissions).toEqual({ project_access: { access_level: 50, notification_level: 3 }, group_access: null });
		expect(out.project).toEqual(out.projects[0]);
		expectTypes(out.project.owner, USER_BASIC);
		expect(out.project.namespace).toEqual({ id: owner.id, name: owner.username, path: owner.username, kind: "user" });
	});

	it("searches users and looks one up by username", () => {
		expect(out.user_search).toHaveLength(1);
		expectTypes(out.user_search[0], USER_BASIC);
		expect(out.user_search[0]).toEqual({
			name: `User ${member.username}`,
			username: member.username,
			id: member.id,
			state: "active",
			avatar_url: expect.stringMatching(AVATAR),
			web_url: `http://localhost/${member.username}`,
		});
		expect(out.users_by_username).toEqual(out.user_search);
	});

	it("reads one member: UserBasic with access_level and expires_at", () => {
		expectTypes(out.member, { ...USER_BASIC, access_level: "number", expires_at: "string|null" });
		expect(out.member).toMatchObject({ id: member.id, username: member.username, access_level: 30, expires_at: null });
	});

	it("finds a member with GitLab's `query` (team_members), in any case", () => {
		expect(out.members_query).toEqual([out.member]);
	});

	it("creates and lists snippets with web_url and the author's links", () => {
		const snippetTypes = {
			id: "number",
			title: "string",
			file_name: "string",
			author: "object",
			updated_at: "string",
			created_at: "string",
			expires_at: "null",
			web_url: "string",
		};
		expectTypes(out.snippet, snippetTypes);
		expect(out.snippet.web_url).toBe(`http://localhost/${project.path_with_namespace}/snippets/${out.snippet.id}`);
		expectTypes(out.snippet.author, USER_BASIC);
		expect(out.snippet.author).toMatchObject({ id: owner.id, web_url: `http://localhost/${owner.username}`, avatar_url: expect.stringMatching(AVATAR) });
		expect(out.snippets).toEqual([out.snippet]);
	});

	it("lists a commit's builds by a 7-character id, with GitLab 8.16's commit and user", () => {
		expect(out.commit_builds.map((b: { id: number }) => b.id)).toEqual([buildId]);
		expect(out.build.commit).toMatchObject({ id: SHA_A, committer_name: "Dmitriy Zaporozhets", committer_email: "dmitriy.zaporozhets@gmail.com" });
		expectTypes(out.build.commit, {
			id: "string",
			short_id: "string",
			title: "string",
			author_name: "string",
			author_email: "string",
			created_at: "string",
			committer_name: "string",
			committer_email: "string",
			message: "string",
		});
		expectTypes(out.build.user, USER);
		expect(out.build.user).toMatchObject({ id: owner.id, location: null, organization: null });
	});

	it("creates a user as admin and reads GitLab's full user; signing in records the time", () => {
		expectTypes(out.created_user, USER_PUBLIC);
		expect(out.created_user).toMatchObject({
			location: "Lisbon",
			organization: "Gems",
			last_sign_in_at: null,
			current_sign_in_at: null,
			confirmed_at: expect.stringMatching(ISO),
			theme_id: 2,
			color_scheme_id: 1,
			identities: [],
			two_factor_enabled: false,
			external: false,
		});
		expect(out.admin_user).toEqual(out.created_user);
		expectTypes(out.session, { ...USER_PUBLIC, private_token: "string", last_sign_in_at: "string", current_sign_in_at: "string" });
		expect(out.session.current_sign_in_at).toMatch(ISO);
		expect(out.session.last_sign_in_at).toBe(out.session.current_sign_in_at);
	});

	it("acts as another user for an admin (sudo), and refuses sudo to anyone else", () => {
		expectTypes(out.sudo_user, USER_PUBLIC);
		expect(out.sudo_user).toMatchObject({ id: member.id, username: member.username, is_admin: false });
		expect(out.sudo_refused).toEqual([403, "403 Forbidden  - Must be admin to use sudo"]);
	});

	it("enables a deploy key of another project by id (enable_deploy_key): 201's SSHKey, once, and 404 for an unknown key", () => {
		expectTypes(out.enabled_key, { id: "number", title: "string", key: "string", created_at: "string" });
		expect(out.enabled_key).toEqual(gemKey);
		expect(out.enabled_again).toEqual(gemKey);
		expect(out.deploy_keys).toEqual([gemKey]);
		expect(out.enable_unknown).toEqual([404, "404 Deploy Key Not Found"]);
	});
});

describe("the gitlab npm client (14.2.2, version 3)", () => {
	const api = () => new Gitlab({ host: `http://127.0.0.1:${cluster.port}`, token: owner.token, version: 3 });

	it("edits, shows and removes integrations by GitLab's service names", async () => {
		expect(await api().Services.edit(project.id, "slack", { webhook: "https://hooks.example.com/npm", channel: "#npm" })).toBe(true);
		const slack = (await api().Services.show(project.id, "slack")) as Record<string, any>;
		expectTypes(slack, PROJECT_SERVICE);
		expect(slack).toMatchObject({ active: true, pipeline_events: true, properties: { webhook: "https://hooks.example.com/npm", channel: "#npm" } });
		expect(
			await api().Services.edit(project.id, "teamcity", {
				teamcityUrl: "https://tc.example.com",
				buildType: "bt1",
				username: "ci",
				password: "tc-pass",
			}),
		).toBe(true);
		expect(((await api().Services.show(project.id, "teamcity")) as Record<string, any>).properties).toEqual({
			teamcity_url: "https://tc.example.com",
			build_type: "bt1",
			username: "ci",
		});
		expect(await api().Services.remove(project.id, "slack")).toBe(true);
		// The spec's slug (which the client does not know) reads the record GitLab's name cleared.
		expect(await api().Services.show(project.id, "team-chat" as "slack")).toMatchObject({ active: false, properties: {} });
		await expect(api().Services.show(project.id, "kubernetes")).rejects.toMatchObject({ response: { status: 404 } });
	});

	it("lists projects (Projects.all) and searches users (Users.search)", async () => {
		const mine = (await api().Projects.all({ search: projectName })) as Record<string, any>[];
		expect(mine.map(p => p.id)).toEqual([project.id]);
		expectTypes(mine[0], PROJECT);
		const asMember = new Gitlab({ host: `http://127.0.0.1:${cluster.port}`, token: member.token, version: 3 });
		const seen = (await asMember.Projects.all({ search: projectName })) as Record<string, any>[];
		expect(seen[0].permissions).toEqual({ project_access: { access_level: 30, notification_level: 3 }, group_access: null });
		const found = (await asMember.Users.search(owner.username)) as Record<string, any>[];
		expect(found.map(u => u.id)).toEqual([owner.id]);
		expectTypes(found[0], USER_BASIC);
		const one = (await api().ProjectMembers.show(project.id, member.id)) as Record<string, any>;
		expect(one).toMatchObject({ id: member.id, access_level: 30, expires_at: null });
	});

	it("enables a deploy key of another project (DeployKeys.enable) and lists every key as an admin (DeployKeys.all)", async () => {
		const enabled = await api().DeployKeys.enable(project.id, String(npmKey.id));
		expect(enabled).toEqual(npmKey);
		expect(await api().DeployKeys.enable(project.id, String(npmKey.id))).toEqual(npmKey);
		expect(await api().DeployKeys.all({ projectId: project.id })).toContainEqual(npmKey);
		expect(await api().DeployKeys.all({ projectId: keysProjectId })).toEqual([gemKey, npmKey]);
		await expect(api().DeployKeys.enable(project.id, "999999999")).rejects.toMatchObject({ response: { status: 404 } });

		const root = new Gitlab({ host: `http://127.0.0.1:${cluster.port}`, token: cluster.rootToken, version: 3 });
		const all = (await root.DeployKeys.all({})) as Record<string, any>[];
		expect(all).toEqual([gemKey, npmKey]);
		await expect(api().DeployKeys.all({})).rejects.toMatchObject({ response: { status: 403 } });
	});
});
