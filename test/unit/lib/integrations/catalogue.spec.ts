import {
	CATALOGUE,
	fieldLabel,
	fieldsOf,
	findIntegration,
	isRequired,
	isSecret,
	resolveIntegration,
	v4FlagNames,
} from "../../../../lib/integrations/catalogue";
import { ApiError } from "../../../../lib/api/errors";
import { handlesEvent, mergeSettings, parseBoolean } from "../../../../lib/integrations/settings";
import { presentIntegration } from "../../../../presenters/integration";
import { v4Properties } from "../../../../presenters/integration.v4";
import { type IntegrationDoc } from "../../../../models/integration";

/** docs/integrations.md#catalogue (GitLab 8.16's fields for two rows), written out independently of the catalogue. */
const SPEC: Record<string, { required: string[]; optional: string[]; secret: string[] }> = {
	"task-tracker-comments": { required: ["api_key"], optional: ["restrict_to_branch"], secret: ["api_key"] },
	"source-commits-a": { required: ["token"], optional: ["subdomain"], secret: ["token"] },
	"build-server-a": { required: ["build_server_url", "build_key", "username", "password"], optional: [], secret: ["password"] },
	"pipeline-service-a": { required: ["token", "project_url"], optional: ["enable_ssl_verification"], secret: ["token"] },
	"group-chat-a": { required: ["token"], optional: ["subdomain", "room"], secret: ["token"] },
	"custom-issue-tracker": { required: ["new_issue_url", "issues_url", "project_url"], optional: ["description", "title"], secret: [] },
	"container-ci-a": { required: ["token", "ci_server_url"], optional: ["enable_ssl_verification"], secret: ["token"] },
	"emails-on-push": { required: ["recipients"], optional: ["disable_diffs", "send_from_committer_email"], secret: [] },
	"external-wiki": { required: ["external_wiki_url"], optional: [], secret: [] },
	"collab-app-a": { required: ["token"], optional: [], secret: ["token"] },
	"dependency-monitor": { required: ["api_key", "token"], optional: [], secret: ["api_key", "token"] },
	"ci-server-a": { required: ["token", "project_url"], optional: ["enable_ssl_verification"], secret: ["token"] },
	"group-chat-b": { required: ["token"], optional: ["color", "notify", "room", "api_version", "server"], secret: ["token"] },
	"irc-gateway": { required: ["recipients"], optional: ["default_irc_uri", "server_port", "server_host", "colorize_messages"], secret: [] },
	"issue-tracker-a": { required: ["new_issue_url", "project_url", "issues_url"], optional: ["description"], secret: [] },
	"source-commits-b": { required: ["token"], optional: [], secret: ["token"] },
	"push-notifications": { required: ["api_key", "user_key", "priority"], optional: ["device", "sound"], secret: ["api_key", "user_key"] },
	"issue-tracker-b": { required: ["new_issue_url", "project_url", "issues_url"], optional: ["description"], secret: [] },
	"team-chat": { required: ["webhook"], optional: ["username", "channel"], secret: [] },
	"build-server-b": { required: ["build_server_url", "build_type", "username", "password"], optional: [], secret: ["password"] },
};

/** A value each field accepts. */
function validValue(slug: string, field: string): string {
	if (/url$|^webhook$|^server$/.test(field)) return "https://tracker.example.com/x";
	if (field === "recipients") return slug === "irc-gateway" ? "irc://irc.example.com/#dev" : "dev@example.com";
	if (field === "priority") return "0";
	if (field === "sound") return "bike";
	if (field === "color") return "red";
	if (field === "server_port") return "6667";
	if (/^(enable_ssl_verification|notify|disable_diffs|send_from_committer_email|colorize_messages)$/.test(field)) return "true";
	if (field === "token") return "abc123TOKEN";
	return `value-of-${field}`;
}

function errorOf(fn: () => unknown): { code: number; body: unknown } {
	try {
		fn();
	} catch (err) {
		if (err instanceof ApiError) return { code: err.code, body: (err.data as { body: unknown }).body };
		throw err;
	}
	throw new Error("expected an ApiError");
}

const allValid = (slug: string, names: string[]) => Object.fromEntries(names.map(n => [n, validValue(slug, n)]));

