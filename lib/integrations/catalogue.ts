/**
 * The integration catalogue: one declarative entry per slug of docs/integrations.md#catalogue (fields, types,
 * required and secret flags, validation, supported events). Validation, storage and the GET
 * presenters are driven by it, so adding an integration is adding one entry.
 *
 * Fields follow the product's table; for the two slugs whose list it left open, GitLab 8.16's
 * (pipeline-service-a = Buildkite, team-chat = Slack). Secret fields (passwords, tokens, API
 * keys, user keys) are encrypted at rest by the integrations service and never presented.
 *
 * Every entry also carries GitLab 8.16's service name (`slack` for team-chat), an alias of the
 * slug, so that scripts written for GitLab work unchanged; where GitLab names a field otherwise
 * (`bamboo_url` for build_server_url), its name is accepted too, and is the one shown and named
 * in errors when the integration is addressed by GitLab's name.
 *
 * Two APIs speak of the same records (docs/integrations.md#versions): v3 (the spec's fields, and
 * GitLab 8.16's by its service names) and v4 (GitLab's current integrations API, which added
 * fields and events and dropped a few). A field in one of them only says so (`only`), and one
 * required in one of them only names it (`required: "v4"`); each is stored once, under one name.
 */
import { IRC_ADDRESS_SECRETS, parseRecipients } from "./irc-gateway/recipients";

type FieldType = "string" | "url" | "boolean" | "integer" | "select" | "password";

/** The events an integration may act on, as GitLab names them (`push` → `push_events`). */
export type EventKind =
	| "push"
	| "tag_push"
	| "issue"
	| "confidential_issue"
	| "merge_request"
	| "note"
	| "confidential_note"
	| "build"
	| "pipeline"
	| "wiki_page"
	| "commit"
	| "deployment"
	| "incident"
	| "alert";

/** Which API a request speaks: v3 (the spec's names or GitLab 8.16's) or v4 (GitLab's current integrations API). */
export type ApiVersion = "v3" | "v4";

export interface FieldDef {
	name: string;
	type: FieldType;
	/** Required in both APIs, or in the one named. */
	required?: boolean | ApiVersion;
	/** Part of one API only (`v4`: a field GitLab added since 8.16; `v3`: one it has dropped); both when absent. */
	only?: ApiVersion;
	/** Not shown by v4 though not secret: GitLab's current API leaves a chat webhook out of `properties` (it holds a credential). */
	v4Hidden?: boolean;
	/** What v4 shows while the field is unset: GitLab's default for it (null when it has none). */
	default?: string | number | boolean;
	/** Encrypted at rest, never returned. Every `password` field is secret. */
	secret?: boolean;
	/** `select`: the accepted values. */
	options?: readonly string[];
	/** `integer`: bounds. */
	min?: number;
	max?: number;
	/** A format rule with its model error message (`{"message":{"token":["is invalid"]}}`). */
	pattern?: RegExp;
	patternMessage?: string;
	/**
	 * Cleared when one of these fields changes and this one is not sent again: the password
	 * must not follow a URL to a new server (GitLab's `reset_password`).
	 */
	resetWhenChanged?: readonly string[];
	/** GitLab's name for the field where it differs from the spec's (`bamboo_url`); accepted as well. */
	gitlabName?: string;
	/** Text that carries secrets inside it (an IRC channel key): shown without them, kept when a PUT sends it back so. */
	embeddedSecrets?: EmbeddedSecrets;
}

interface EmbeddedSecrets {
	shown(value: string): string;
	kept(sent: string, stored: string): string;
}

/** GitLab parameters that are not a renaming of the spec's fields, turned into the spec's fields. */
interface FromGitLab {
	/** The spec's fields worked out from GitLab's parameters (none when they were not sent). */
	fields: Record<string, unknown>;
	/** GitLab parameters the work-out needs and did not get: `project_key is missing`. */
	missing: string[];
	/** The GitLab parameter each worked-out field came from, so that its errors name what was sent. */
	sources?: Record<string, string>;
}

export interface IntegrationDef {
	slug: string;
	/** GitLab's service name (`/services/slack`), an alias of the slug; `-` or `_` alike. */
	gitlabName: string;
	title: string;
	description: string;
	fields: readonly FieldDef[];
	/** GitLab 8.16's supported events: what the push workers act on (`push`, `tag_push`). */
	events: readonly EventKind[];
	/** GitLab's current supported events where they differ: the event flags a v4 PUT takes. */
	v4Events?: readonly EventKind[];
	/** Flags a v4 PUT takes beside its events' (Jira's `comment_on_event_enabled`). */
	v4Flags?: readonly string[];
	/** A stored property that, when set, replaces the title (custom issue tracker). */
	titleProperty?: string;
	/** Model validation over the merged properties: field → messages. */
	validate?: (props: Record<string, unknown>) => Record<string, string[]> | null;
	/** GitLab's own parameters for this integration where they are not renamings (jira's `url`, `project_key`). */
	fromGitLab?: (input: Record<string, unknown>, version: ApiVersion) => FromGitLab;
}

