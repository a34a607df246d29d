/**
 * API v4's integrations (services/modules/integrations/integrations.v4.ts) on one in-process
 * broker, beside v3 on the same settings: GitLab's slugs and its current API's fields under
 * `/integrations` and `/services`, the active ones listed, GET 404 until set, PUT answering the
 * integration with its event flags, DELETE 204 (If-Unmodified-Since), and secrets never shown.
 */
import { CATALOGUE, fieldLabel, fieldsOf, findIntegration, isSecret, v4FlagNames, type FieldDef } from "../../../lib/integrations/catalogue";
import AccountsService from "../../../services/accounts.service";
import ApiService from "../../../services/api.service";
import IntegrationsService from "../../../services/integrations.service";
import { startLocal, type LocalStack } from "../../support/broker";
import { addMember, createProject, createUser, type TestUser } from "../../support/fixtures";
import type { Client } from "../../support/http";

let stack: LocalStack;
let owner: TestUser;
let developer: TestUser;
let projectId: number;
let everySlugProject: number;
let v4: Client;
const integrations = (segment = "integrations") => `/projects/${projectId}/${segment}`;

beforeAll(async () => {
	stack = await startLocal([ApiService, AccountsService, IntegrationsService]);
	owner = await createUser(stack.api());
	developer = await createUser(stack.api());
	projectId = (await createProject(stack.api(owner.token))).id;
	everySlugProject = (await createProject(stack.api(owner.token))).id;
	await addMember(stack.api(owner.token), projectId, developer.id, 30);
	v4 = stack.v4(owner.token);
});

afterAll(() => stack?.stop());

it("answers 404 Integration Not Found for one never set, and 400 for a slug it does not have", async () => {
	expect((await v4.get(`${integrations()}/slack`)).body).toEqual({ message: "404 Integration Not Found" });
	const unknown = await v4.get(`${integrations()}/nope`);
	expect([unknown.status, unknown.body]).toEqual([400, { error: "slug does not have a valid value" }]);
	const putUnknown = await v4.put(`${integrations()}/nope`, { body: {} });
	expect([putUnknown.status, putUnknown.body]).toEqual([404, { error: "404 Not Found" }]);
	expect((await v4.get(integrations())).body).toEqual([]);
});

/** A value each field of GitLab's current API accepts, as a script would send it. */
function v4Value(slug: string, f: FieldDef): unknown {
	if (f.type === "boolean") return f.default === true ? false : true;
	if (f.type === "integer") return f.max === 1 ? 1 : 6697;
	if (f.type === "select") return f.options![1];
	if (f.type === "url") return `https://${slug}.example.com/${f.name}`;
	if (f.name === "recipients") return slug === "irker" ? "irc://irc.example.com/#dev" : "dev@example.com";
	return `${f.name}Value${slug.replace(/-/g, "")}`;
}

it.each(CATALOGUE.map(d => d.gitlabName))("%s: PUT takes every field and flag of GitLab's current API, GET reads each back but the secrets", async slug => {
	const def = findIntegration(slug)!;
	const fields = fieldsOf(def, "v4");
	const flags = v4FlagNames(def);
	const body = {
		...Object.fromEntries(fields.map(f => [fieldLabel(f, true), v4Value(slug, f)])),
		...Object.fromEntries(flags.map(flag => [flag, false])),
	};
	// A project of its own: the flags stay as set after the DELETE (GitLab keeps them too).
	const base = `/projects/${everySlugProject}/integrations/${slug}`;
	const put = await v4.put(base, { body });
	expect([slug, put.status]).toEqual([slug, 200]);
	const shown = fields.filter(f => !isSecret(f) && !f.v4Hidden).map(f => fieldLabel(f, true));
	expect(put.body.properties).toEqual(Object.fromEntries(shown.map(name => [name, body[name]])));
	for (const flag of flags) expect([slug, flag, put.body[flag]]).toEqual([slug, flag, false]);
	expect((await v4.get(base)).body).toEqual(put.body);
	expect((await v4.del(base)).status).toBe(204);
	expect((await v4.get(base)).body).toMatchObject({ active: false, ...Object.fromEntries(flags.map(flag => [flag, false])) });
});