describe("integration catalogue", () => {
	it("has exactly the 20 slugs of the spec, each with a title and events", () => {
		expect(CATALOGUE.map(d => d.slug).sort()).toEqual(Object.keys(SPEC).sort());
		for (const def of CATALOGUE) {
			expect(def.title).toMatch(/\S/);
			expect(def.events.length).toBeGreaterThan(0);
		}
	});

	it.each(Object.entries(SPEC))("%s declares the spec's required, optional and secret fields (v3)", (slug, spec) => {
		const def = findIntegration(slug)!;
		expect(
			fieldsOf(def, "v3")
				.filter(f => isRequired(f, "v3"))
				.map(f => f.name)
				.sort(),
		).toEqual([...spec.required].sort());
		expect(
			fieldsOf(def, "v3")
				.filter(f => !isRequired(f, "v3"))
				.map(f => f.name)
				.sort(),
		).toEqual([...spec.optional].sort());
		expect(
			fieldsOf(def, "v3")
				.filter(isSecret)
				.map(f => f.name)
				.sort(),
		).toEqual([...spec.secret].sort());
	});

	it("treats every field named like a password, token or API/user key as secret (a build plan key is not)", () => {
		for (const def of CATALOGUE)
			for (const f of def.fields)
				if (/password|token|api_key|user_key/.test(f.name))
					expect({ slug: def.slug, field: f.name, secret: isSecret(f) }).toEqual({ slug: def.slug, field: f.name, secret: true });
		expect(isSecret(findIntegration("build-server-a")!.fields.find(f => f.name === "build_key")!)).toBe(false);
	});

	it("finds slugs written with underscores, and nothing for an unknown slug", () => {
		expect(findIntegration("task_tracker_comments")?.slug).toBe("task-tracker-comments");
		expect(findIntegration("emails-on-push")?.slug).toBe("emails-on-push");
		expect(findIntegration("")).toBeNull();
		// GitLab 8.16 services with no counterpart here stay unknown.
		for (const unknown of ["bugzilla", "builds-email", "kubernetes", "mattermost", "jenkins", "task-tracker", "slack-slash-commands"])
			expect([unknown, findIntegration(unknown)]).toEqual([unknown, null]);
	});

	it("takes GitLab 8.16's service names as aliases of the slugs, with - or _", () => {
		const GITLAB_NAMES: Record<string, string> = {
			asana: "task-tracker-comments",
			assembla: "source-commits-a",
			bamboo: "build-server-a",
			buildkite: "pipeline-service-a",
			campfire: "group-chat-a",
			"custom-issue-tracker": "custom-issue-tracker",
			"drone-ci": "container-ci-a",
			"emails-on-push": "emails-on-push",
			"external-wiki": "external-wiki",
			flowdock: "collab-app-a",
			gemnasium: "dependency-monitor",
			"gitlab-ci": "ci-server-a",
			hipchat: "group-chat-b",
			irker: "irc-gateway",
			jira: "issue-tracker-a",
			pivotaltracker: "source-commits-b",
			pushover: "push-notifications",
			redmine: "issue-tracker-b",
			slack: "team-chat",
			teamcity: "build-server-b",
		};
		expect(CATALOGUE.map(d => [d.gitlabName, d.slug]).sort()).toEqual(Object.entries(GITLAB_NAMES).sort());
		for (const [name, slug] of Object.entries(GITLAB_NAMES)) {
			expect(findIntegration(name)?.slug).toBe(slug);
			expect(findIntegration(name.replace(/-/g, "_"))?.slug).toBe(slug);
			// Where GitLab's name is the slug, the request is in the spec's vocabulary, which is GitLab's there.
			expect([name, resolveIntegration(name)?.byGitLabName]).toEqual([name, name !== slug]);
		}
		expect(resolveIntegration("team_chat")).toEqual({ def: findIntegration("slack"), byGitLabName: false });
	});

	it.each(Object.entries(SPEC))("%s: PUT without each required field says which one is missing", (slug, spec) => {
		const def = findIntegration(slug)!;
		for (const field of spec.required) {
			const input = allValid(slug, [...spec.required, ...spec.optional]);
			delete input[field];
			expect(errorOf(() => mergeSettings(def, null, input))).toEqual({ code: 400, body: { error: `${field} is missing` } });
		}
		const ok = mergeSettings(def, null, allValid(slug, spec.required));
		expect(Object.keys(ok.properties).sort()).toEqual([...spec.required].sort());
		expect(ok.secretsChanged.sort()).toEqual(spec.secret.filter(s => spec.required.includes(s)).sort());
	});

	it("names every missing field at once, Grape style", () => {
		expect(errorOf(() => mergeSettings(findIntegration("push-notifications")!, null, {}))).toEqual({
			code: 400,
			body: { error: "api_key is missing, user_key is missing, priority is missing" },
		});
	});

	it("treats a blank required value as missing", () => {
		expect(errorOf(() => mergeSettings(findIntegration("external-wiki")!, null, { external_wiki_url: "  " }))).toEqual({
			code: 400,
			body: { error: "external_wiki_url is missing" },
		});
	});

	it("accepts only http(s) URLs in URL fields", () => {
		const def = findIntegration("custom-issue-tracker")!;
		const base = { new_issue_url: "http://t.example.com/new", issues_url: "https://t.example.com/issues/:id", project_url: "https://t.example.com/p" };
		expect(mergeSettings(def, null, base).properties).toEqual(base);
		for (const bad of ["ftp://t.example.com/p", "javascript:alert(1)", "not a url", "http://", "//t.example.com/p"]) {
			expect(errorOf(() => mergeSettings(def, null, { ...base, project_url: bad }))).toEqual({
				code: 400,
				body: { message: { project_url: ["must be a valid URL"] } },
			});
		}
	});

	it("accepts true/false/1/0 for booleans and stores real booleans", () => {
		const def = findIntegration("emails-on-push")!;
		for (const [raw, value] of [
			["true", true],
			["false", false],
			["1", true],
			["0", false],
			[true, true],
			[0, false],
			["TRUE", true],
		] as const)
			expect(mergeSettings(def, null, { recipients: "a@example.com", disable_diffs: raw }).properties.disable_diffs).toBe(value);
		for (const bad of ["yes", "2", "on", [], {}])
			expect(errorOf(() => mergeSettings(def, null, { recipients: "a@example.com", disable_diffs: bad }))).toEqual({
				code: 400,
				body: { error: "disable_diffs is invalid" },
			});
	});

	it("stores hipchat's color and server and pushover's priority and sound as given, as GitLab 8.16 does", () => {
		const hip = findIntegration("group-chat-b")!;
		expect(mergeSettings(hip, null, { token: "t", color: "pink", server: "chat.internal:8080" }).properties).toEqual({
			token: "t",
			color: "pink",
			server: "chat.internal:8080",
		});
		const push = findIntegration("push-notifications")!;
		expect(mergeSettings(push, null, { api_key: "a", user_key: "u", priority: -1 }).properties.priority).toBe("-1");
		expect(mergeSettings(push, null, { api_key: "a", user_key: "u", priority: "5", sound: "my-own-sound" }).properties).toMatchObject({
			priority: "5",
			sound: "my-own-sound",
		});
		// Still bounded, still scalars, and priority still required.
		expect(errorOf(() => mergeSettings(push, null, { api_key: "a", user_key: "u", priority: "0", sound: "s".repeat(10_001) }))).toEqual({
			code: 400,
			body: { message: { sound: ["is too long (maximum is 10000 characters)"] } },
		});
		expect(errorOf(() => mergeSettings(hip, null, { token: "t", color: ["red"] }))).toEqual({ code: 400, body: { error: "color is invalid" } });
		expect(errorOf(() => mergeSettings(push, null, { api_key: "a", user_key: "u" }))).toEqual({ code: 400, body: { error: "priority is missing" } });
	});

	it("checks integers and formats", () => {
		const irc = findIntegration("irc-gateway")!;
		expect(mergeSettings(irc, null, { recipients: "irc://h/#c", server_port: "6659" }).properties.server_port).toBe(6659);
		expect(errorOf(() => mergeSettings(irc, null, { recipients: "irc://h/#c", server_port: "66x" }))).toEqual({
			code: 400,
			body: { error: "server_port is invalid" },
		});
		expect(errorOf(() => mergeSettings(irc, null, { recipients: "irc://h/#c", server_port: "70000" }))).toEqual({
			code: 400,
			body: { error: "server_port does not have a valid value" },
		});
		const ci = findIntegration("ci-server-a")!;
		expect(errorOf(() => mergeSettings(ci, null, { token: "not ok!", project_url: "https://ci.example.com/p/1" }))).toEqual({
			code: 400,
			body: { message: { token: ["is invalid"] } },
		});
	});

	it("refuses IRC recipients that are all invalid", () => {
		const irc = findIntegration("irc-gateway")!;
		expect(errorOf(() => mergeSettings(irc, null, { recipients: "#chan http://x/#y" }))).toEqual({
			code: 400,
			body: { message: { recipients: ["are all invalid"] } },
		});
		expect(mergeSettings(irc, null, { recipients: "#chan", default_irc_uri: "irc://irc.example.com:6697/" }).properties.recipients).toBe("#chan");
	});

	it("ignores unknown fields and refuses values that are not scalars", () => {
		const def = findIntegration("collab-app-a")!;
		expect(mergeSettings(def, null, { token: "t", evil: "x", active: false }).properties).toEqual({ token: "t" });
		expect(errorOf(() => mergeSettings(def, null, { token: { $gt: "" } }))).toEqual({ code: 400, body: { error: "token is invalid" } });
	});

	it("keeps stored fields a PUT does not send, clears optional ones sent blank", () => {
		const def = findIntegration("group-chat-a")!;
		const stored = { token: "v1:sealed", subdomain: "acme", room: "dev" };
		const r = mergeSettings(def, stored, { room: "", subdomain: "other" });
		expect(r.properties).toEqual({ token: "v1:sealed", subdomain: "other" });
		expect(r.secretsChanged).toEqual([]);
	});

	it("lets a stored secret stay when it is not re-sent, and reports a new one for encryption", () => {
		const def = findIntegration("task-tracker-comments")!;
		expect(mergeSettings(def, { api_key: "v1:old" }, { restrict_to_branch: "master" })).toEqual({
			properties: { api_key: "v1:old", restrict_to_branch: "master" },
			secretsChanged: [],
		});
		expect(mergeSettings(def, { api_key: "v1:old" }, { api_key: "new-key" })).toEqual({ properties: { api_key: "new-key" }, secretsChanged: ["api_key"] });
	});

	it("drops the stored password when the server URL changes without it, so the PUT needs it again", () => {
		const def = findIntegration("build-server-a")!;
		const stored = { build_server_url: "https://bamboo.example.com", build_key: "KEY", username: "ci", password: "v1:sealed" };
		const same = { build_server_url: "https://bamboo.example.com", build_key: "KEY2", username: "ci" };
		expect(mergeSettings(def, stored, same).properties.password).toBe("v1:sealed");
		const moved = { build_server_url: "https://evil.example.com", build_key: "KEY", username: "ci" };
		expect(errorOf(() => mergeSettings(def, stored, moved))).toEqual({ code: 400, body: { error: "password is missing" } });
		expect(mergeSettings(def, stored, { ...moved, password: "new" })).toEqual({ properties: { ...moved, password: "new" }, secretsChanged: ["password"] });
	});

	it("accepts GitLab's field names beside the spec's, and answers in the vocabulary of the name used", () => {
		const bamboo = resolveIntegration("bamboo")!;
		const spec = resolveIntegration("build-server-a")!;
		const gitlabBody = { bamboo_url: "https://bamboo.example.com", build_key: "KEY", username: "ci", password: "pw" };
		expect(mergeSettings(bamboo.def, null, gitlabBody, { byGitLabName: true }).properties).toEqual({
			build_server_url: "https://bamboo.example.com",
			build_key: "KEY",
			username: "ci",
			password: "pw",
		});
		// Either name, either way of addressing the integration.
		expect(mergeSettings(spec.def, null, gitlabBody).properties.build_server_url).toBe("https://bamboo.example.com");
		const specBody = { build_server_url: "https://b.example.com", build_key: "KEY", username: "ci", password: "pw" };
		expect(mergeSettings(bamboo.def, null, specBody, { byGitLabName: true }).properties.build_server_url).toBe("https://b.example.com");
		// Both sent: the name of the request's own vocabulary wins.
		const both = { ...gitlabBody, build_server_url: "https://spec.example.com" };
		expect(mergeSettings(bamboo.def, null, both, { byGitLabName: true }).properties.build_server_url).toBe("https://bamboo.example.com");
		expect(mergeSettings(spec.def, null, both).properties.build_server_url).toBe("https://spec.example.com");
		// Errors name the field as the request knows it.
		expect(errorOf(() => mergeSettings(bamboo.def, null, { build_key: "K", username: "u", password: "p" }, { byGitLabName: true }))).toEqual({
			code: 400,
			body: { error: "bamboo_url is missing" },
		});
		expect(errorOf(() => mergeSettings(spec.def, null, { build_key: "K", username: "u", password: "p" }))).toEqual({
			code: 400,
			body: { error: "build_server_url is missing" },
		});
		expect(errorOf(() => mergeSettings(bamboo.def, null, { ...gitlabBody, bamboo_url: "ftp://x" }, { byGitLabName: true }))).toEqual({
			code: 400,
			body: { message: { bamboo_url: ["must be a valid URL"] } },
		});
		const teamcity = resolveIntegration("teamcity")!;
		expect(
			mergeSettings(
				teamcity.def,
				null,
				{ teamcity_url: "https://tc.example.com", build_type: "bt1", username: "u", password: "p" },
				{ byGitLabName: true },
			).properties.build_server_url,
		).toBe("https://tc.example.com");
		const drone = resolveIntegration("drone_ci")!;
		expect(mergeSettings(drone.def, null, { token: "t", drone_url: "https://drone.example.com" }, { byGitLabName: true }).properties).toEqual({
			token: "t",
			ci_server_url: "https://drone.example.com",
		});
	});

	it("works out jira's three links from GitLab's url and project_key, as GitLab 8.16's JIRA service does, and keeps both for v4", () => {
		const jira = resolveIntegration("jira")!;
		const merged = mergeSettings(
			jira.def,
			null,
			{ url: "https://jira.example.com", project_key: "PROJ", username: "u", password: "p" },
			{ byGitLabName: true },
		);
		expect(merged).toEqual({
			properties: {
				url: "https://jira.example.com",
				project_key: "PROJ",
				project_url: "https://jira.example.com/issues/?jql=project=PROJ",
				issues_url: "https://jira.example.com/browse/:id",
				new_issue_url: "https://jira.example.com/secure/CreateIssue.jspa",
			},
			// v3 has no username or password for Jira: ignored, as any unknown field.
			secretsChanged: [],
		});
		// v3 shows the links only; v4 the url and key it was set with.
		const stored = {
			id: 1,
			project_id: 1,
			slug: jira.def.slug,
			project_slug: "1|x",
			active: true,
			properties: merged.properties,
			created_at: "",
			updated_at: "",
		};
		expect(presentIntegration(jira.def, stored, true).properties).toEqual({
			project_url: "https://jira.example.com/issues/?jql=project=PROJ",
			issues_url: "https://jira.example.com/browse/:id",
			new_issue_url: "https://jira.example.com/secure/CreateIssue.jspa",
		});
		expect(v4Properties(jira.def, stored)).toMatchObject({ url: "https://jira.example.com", project_key: "PROJ", username: null });
		expect(errorOf(() => mergeSettings(jira.def, null, { url: "https://jira.example.com" }, { byGitLabName: true }))).toEqual({
			code: 400,
			body: { error: "project_key is missing" },
		});
		expect(errorOf(() => mergeSettings(jira.def, null, { url: "jira.example.com", project_key: "P" }, { byGitLabName: true }))).toEqual({
			code: 400,
			body: { message: { url: ["must be a valid URL"] } },
		});
		// The spec's own fields still work under either name, and win over the worked-out ones.
		const links = { new_issue_url: "https://t.example.com/new", project_url: "https://t.example.com/p", issues_url: "https://t.example.com/i/:id" };
		expect(mergeSettings(jira.def, null, links, { byGitLabName: true }).properties).toEqual(links);
		expect(mergeSettings(jira.def, null, { url: "https://jira.example.com", project_key: "P", ...links }).properties).toEqual({
			...links,
			url: "https://jira.example.com",
			project_key: "P",
		});
		expect(errorOf(() => mergeSettings(jira.def, null, {}, { byGitLabName: true }))).toEqual({
			code: 400,
			body: { error: "new_issue_url is missing, project_url is missing, issues_url is missing" },
		});
	});

	it("parses booleans as GitLab's API does", () => {
		expect([true, "1", "true", 1].map(parseBoolean)).toEqual([true, true, true, true]);
		expect([false, "0", "false", 0].map(parseBoolean)).toEqual([false, false, false, false]);
		expect(["t", "on", null, undefined, "", 2].map(parseBoolean)).toEqual([undefined, undefined, undefined, undefined, undefined, undefined]);
	});
});