const str = (name: string, required: FieldDef["required"] = false): FieldDef => ({ name, type: "string", required });
const url = (name: string, required: FieldDef["required"] = false): FieldDef => ({ name, type: "url", required });
const bool = (name: string): FieldDef => ({ name, type: "boolean" });
const secret = (name: string, required = true): FieldDef => ({ name, type: "string", required, secret: true });
const password = (name: string, resetWhenChanged: string[]): FieldDef => ({ name, type: "password", required: true, secret: true, resetWhenChanged });
/** A field GitLab's current API has and 8.16's had not: v4's only. */
const v4 = (f: FieldDef): FieldDef => ({ ...f, only: "v4" });
/** A field of the spec's (or GitLab 8.16's) that GitLab's current API no longer has: v3's only. */
const v3 = (f: FieldDef): FieldDef => ({ ...f, only: "v3" });

/** GitLab's `branches_to_be_notified` (docs/integrations.md#branches-to-be-notified). */
const BRANCH_CHOICES = ["all", "default", "protected", "default_and_protected"] as const;
const branchesToBeNotified = (fallback: (typeof BRANCH_CHOICES)[number]): FieldDef =>
	v4({ name: "branches_to_be_notified", type: "select", options: BRANCH_CHOICES, default: fallback });
/** `enable_ssl_verification` of the CI servers, which GitLab's current API defaults to on. */
const sslVerification = (only?: ApiVersion): FieldDef => ({ ...bool("enable_ssl_verification"), default: true, ...(only ? { only } : {}) });

const ISSUE_TRACKER_LINKS = [url("new_issue_url", true), url("project_url", true), url("issues_url", true)];
const ISSUE_TRACKER_FIELDS = [...ISSUE_TRACKER_LINKS, v3(str("description"))];

/** The chat events of GitLab's current Slack notifications, each with a channel of its own (`push_channel`). */
const CHAT_EVENTS = [
	"push",
	"issue",
	"confidential_issue",
	"merge_request",
	"note",
	"confidential_note",
	"tag_push",
	"pipeline",
	"wiki_page",
	"deployment",
	"incident",
	"alert",
] as const;

const given = (v: unknown): v is string | number => (typeof v === "string" && v.trim() !== "") || typeof v === "number";

/**
 * Jira's server `url` and its project key, kept, and the spec's three links worked out from them
 * (GitLab 8.16's JiraService#project_url, #issues_url, #new_issue_url), so that v3 shows the links
 * of a Jira set either way and v4 the `url` of one set through v3; fields sent as well win. GitLab 8.16 (v3) needs
 * the `project_key` to link the project; GitLab's current API (v4) does not, and the project link is
 * then the server's.
 */
function jiraLinks(input: Record<string, unknown>, version: ApiVersion): FromGitLab {
	if (!given(input.url)) return { fields: {}, missing: [] };
	const key = given(input.project_key) ? String(input.project_key).trim() : null;
	if (key === null && version === "v3") return { fields: {}, missing: ["project_key"] };
	const base = String(input.url).trim();
	return {
		fields: {
			url: base,
			...(key === null ? {} : { project_key: key }),
			project_url: key === null ? base : `${base}/issues/?jql=project=${key}`,
			issues_url: `${base}/browse/:id`,
			new_issue_url: `${base}/secure/CreateIssue.jspa`,
		},
		missing: [],
		sources: { project_url: "url", issues_url: "url", new_issue_url: "url" },
	};
}

