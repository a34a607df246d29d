/**
 * The integration catalogue: one declarative entry per slug of docs/integrations.md#catalogue (fields, types,
 * required and secret flags, validation, supported events). Validation, storage and the GET
 * presenter are driven by it, so adding an integration is adding one entry.
 *
 * Fields follow the product's table; for the two slugs whose list it left open, GitLab 8.16's
 * (pipeline-service-a = Buildkite, team-chat = Slack). Secret fields (passwords, tokens, API
 * keys, user keys) are encrypted at rest by the integrations service and never presented.
 */
import { parseRecipients } from "./irc/recipients";

export type FieldType = "string" | "url" | "boolean" | "integer" | "select" | "password";

export type EventKind = "push" | "tag_push" | "issue" | "confidential_issue" | "merge_request" | "note" | "build" | "wiki_page";

export interface FieldDef {
	name: string;
	type: FieldType;
	required?: boolean;
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
}

export interface IntegrationDef {
	slug: string;
	title: string;
	description: string;
	fields: readonly FieldDef[];
	events: readonly EventKind[];
	/** A stored property that, when set, replaces the title (custom issue tracker). */
	titleProperty?: string;
	/** Model validation over the merged properties: field → messages. */
	validate?: (props: Record<string, unknown>) => Record<string, string[]> | null;
}

const str = (name: string, required = false): FieldDef => ({ name, type: "string", required });
const url = (name: string, required = false): FieldDef => ({ name, type: "url", required });
const bool = (name: string): FieldDef => ({ name, type: "boolean" });
const secret = (name: string, required = true): FieldDef => ({ name, type: "string", required, secret: true });
const password = (name: string, resetWhenChanged: string[]): FieldDef => ({ name, type: "password", required: true, secret: true, resetWhenChanged });

const ISSUE_TRACKER_FIELDS = [url("new_issue_url", true), url("project_url", true), url("issues_url", true), str("description")];

const PUSHOVER_SOUNDS = [
	"pushover",
	"bike",
	"bugle",
	"cashregister",
	"classical",
	"cosmic",
	"falling",
	"gamelan",
	"incoming",
	"intermission",
	"magic",
	"mechanical",
	"pianobar",
	"siren",
	"spacealarm",
	"tugboat",
	"alien",
	"climb",
	"persistent",
	"echo",
	"updown",
	"none",
] as const;

