/**
 * The emails-on-push mail, as GitLab 8.x renders it (docs/integrations.md#emails-on-push;
 * Gitlab::Email::Message::RepositoryPush and repository_push_email.text.haml): subject, text
 * body, sender rules and headers. Pure: the push-mailer worker sends what this returns.
 *
 * The payload carries no repository, so two things come from it rather than from a compare:
 * the changed files (the optional `diffs`, else the commits' added/modified/removed) and the
 * diff text (only when the payload has `diffs`). A push without new commits sends nothing,
 * as GitLab does for an identical compare (the "reverse compare" of a force-push that only
 * removed commits cannot be told apart without the repository).
 */
import type { PushCommit, PushDiff, PushPayload } from "../../push/payload";
import { commitTitle, isBlankSha, isTagRef, refName } from "../../push/payload";

/** GitLab's email diff limits (late 8.x). */
const MAX_DIFF_FILES = 30;
const MAX_DIFF_LINES = 5000;

type PushAction = "create" | "delete" | "push";

export interface PushEmailOptions {
	gitlabUrl: string;
	/** The instance sender (MAIL_FROM). */
	mailFrom: string;
	disableDiffs: boolean;
	sendFromCommitterEmail: boolean;
}

export interface PushEmail {
	subject: string;
	text: string;
	from: { name: string; address: string };
	replyTo: string;
	headers: Record<string, string>;
}

export interface ChangedFile {
	old_path: string;
	new_path: string;
	new_file: boolean;
	deleted_file: boolean;
	renamed_file: boolean;
}

function pushAction(push: PushPayload): PushAction {
	if (isBlankSha(push.before)) return "create";
	if (isBlankSha(push.after)) return "delete";
	return "push";
}