export const CATALOGUE: readonly IntegrationDef[] = [
	{
		slug: "task-tracker-comments",
		gitlabName: "asana",
		title: "Task tracker comments",
		description: "Adds commit messages as comments to tasks in a task tracker",
		fields: [secret("api_key"), str("restrict_to_branch")],
		events: ["push"],
	},
	{
		slug: "source-commits-a",
		gitlabName: "assembla",
		title: "Source commits A",
		description: "Project-management tool receiving source commits",
		fields: [secret("token"), str("subdomain")],
		events: ["push"],
	},
	{
		slug: "build-server-a",
		gitlabName: "bamboo",
		title: "Build server A",
		description: "Continuous-integration build server",
		fields: [
			{ ...url("build_server_url", true), gitlabName: "bamboo_url" },
			sslVerification("v4"),
			str("build_key", true),
			str("username", true),
			password("password", ["build_server_url"]),
		],
		events: ["push"],
	},
	{
		slug: "pipeline-service-a",
		gitlabName: "buildkite",
		title: "Pipeline service A",
		description: "Continuous integration and deployment service",
		fields: [secret("token"), url("project_url", true), sslVerification()],
		events: ["push"],
		v4Events: ["push", "merge_request", "tag_push"],
	},
	{
		slug: "group-chat-a",
		gitlabName: "campfire",
		title: "Group chat A",
		description: "Web-based real-time group chat",
		fields: [secret("token"), str("subdomain"), str("room")],
		events: ["push"],
	},
	{
		slug: "custom-issue-tracker",
		gitlabName: "custom-issue-tracker",
		title: "Custom Issue Tracker",
		description: "Custom issue tracker",
		fields: [...ISSUE_TRACKER_FIELDS, v3(str("title"))],
		events: ["push"],
		titleProperty: "title",
	},
	{
		slug: "container-ci-a",
		gitlabName: "drone-ci",
		title: "Container CI A",
		description: "Continuous-integration platform",
		fields: [secret("token"), { ...url("ci_server_url", true), gitlabName: "drone_url" }, sslVerification()],
		events: ["push", "merge_request", "tag_push"],
	},
	{
		slug: "emails-on-push",
		gitlabName: "emails-on-push",
		title: "Emails on push",
		description: "Emails the commits and diff of each push to recipients",
		fields: [str("recipients", true), bool("disable_diffs"), bool("send_from_committer_email"), branchesToBeNotified("all")],
		events: ["push", "tag_push"],
	},
	{
		slug: "external-wiki",
		gitlabName: "external-wiki",
		title: "External Wiki",
		description: "Replaces the link to the internal wiki with a link to an external wiki",
		fields: [url("external_wiki_url", true)],
		events: ["push", "tag_push", "issue", "merge_request", "wiki_page"],
		v4Events: [],
	},
	{
		slug: "collab-app-a",
		gitlabName: "flowdock",
		title: "Collaboration app A",
		description: "Collaboration web app",
		fields: [secret("token")],
		events: ["push"],
	},
	{
		slug: "dependency-monitor",
		gitlabName: "gemnasium",
		title: "Dependency monitor",
		description: "Monitors project dependencies and reports updates and vulnerabilities",
		fields: [secret("api_key"), secret("token")],
		events: ["push"],
	},
	{
		slug: "ci-server-a",
		gitlabName: "gitlab-ci",
		title: "CI server A",
		description: "Continuous-integration server of the same product family",
		fields: [{ ...secret("token"), pattern: /^[A-Za-z0-9]+$/, patternMessage: "is invalid" }, url("project_url", true), bool("enable_ssl_verification")],
		events: ["push", "tag_push"],
	},
	{
		slug: "group-chat-b",
		gitlabName: "hipchat",
		title: "Group chat B",
		description: "Private group chat and instant messaging",
		fields: [
			secret("token"),
			// GitLab 8.16 stores color and server as given (its form offers a list and a URL, its model checks neither).
			str("color"),
			bool("notify"),
			str("room"),
			str("api_version"),
			str("server"),
		],
		events: ["push", "issue", "confidential_issue", "merge_request", "note", "tag_push", "build"],
	},
	{
		slug: "irc-gateway",
		gitlabName: "irker",
		title: "IRC gateway",
		description: "Sends IRC messages on update to recipients through a gateway daemon",
		fields: [
			{ ...str("recipients", true), embeddedSecrets: IRC_ADDRESS_SECRETS },
			{ ...str("default_irc_uri"), embeddedSecrets: IRC_ADDRESS_SECRETS },
			{ name: "server_port", type: "integer", min: 1, max: 65535 },
			str("server_host"),
			bool("colorize_messages"),
		],
		events: ["push"],
		validate: props => {
			const recipients = typeof props.recipients === "string" ? props.recipients : "";
			if (recipients.trim() && parseRecipients(recipients, props.default_irc_uri as string | undefined).length === 0)
				return { recipients: ["are all invalid"] };
			return null;
		},
	},
	{
		slug: "issue-tracker-a",
		gitlabName: "jira",
		title: "Issue tracker A",
		description: "Issue tracker",
		fields: [
			// The spec's links (v3), which GitLab's `url` and `project_key` also give (jiraLinks).
			...ISSUE_TRACKER_LINKS.map(v3),
			v3(str("description")),
			// GitLab's current Jira (v4).
			v4(url("url", "v4")),
			v4(url("api_url")),
			v4({ name: "jira_auth_type", type: "integer", min: 0, max: 1, default: 0 }),
			v4(str("username")),
			v4({ ...password("password", ["url", "api_url"]), required: "v4" }),
			v4(str("project_key")),
			v4(bool("jira_issue_transition_automatic")),
			v4(str("jira_issue_transition_id")),
			v4(str("jira_issue_prefix")),
			v4(str("jira_issue_regex")),
			v4({ ...bool("issues_enabled"), default: false }),
		],
		events: ["push"],
		v4Events: ["commit", "merge_request"],
		v4Flags: ["comment_on_event_enabled"],
		fromGitLab: jiraLinks,
	},
	{
		slug: "source-commits-b",
		gitlabName: "pivotaltracker",
		title: "Source commits B",
		description: "Project-management tool receiving source commits",
		fields: [secret("token"), v4(str("restrict_to_branch"))],
		events: ["push"],
	},
	{
		slug: "push-notifications",
		gitlabName: "pushover",
		title: "Push notifications",
		description: "Real-time notifications to mobile and desktop devices",
		fields: [
			secret("api_key"),
			secret("user_key"),
			// Stored as given, as GitLab 8.16 does (its form offers lists, its model checks neither).
			str("priority", true),
			str("device"),
			str("sound"),
		],
		events: ["push"],
	},
	{
		slug: "issue-tracker-b",
		gitlabName: "redmine",
		title: "Issue tracker B",
		description: "Issue tracker",
		fields: ISSUE_TRACKER_FIELDS,
		events: ["push"],
	},
	{
		slug: "team-chat",
		gitlabName: "slack",
		title: "Team chat",
		description: "Team communication tool",
		fields: [
			{ ...url("webhook", true), v4Hidden: true },
			str("username"),
			str("channel"),
			v4({ ...bool("notify_only_broken_pipelines"), default: true }),
			branchesToBeNotified("default"),
			...CHAT_EVENTS.map(event => v4(str(`${event}_channel`))),
		],
		events: ["push", "issue", "confidential_issue", "merge_request", "note", "tag_push", "build", "wiki_page"],
		v4Events: CHAT_EVENTS,
	},
	{
		slug: "build-server-b",
		gitlabName: "teamcity",
		title: "Build server B",
		description: "Continuous-integration build server",
		fields: [
			{ ...url("build_server_url", true), gitlabName: "teamcity_url" },
			sslVerification("v4"),
			str("build_type", true),
			str("username", true),
			password("password", ["build_server_url"]),
		],
		events: ["push"],
		v4Events: ["push", "merge_request"],
	},
];