describe("integration presenter", () => {
	const doc = (slug: string, properties: Record<string, unknown>, extra: Partial<IntegrationDoc> = {}): IntegrationDoc => ({
		id: 7,
		project_id: 3,
		slug,
		project_slug: `3|${slug}`,
		active: true,
		properties,
		created_at: "2017-01-01T10:00:00.000Z",
		updated_at: "2017-01-02T10:00:00.000Z",
		...extra,
	});

	it("never returns secret fields, whoever asks", () => {
		for (const [slug, spec] of Object.entries(SPEC)) {
			const def = findIntegration(slug)!;
			const props = allValid(slug, [...spec.required, ...spec.optional]);
			const shown = presentIntegration(def, doc(slug, props)).properties;
			for (const s of spec.secret) expect(shown).not.toHaveProperty(s);
			expect(Object.keys(shown).sort()).toEqual([...spec.required, ...spec.optional].filter(f => !spec.secret.includes(f)).sort());
		}
	});

	it("has GitLab's fields, and slices properties to the declared fields", () => {
		const def = findIntegration("task-tracker-comments")!;
		expect(presentIntegration(def, doc(def.slug, { api_key: "v1:x", restrict_to_branch: "master", channels: ["x"] }))).toEqual({
			id: 7,
			title: "Task tracker comments",
			created_at: "2017-01-01T10:00:00.000Z",
			updated_at: "2017-01-02T10:00:00.000Z",
			active: true,
			push_events: true,
			tag_push_events: true,
			issues_events: true,
			merge_requests_events: true,
			note_events: true,
			build_events: true,
			pipeline_events: true,
			properties: { restrict_to_branch: "master" },
		});
	});

	it("shows GitLab's field names when asked by GitLab's service name", () => {
		const def = findIntegration("bamboo")!;
		const stored = doc(def.slug, { build_server_url: "https://b.example.com", build_key: "K", username: "ci", password: "v1:sealed" });
		expect(presentIntegration(def, stored, true).properties).toEqual({ bamboo_url: "https://b.example.com", build_key: "K", username: "ci" });
		expect(presentIntegration(def, stored).properties).toEqual({ build_server_url: "https://b.example.com", build_key: "K", username: "ci" });
	});

	it("shows a never-configured integration as GitLab's unsaved object", () => {
		const def = findIntegration("emails-on-push")!;
		expect(presentIntegration(def, null)).toEqual({
			id: null,
			title: "Emails on push",
			created_at: null,
			updated_at: null,
			active: false,
			push_events: true,
			issues_events: true,
			merge_requests_events: true,
			tag_push_events: true,
			note_events: true,
			build_events: true,
			pipeline_events: true,
			properties: {},
		});
	});

	it("uses the custom issue tracker's title property", () => {
		const def = findIntegration("custom-issue-tracker")!;
		expect(presentIntegration(def, doc(def.slug, { title: "Tracker X" })).title).toBe("Tracker X");
		expect(presentIntegration(def, doc(def.slug, {})).title).toBe("Custom Issue Tracker");
	});

	it("decides whether a record handles an event kind", () => {
		const irc = findIntegration("irc-gateway")!;
		const mail = findIntegration("emails-on-push")!;
		expect(handlesEvent(irc, { active: true }, "push")).toBe(true);
		expect(handlesEvent(irc, { active: true }, "tag_push")).toBe(false);
		expect(handlesEvent(mail, { active: true }, "tag_push")).toBe(true);
		expect(handlesEvent(mail, { active: true, tag_push_events: false }, "tag_push")).toBe(false);
		expect(handlesEvent(mail, { active: false }, "push")).toBe(false);
		expect(handlesEvent(mail, null, "push")).toBe(false);
	});
});