export const CATALOGUE: readonly IntegrationDef[] = [
	{
		slug: "task-tracker-comments",
		title: "Task tracker comments",
		description: "Adds commit messages as comments to tasks in a task tracker",
		fields: [secret("api_key"), str("restrict_to_branch")],
		events: ["push"],
	},
	{
		slug: "source-commits-a",
		title: "Source commits A",
		description: "Project-management tool receiving source commits",
		fields: [secret("token"), str("subdomain")],
		events: ["push"],
	},
	{
		slug: "build-server-a",
		title: "Build server A",
		description: "Continuous-integration build server",
		fields: [url("build_server_url", true), str("build_key", true), str("username", true), password("password", ["build_server_url"])],
		events: ["push"],
	},
	{
		slug: "pipeline-service-a",
		title: "Pipeline service A",
		description: "Continuous integration and deployment service",
		fields: [secret("token"), url("project_url", true), bool("enable_ssl_verification")],
		events: ["push"],
	},
	{
		slug: "group-chat-a",
		title: "Group chat A",
		description: "Web-based real-time group chat",
		fields: [secret("token"), str("subdomain"), str("room")],
		events: ["push"],
	},
	{
		slug: "custom-issue-tracker",
		title: "Custom Issue Tracker",
		description: "Custom issue tracker",
		fields: [...ISSUE_TRACKER_FIELDS, str("title")],
		events: ["push"],
		titleProperty: "title",
	},
	{
		slug: "container-ci-a",
		title: "Container CI A",
		description: "Continuous-integration platform",
		fields: [secret("token"), url("ci_server_url", true), bool("enable_ssl_verification")],
		events: ["push", "merge_request", "tag_push"],
	},
	{
		slug: "emails-on-push",
		title: "Emails on push",
		description: "Emails the commits and diff of each push to recipients",
		fields: [str("recipients", true), bool("disable_diffs"), bool("send_from_committer_email")],
		events: ["push", "tag_push"],
	},
	{
		slug: "external-wiki",
		title: "External Wiki",
		description: "Replaces the link to the internal wiki with a link to an external wiki",
		fields: [url("external_wiki_url", true)],
		events: ["push", "tag_push", "issue", "merge_request", "wiki_page"],
	},
	{
		slug: "collab-app-a",
		title: "Collaboration app A",
		description: "Collaboration web app",
		fields: [secret("token")],
		events: ["push"],
	},
	{
		slug: "dependency-monitor",
		title: "Dependency monitor",
		description: "Monitors project dependencies and reports updates and vulnerabilities",
		fields: [secret("api_key"), secret("token")],
		events: ["push"],
	},
	{
		slug: "ci-server-a",
		title: "CI server A",
		description: "Continuous-integration server of the same product family",
		fields: [{ ...secret("token"), pattern: /^[A-Za-z0-9]+$/, patternMessage: "is invalid" }, url("project_url", true), bool("enable_ssl_verification")],
		events: ["push", "tag_push"],
	},
	{
		slug: "group-chat-b",
		title: "Group chat B",
		description: "Private group chat and instant messaging",
		fields: [
			secret("token"),
			{ name: "color", type: "select", options: ["yellow", "red", "green", "purple", "gray", "random"] },
			bool("notify"),
			str("room"),
			str("api_version"),
			url("server"),
		],
		events: ["push", "issue", "confidential_issue", "merge_request", "note", "tag_push", "build"],
	},
	{
		slug: "irc-gateway",
		title: "IRC gateway",
		description: "Sends IRC messages on update to recipients through a gateway daemon",
		fields: [
			str("recipients", true),
			str("default_irc_uri"),
			{ name: "server_port", type: "integer", min: 1, max: 65535 },
			str("server_host"),
			bool("colorize_messages"),
		],
		events: ["push"],
		validate: props => {
			const recipients = String(props.recipients ?? "");
			if (recipients.trim() && parseRecipients(recipients, props.default_irc_uri as string | undefined).length === 0)
				return { recipients: ["are all invalid"] };
			return null;
		},
	},
	{
		slug: "issue-tracker-a",
		title: "Issue tracker A",
		description: "Issue tracker",
		fields: ISSUE_TRACKER_FIELDS,
		events: ["push"],
	},
	{
		slug: "source-commits-b",
		title: "Source commits B",
		description: "Project-management tool receiving source commits",
		fields: [secret("token")],
		events: ["push"],
	},
	{
		slug: "push-notifications",
		title: "Push notifications",
		description: "Real-time notifications to mobile and desktop devices",
		fields: [
			secret("api_key"),
			secret("user_key"),
			{ name: "priority", type: "select", required: true, options: ["-2", "-1", "0", "1"] },
			str("device"),
			{ name: "sound", type: "select", options: PUSHOVER_SOUNDS },
		],
		events: ["push"],
	},
	{
		slug: "issue-tracker-b",
		title: "Issue tracker B",
		description: "Issue tracker",
		fields: ISSUE_TRACKER_FIELDS,
		events: ["push"],
	},
	{
		slug: "team-chat",
		title: "Team chat",
		description: "Team communication tool",
		fields: [url("webhook", true), str("username"), str("channel")],
		events: ["push", "issue", "confidential_issue", "merge_request", "note", "tag_push", "build", "wiki_page"],
	},
	{
		slug: "build-server-b",
		title: "Build server B",
		description: "Continuous-integration build server",
		fields: [url("build_server_url", true), str("build_type", true), str("username", true), password("password", ["build_server_url"])],
		events: ["push"],
	},
];

const BY_SLUG = new Map(CATALOGUE.map(d => [d.slug, d]));

/** `drone_ci` and `drone-ci` alike (clients send both); null for an unknown slug. */
export function findIntegration(slug: string): IntegrationDef | null {
	return BY_SLUG.get(String(slug ?? "").replace(/_/g, "-")) ?? null;
}

export const isSecret = (f: FieldDef) => !!f.secret || f.type === "password";

export function secretFieldNames(def: IntegrationDef): string[] {
	return def.fields.filter(isSecret).map(f => f.name);
}