/** One plain address (`user@host.tld`): nothing a mail header could read as a name, a group or a second address. */
function isPlainAddress(text: string): boolean {
	return text.length <= 254 && /^[^\s@<>(),;:"\\[\]]+@[^\s@<>(),;:"\\[\]]+\.[^\s@<>(),;:"\\[\]]+$/.test(text);
}

/**
 * `recipients.split` on whitespace, as GitLab: commas are not separators. An address given twice
 * in any case is one recipient (its first spelling): push-mailer keys a delivery on the address
 * in lower case.
 */
export function splitRecipients(recipients: string | null | undefined): { valid: string[]; invalid: string[] } {
	const valid: string[] = [];
	const invalid: string[] = [];
	const seen = new Set<string>();
	for (const r of String(recipients ?? "")
		.split(/\s+/)
		.filter(Boolean)) {
		if (!isPlainAddress(r)) invalid.push(r);
		else if (!seen.has(r.toLowerCase())) {
			seen.add(r.toLowerCase());
			valid.push(r);
		}
	}
	return { valid, invalid };
}

/** Second-level suffixes under which a registrable domain has three labels ("co.uk"). */
const TWO_LABEL_SUFFIXES = new Set([
	"co.uk",
	"org.uk",
	"ac.uk",
	"gov.uk",
	"com.au",
	"net.au",
	"org.au",
	"co.nz",
	"co.jp",
	"com.br",
	"co.za",
	"com.cn",
	"co.in",
]);

/**
 * Notify.allowed_email_domains: the GitLab host and each parent domain while more labels
 * remain than the TLD has (gitlab.corp.example.com → itself, corp.example.com, example.com).
 */
export function allowedEmailDomains(gitlabUrl: string): string[] {
	let host: string;
	try {
		host = new URL(gitlabUrl).hostname.toLowerCase();
	} catch {
		return [];
	}
	const parts = host.split(".");
	const tldLength = TWO_LABEL_SUFFIXES.has(parts.slice(-2).join(".")) ? 2 : 1;
	const domains: string[] = [];
	do {
		domains.push(parts.join("."));
		parts.shift();
	} while (parts.length > tldLength);
	return domains;
}

/** GitLab's rule: the pusher's address is the sender only under the GitLab host's own domain; and it must be one plain address. */
export function canSendFromUserEmail(email: string, gitlabUrl: string): boolean {
	if (!isPlainAddress(email)) return false;
	const at = email.lastIndexOf("@");
	return allowedEmailDomains(gitlabUrl).includes(email.slice(at + 1).toLowerCase());
}

/** Net effect of the push's commits on each path, oldest commit first. */
function filesFromCommits(commits: PushCommit[]): ChangedFile[] {
	const state = new Map<string, "new" | "modified" | "deleted">();
	for (const c of commits) {
		for (const p of c.added) state.set(p, state.get(p) === "deleted" ? "modified" : "new");
		for (const p of c.modified) if (!state.has(p)) state.set(p, "modified");
		for (const p of c.removed) {
			if (state.get(p) === "new") state.delete(p);
			else state.set(p, "deleted");
		}
	}
	return [...state.entries()].map(([path, s]) => ({
		old_path: path,
		new_path: path,
		new_file: s === "new",
		deleted_file: s === "deleted",
		renamed_file: false,
	}));
}

export function changedFiles(push: PushPayload): ChangedFile[] {
	if (push.diffs)
		return push.diffs.map(({ old_path, new_path, new_file, deleted_file, renamed_file }) => ({ old_path, new_path, new_file, deleted_file, renamed_file }));
	return filesFromCommits(push.commits);
}

function fileLine(f: ChangedFile): string {
	if (f.deleted_file) return `- − ${f.old_path}`;
	if (f.renamed_file) return `- ${f.old_path} → ${f.new_path}`;
	if (f.new_file) return `- + ${f.new_path}`;
	return `- ${f.new_path}`;
}

/**
 * The text without the newlines that end it. A loop, not `/\n+$/`: that pattern tries every run of
 * newlines to its end, so a pushed message of newlines cost the square of its length (minutes).
 */
function withoutTrailingNewlines(text: string): string {
	let end = text.length;
	while (end > 0 && text.charCodeAt(end - 1) === 10) end--;
	return text.slice(0, end);
}

function diffBanner(d: PushDiff): string {
	if (d.deleted_file) return `${d.old_path} deleted`;
	if (d.renamed_file) return `${d.old_path} → ${d.new_path}`;
	return d.new_path;
}

function diffsOverflow(diffs: PushDiff[]): boolean {
	if (diffs.length > MAX_DIFF_FILES) return true;
	let lines = 0;
	for (const d of diffs) lines += d.diff ? d.diff.split("\n").length : 0;
	return lines > MAX_DIFF_LINES;
}

const pluralize = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** The mail for a push, or null when GitLab would send none (no new commits). */
export function buildPushEmail(push: PushPayload, opts: PushEmailOptions): PushEmail | null {
	const action = pushAction(push);
	if (action === "push" && push.commits.length === 0) return null;

	const base = opts.gitlabUrl.replace(/\/+$/, "");
	const projectPath = push.project.path_with_namespace;
	const projectUrl = `${base}/${projectPath}`;
	const ref = refName(push.ref);
	const refType = isTagRef(push.ref) ? "tag" : "branch";
	const actionName = action === "create" ? "pushed new" : action === "delete" ? "deleted" : "pushed to";
	const nameWithNamespace = push.project.namespace ? `${push.project.namespace} / ${push.project.name}` : projectPath;
	const commits = action === "push" ? push.commits : [];
	const count = Math.max(push.total_commits_count, commits.length);

	let subject = `[Git][${projectPath}]`;
	if (action === "push") subject += `[${ref}]`;
	subject += " ";
	if (action === "push") subject += count > 1 ? `${count} commits: ${commitTitle(commits[0].message)}` : commitTitle(commits[0].message);
	else subject += `${actionName[0].toUpperCase()}${actionName.slice(1)} ${refType} ${ref}`;

	const lines: string[] = [`${push.user_name} ${actionName} ${refType} ${ref} at ${nameWithNamespace}`];
	if (action === "push") {
		lines.push("", "", "Commits:");
		for (const c of commits) lines.push(`${c.id.slice(0, 8)} by ${c.author.name} at ${c.timestamp}`, withoutTrailingNewlines(c.message), "- - - - -");
		const files = changedFiles(push);
		lines.push("", "", `${pluralize(files.length, "changed file")}:`, "", ...files.map(fileLine));
		if (!opts.disableDiffs && push.diffs) {
			lines.push("", "");
			if (diffsOverflow(push.diffs)) lines.push("The diff was not included because it is too large.");
			else {
				lines.push("Changes:");
				for (const d of push.diffs) {
					lines.push("", "=====================================", diffBanner(d), "=====================================");
					lines.push(d.too_large ? "The diff for this file was not included because it is too large." : withoutTrailingNewlines(d.diff));
				}
			}
		}
	}
	let targetUrl: string | null = null;
	if (action === "push") targetUrl = commits.length > 1 ? `${projectUrl}/compare/${push.before}...${push.after}` : `${projectUrl}/commit/${commits[0].id}`;
	else if (action === "create") targetUrl = `${projectUrl}/tree/${encodeURIComponent(ref).replace(/%2F/g, "/")}`;
	if (targetUrl) lines.push("", "", `View it on GitLab: ${targetUrl}`);

	const fromPusher = opts.sendFromCommitterEmail && !!push.user_email && canSendFromUserEmail(push.user_email, opts.gitlabUrl);
	const headers: Record<string, string> = {
		"X-GitLab-Project": push.project.name,
		"X-GitLab-Project-Id": String(push.project_id),
		"X-GitLab-Project-Path": projectPath,
	};
	if (push.user_username) headers["X-GitLab-Author"] = push.user_username;
	return {
		subject: subject.replace(/[\r\n]+/g, " "),
		text: `${lines.join("\n")}\n`,
		from: { name: push.user_name.replace(/[\r\n"]+/g, " "), address: fromPusher ? push.user_email : opts.mailFrom },
		replyTo: fromPusher ? push.user_email : opts.mailFrom,
		headers,
	};
}