/**
 * GitLab's current integrations API (its doc/api/integrations.md and lib/api/helpers/integrations_helpers.rb,
 * the events its integrations support), written out independently of the catalogue, in GitLab's names;
 * the four GitLab has removed since 8.16 keep 8.16's fields. `hidden`: not secret, yet left out of
 * `properties` (a chat webhook).
 */
/** Slack's events in GitLab's current API, each with a channel of its own. */
const CHANNELS = "push issue confidential_issue merge_request note confidential_note tag_push pipeline wiki_page deployment incident alert".split(" ");
const CURRENT: Record<string, { required: string[]; optional: string[]; secret: string[]; hidden?: string[]; flags: string[] }> = {
	asana: { required: ["api_key"], optional: ["restrict_to_branch"], secret: ["api_key"], flags: ["push_events"] },
	assembla: { required: ["token"], optional: ["subdomain"], secret: ["token"], flags: ["push_events"] },
	bamboo: {
		required: ["bamboo_url", "build_key", "username", "password"],
		optional: ["enable_ssl_verification"],
		secret: ["password"],
		flags: ["push_events"],
	},
	buildkite: {
		required: ["token", "project_url"],
		optional: ["enable_ssl_verification"],
		secret: ["token"],
		flags: ["push_events", "merge_requests_events", "tag_push_events"],
	},
	campfire: { required: ["token"], optional: ["subdomain", "room"], secret: ["token"], flags: ["push_events"] },
	"custom-issue-tracker": { required: ["new_issue_url", "issues_url", "project_url"], optional: [], secret: [], flags: ["push_events"] },
	"drone-ci": {
		required: ["token", "drone_url"],
		optional: ["enable_ssl_verification"],
		secret: ["token"],
		flags: ["push_events", "merge_requests_events", "tag_push_events"],
	},
	"emails-on-push": {
		required: ["recipients"],
		optional: ["disable_diffs", "send_from_committer_email", "branches_to_be_notified"],
		secret: [],
		flags: ["push_events", "tag_push_events"],
	},
	"external-wiki": { required: ["external_wiki_url"], optional: [], secret: [], flags: [] },
	flowdock: { required: ["token"], optional: [], secret: ["token"], flags: ["push_events"] },
	gemnasium: { required: ["api_key", "token"], optional: [], secret: ["api_key", "token"], flags: ["push_events"] },
	"gitlab-ci": { required: ["token", "project_url"], optional: ["enable_ssl_verification"], secret: ["token"], flags: ["push_events", "tag_push_events"] },
	hipchat: {
		required: ["token"],
		optional: ["color", "notify", "room", "api_version", "server"],
		secret: ["token"],
		flags: ["push_events", "issues_events", "confidential_issues_events", "merge_requests_events", "note_events", "tag_push_events", "job_events"],
	},
	irker: { required: ["recipients"], optional: ["default_irc_uri", "server_host", "server_port", "colorize_messages"], secret: [], flags: ["push_events"] },
	jira: {
		required: ["url", "password"],
		optional: [
			"api_url",
			"jira_auth_type",
			"username",
			"jira_issue_transition_automatic",
			"jira_issue_transition_id",
			"jira_issue_prefix",
			"jira_issue_regex",
			"project_key",
			"issues_enabled",
		],
		secret: ["password"],
		flags: ["commit_events", "merge_requests_events", "comment_on_event_enabled"],
	},
	pivotaltracker: { required: ["token"], optional: ["restrict_to_branch"], secret: ["token"], flags: ["push_events"] },
	pushover: { required: ["api_key", "user_key", "priority"], optional: ["device", "sound"], secret: ["api_key", "user_key"], flags: ["push_events"] },
	redmine: { required: ["new_issue_url", "project_url", "issues_url"], optional: [], secret: [], flags: ["push_events"] },
	slack: {
		required: ["webhook"],
		optional: ["username", "channel", "notify_only_broken_pipelines", "branches_to_be_notified", ...CHANNELS.map(e => `${e}_channel`)],
		secret: [],
		hidden: ["webhook"],
		flags: [
			"push_events",
			"issues_events",
			"confidential_issues_events",
			"merge_requests_events",
			"note_events",
			"confidential_note_events",
			"tag_push_events",
			"pipeline_events",
			"wiki_page_events",
			"deployment_events",
			"incident_events",
			"alert_events",
		],
	},
	teamcity: {
		required: ["teamcity_url", "build_type", "username", "password"],
		optional: ["enable_ssl_verification"],
		secret: ["password"],
		flags: ["push_events", "merge_requests_events"],
	},
};