it("sets one with PUT in GitLab's current names and flags, shows them (no secrets, no webhook), and v3 sees the same settings", async () => {
	const put = await v4.put(`${integrations()}/slack`, {
		body: {
			webhook: "https://hooks.example.com/x",
			channel: "#b",
			notify_only_broken_pipelines: false,
			branches_to_be_notified: "default_and_protected",
			pipeline_channel: "#ci",
			pipeline_events: false,
			deployment_events: "True",
			// Not one of slack's events in GitLab's current API: ignored, as Grape drops it.
			job_events: "false",
		},
	});
	expect(put.status).toBe(200);
	expect(put.body).toEqual({
		id: expect.any(Number),
		title: "Team chat",
		slug: "slack",
		created_at: expect.any(String),
		updated_at: expect.any(String),
		active: true,
		commit_events: true,
		push_events: true,
		issues_events: true,
		incident_events: false,
		alert_events: false,
		confidential_issues_events: true,
		merge_requests_events: true,
		tag_push_events: true,
		deployment_events: true,
		note_events: true,
		confidential_note_events: true,
		pipeline_events: false,
		wiki_page_events: true,
		job_events: true,
		comment_on_event_enabled: true,
		inherited: false,
		properties: {
			username: null,
			channel: "#b",
			notify_only_broken_pipelines: false,
			branches_to_be_notified: "default_and_protected",
			push_channel: null,
			issue_channel: null,
			confidential_issue_channel: null,
			merge_request_channel: null,
			note_channel: null,
			confidential_note_channel: null,
			tag_push_channel: null,
			pipeline_channel: "#ci",
			wiki_page_channel: null,
			deployment_channel: null,
			incident_channel: null,
			alert_channel: null,
		},
	});
	expect((await v4.get(`${integrations("services")}/slack`)).body).toEqual(put.body);
	// v3 (GitLab 8.16's names, the spec's slug): its own fields, the webhook among them, and the same flags.
	expect((await stack.api(owner.token).get(`/projects/${projectId}/services/team-chat`)).body).toMatchObject({
		active: true,
		pipeline_events: false,
		build_events: true,
		properties: { webhook: "https://hooks.example.com/x", channel: "#b" },
	});
	const badChoice = await v4.put(`${integrations()}/slack`, { body: { webhook: "https://hooks.example.com/x", branches_to_be_notified: "main" } });
	expect([badChoice.status, badChoice.body]).toEqual([400, { error: "branches_to_be_notified does not have a valid value" }]);
	const badFlag = await v4.put(`${integrations()}/slack`, { body: { webhook: "https://hooks.example.com/x", push_events: "sometimes" } });
	expect([badFlag.status, badFlag.body]).toEqual([400, { error: "push_events is invalid" }]);

	const bamboo = await v4.put(`${integrations()}/bamboo`, {
		form: { bamboo_url: "https://ci.example.com", build_key: "KEY", username: "ci", password: "s3cret" },
	});
	expect([bamboo.status, bamboo.body.properties]).toEqual([
		200,
		{ bamboo_url: "https://ci.example.com", enable_ssl_verification: true, build_key: "KEY", username: "ci" },
	]);
	const missing = await v4.put(`${integrations()}/drone-ci`, { body: { token: "t" } });
	expect([missing.status, missing.body]).toEqual([400, { error: "drone_url is missing" }]);

	const list = await v4.get(integrations("services"));
	expect(list.body.map((i: { slug: string }) => i.slug)).toEqual(["slack", "bamboo"]);
	expect(list.body[0]).not.toHaveProperty("properties");
	expect(list.headers.get("x-total")).toBe("2");
	expect((await stack.v4(developer.token).get(integrations())).status).toBe(403);
});

it("takes Jira as GitLab's current API does (url, username, password) and reads it back without the password; v3 sees its links", async () => {
	const put = await v4.put(`${integrations()}/jira`, {
		body: { url: "https://jira.example.com", username: "bot", password: "s3cret", commit_events: false, comment_on_event_enabled: "no" },
	});
	expect(put.status).toBe(200);
	expect(put.body).toMatchObject({
		slug: "jira",
		active: true,
		commit_events: false,
		merge_requests_events: true,
		comment_on_event_enabled: false,
		properties: {
			url: "https://jira.example.com",
			api_url: null,
			jira_auth_type: 0,
			username: "bot",
			project_key: null,
			jira_issue_transition_automatic: null,
			jira_issue_transition_id: null,
			jira_issue_prefix: null,
			jira_issue_regex: null,
			issues_enabled: false,
		},
	});
	expect(put.body.properties).not.toHaveProperty("password");
	expect((await v4.get(`${integrations()}/jira`)).body).toEqual(put.body);
	expect((await stack.api(owner.token).get(`/projects/${projectId}/services/jira`)).body.properties).toEqual({
		project_url: "https://jira.example.com",
		issues_url: "https://jira.example.com/browse/:id",
		new_issue_url: "https://jira.example.com/secure/CreateIssue.jspa",
	});
	// The stored password is kept when left out, and does not follow the url to another server.
	expect((await v4.put(`${integrations()}/jira`, { body: { url: "https://jira.example.com", username: "bot2" } })).status).toBe(200);
	const moved = await v4.put(`${integrations()}/jira`, { body: { url: "https://other.example.com" } });
	expect([moved.status, moved.body]).toEqual([400, { error: "password is missing" }]);
	// GitLab 8.16's shape still works on v3: url and project_key.
	const v3 = await stack.api(owner.token).put(`/projects/${projectId}/services/jira`, { body: { url: "https://j.example.com", project_key: "PRJ" } });
	expect([v3.status, v3.body]).toEqual([200, true]);
	expect((await v4.get(`${integrations()}/jira`)).body.properties).toMatchObject({ url: "https://j.example.com", project_key: "PRJ", username: "bot2" });
	const noKey = await stack.api(owner.token).put(`/projects/${projectId}/services/jira`, { body: { url: "https://j.example.com" } });
	expect([noKey.status, noKey.body]).toEqual([400, { error: "project_key is missing" }]);
});

it("disables one with DELETE 204: kept, inactive, cleared; If-Unmodified-Since is honoured", async () => {
	const stale = await v4.del(`${integrations()}/slack`, { headers: { "If-Unmodified-Since": "Thu, 01 Jan 2015 00:00:00 GMT" } });
	expect([stale.status, stale.body]).toEqual([412, { message: "412 Precondition Failed" }]);
	const removed = await v4.del(`${integrations()}/slack`, { body: {} });
	expect([removed.status, removed.text]).toEqual([204, ""]);
	expect((await v4.get(`${integrations()}/slack`)).body).toMatchObject({
		slug: "slack",
		active: false,
		properties: { channel: null, notify_only_broken_pipelines: true, branches_to_be_notified: "default", pipeline_channel: null },
	});
	expect((await v4.get(integrations())).body.map((i: { slug: string }) => i.slug)).toEqual(["bamboo", "jira"]);
	expect((await v4.del(`${integrations()}/nope`)).status).toBe(400);
});