const BY_SLUG = new Map(CATALOGUE.map(d => [d.slug, d]));
const BY_GITLAB_NAME = new Map(CATALOGUE.map(d => [d.gitlabName, d]));

/** An integration as a request names it: by the spec's slug, or by GitLab 8.16's service name. */
export interface NamedIntegration {
	def: IntegrationDef;
	/** Addressed by GitLab's name (that is not also the slug): GitLab's field names are used. */
	byGitLabName: boolean;
}

/** `drone_ci` and `drone-ci` alike (clients send both), the spec's slug or GitLab's name; null when unknown. */
export function resolveIntegration(name: string): NamedIntegration | null {
	const key = String(name ?? "").replace(/_/g, "-");
	const bySlug = BY_SLUG.get(key);
	if (bySlug) return { def: bySlug, byGitLabName: false };
	const byGitLab = BY_GITLAB_NAME.get(key);
	return byGitLab ? { def: byGitLab, byGitLabName: true } : null;
}

/** The integration of a slug or GitLab service name; null for an unknown one. */
export function findIntegration(slug: string): IntegrationDef | null {
	return resolveIntegration(slug)?.def ?? null;
}

/** The name a field goes by: GitLab's where it differs and the request used GitLab's service name. */
export function fieldLabel(f: FieldDef, byGitLabName: boolean): string {
	return byGitLabName && f.gitlabName ? f.gitlabName : f.name;
}

export const isSecret = (f: FieldDef) => !!f.secret || f.type === "password";

/** The fields one API takes and shows. */
export const fieldsOf = (def: IntegrationDef, version: ApiVersion): FieldDef[] => def.fields.filter(f => f.only === undefined || f.only === version);

/** Whether one API requires the field. */
export const isRequired = (f: FieldDef, version: ApiVersion): boolean => f.required === true || f.required === version;

/** An event's flag as GitLab names it (IntegrationsHelper's `integration_event_field_name`): `issue` → `issues_events`, `build` → `job_events`. */
function eventFlagName(kind: EventKind): string {
	if (kind === "build") return "job_events";
	return ["issue", "confidential_issue", "merge_request"].includes(kind) ? `${kind}s_events` : `${kind}_events`;
}

/** The flags a v4 PUT takes for the integration: its current events' (GitLab's `event_names`) and its own. */
export const v4FlagNames = (def: IntegrationDef): string[] => [...(def.v4Events ?? def.events).map(eventFlagName), ...(def.v4Flags ?? [])];