describe("GitLab's current integrations API (v4)", () => {
	const v4Names = (name: string, pick: (f: ReturnType<typeof fieldsOf>[number]) => boolean) =>
		fieldsOf(resolveIntegration(name)!.def, "v4")
			.filter(pick)
			.map(f => fieldLabel(f, true))
			.sort();

	it.each(Object.entries(CURRENT))("%s takes GitLab's current fields and flags", (name, current) => {
		const def = resolveIntegration(name)!.def;
		expect(v4Names(name, f => isRequired(f, "v4"))).toEqual([...current.required].sort());
		expect(v4Names(name, f => !isRequired(f, "v4"))).toEqual([...current.optional].sort());
		expect(v4Names(name, isSecret)).toEqual([...current.secret].sort());
		expect(v4FlagNames(def).sort()).toEqual([...current.flags].sort());
		// Every field but the secrets and the hidden ones is shown, set or not.
		expect(Object.keys(v4Properties(def, null)).sort()).toEqual(
			[...current.required, ...current.optional].filter(f => !current.secret.includes(f) && !current.hidden?.includes(f)).sort(),
		);
	});

	it("takes Jira as GitLab's current API sends it: url, username and password, no project key", () => {
		const { def } = resolveIntegration("jira")!;
		const sent = { url: "https://jira.example.com", username: "bot", password: "s3cret", jira_auth_type: "0", jira_issue_transition_automatic: "true" };
		const merged = mergeSettings(def, null, sent, { byGitLabName: true, version: "v4" });
		expect(merged).toEqual({
			properties: {
				url: "https://jira.example.com",
				username: "bot",
				password: "s3cret",
				jira_auth_type: 0,
				jira_issue_transition_automatic: true,
				// The spec's links, for v3: the project's is the server's without a key.
				project_url: "https://jira.example.com",
				issues_url: "https://jira.example.com/browse/:id",
				new_issue_url: "https://jira.example.com/secure/CreateIssue.jspa",
			},
			secretsChanged: ["password"],
		});
		const doc = { id: 1, project_id: 1, slug: def.slug, project_slug: "1|x", active: true, properties: merged.properties, created_at: "", updated_at: "" };
		expect(v4Properties(def, doc)).toEqual({
			url: "https://jira.example.com",
			api_url: null,
			jira_auth_type: 0,
			username: "bot",
			project_key: null,
			jira_issue_transition_automatic: true,
			jira_issue_transition_id: null,
			jira_issue_prefix: null,
			jira_issue_regex: null,
			issues_enabled: false,
		});
		expect(errorOf(() => mergeSettings(def, null, { username: "bot" }, { byGitLabName: true, version: "v4" }))).toEqual({
			code: 400,
			body: { error: "url is missing, password is missing" },
		});
		// A stored password does not follow the URL to another server.
		expect(errorOf(() => mergeSettings(def, merged.properties, { url: "https://elsewhere.example.com" }, { byGitLabName: true, version: "v4" }))).toEqual({
			code: 400,
			body: { error: "password is missing" },
		});
		expect(mergeSettings(def, merged.properties, { url: "https://jira.example.com" }, { byGitLabName: true, version: "v4" }).properties.password).toBe(
			"s3cret",
		);
		expect(errorOf(() => mergeSettings(def, null, { ...sent, jira_auth_type: "2" }, { byGitLabName: true, version: "v4" }))).toEqual({
			code: 400,
			body: { error: "jira_auth_type does not have a valid value" },
		});
	});

	it("keeps slack's notification settings, reads booleans as Grape does and refuses a branch choice GitLab has not", () => {
		const { def } = resolveIntegration("slack")!;
		const v4 = { byGitLabName: true, version: "v4" } as const;
		const sent = {
			webhook: "https://hooks.slack.com/services/x",
			notify_only_broken_pipelines: "no",
			branches_to_be_notified: "all",
			push_channel: "#pushes",
		};
		const merged = mergeSettings(def, null, sent, v4);
		expect(merged.properties).toEqual({
			webhook: sent.webhook,
			notify_only_broken_pipelines: false,
			branches_to_be_notified: "all",
			push_channel: "#pushes",
		});
		const doc = { id: 1, project_id: 1, slug: def.slug, project_slug: "1|x", active: true, properties: merged.properties, created_at: "", updated_at: "" };
		expect(v4Properties(def, doc)).toMatchObject({
			notify_only_broken_pipelines: false,
			branches_to_be_notified: "all",
			push_channel: "#pushes",
			issue_channel: null,
		});
		expect(v4Properties(def, doc)).not.toHaveProperty("webhook");
		// Unset, GitLab's defaults.
		expect(v4Properties(def, null)).toMatchObject({ notify_only_broken_pipelines: true, branches_to_be_notified: "default", username: null });
		expect(errorOf(() => mergeSettings(def, null, { ...sent, branches_to_be_notified: "main" }, v4))).toEqual({
			code: 400,
			body: { error: "branches_to_be_notified does not have a valid value" },
		});
		expect(errorOf(() => mergeSettings(def, null, { ...sent, notify_only_broken_pipelines: "maybe" }, v4))).toEqual({
			code: 400,
			body: { error: "notify_only_broken_pipelines is invalid" },
		});
		// v3 (GitLab 8.16's slack, the spec's team-chat) neither takes nor shows them, and keeps them through its PUT.
		const v3 = mergeSettings(
			def,
			merged.properties,
			{ webhook: "https://hooks.slack.com/services/y", notify_only_broken_pipelines: "true" },
			{ byGitLabName: true },
		);
		expect(v3.properties).toEqual({ ...merged.properties, webhook: "https://hooks.slack.com/services/y" });
		expect(presentIntegration(def, { ...doc, properties: v3.properties }, true).properties).toEqual({ webhook: "https://hooks.slack.com/services/y" });
		expect(mergeSettings(def, null, { webhook: sent.webhook, username: "t" }, { byGitLabName: true }).properties).toEqual({
			webhook: sent.webhook,
			username: "t",
		});
	});
});
