/**
 * The lines GitLab's IrkerWorker sends for a push (docs/integrations.md#irc-messages): a branch
 * created/deleted line, a summary with the compare link, then at most 3 commit lines, with
 * optional mIRC colours. Every interpolated value is stripped of CR/LF and other control
 * characters, so no payload text can end the PRIVMSG and inject an IRC command.
 */
import type { PushPayload } from "../../push/payload";
import { BLANK_SHA, commitTitle, isBlankSha, refName } from "../../push/payload";
import { replaceControlCharacters } from "../../text/control-characters";

/** GitLab's IRC hook limit (same as GitHub's). */
const MAX_COMMIT_LINES = 3;

const RESET = "\x0f";
const colour = {
	repo: (s: string) => `\x0304${s}${RESET}`,
	branch: (s: string) => `\x0305${s}${RESET}`,
	url: (s: string) => `\x0302\x1f${s}${RESET}`,
	sha: (s: string) => `\x0314${s}${RESET}`,
	files: (s: string) => `\x0312${s}${RESET}`,
	count: (s: string) => `\x02${s}${RESET}`,
};

/** Drops CR, LF, NUL and the other C0 controls but the mIRC formatting codes we add ourselves. */
export function clean(value: string | null | undefined): string {
	return replaceControlCharacters(value ?? "", " ").trim();
}

export interface IrcMessageOptions {
	/** GITLAB_URL without a trailing slash. */
	gitlabUrl: string;
	colorize: boolean;
}

function truncateSha(sha: string): string {
	return sha.slice(0, 8);
}

function filesCount(commit: PushPayload["commits"][number]): number {
	return (commit.added?.length ?? 0) + (commit.modified?.length ?? 0) + (commit.removed?.length ?? 0);
}

/** The PRIVMSG texts for one push, in order. Tag pushes and other kinds give none (GitLab: push only). */
export function buildIrcMessages(push: PushPayload, opts: IrcMessageOptions): string[] {
	if (push.object_kind !== "push") return [];
	const c = opts.colorize;
	const base = opts.gitlabUrl.replace(/\/+$/, "");
	const repoPath = clean(push.project.path_with_namespace);
	let repo = clean(push.repository?.name ?? push.project.name);
	let branch = clean(refName(push.ref));
	const committer = clean(push.user_name);
	if (c) {
		repo = colour.repo(repo);
		branch = colour.branch(branch);
	}
	const lines: string[] = [];

	if (isBlankSha(push.before)) {
		let url = `${base}/${repoPath}/branches`;
		if (c) url = colour.url(url);
		lines.push(`[${repo}] ${committer} has created a new branch ${branch}: ${url}`);
	} else if (isBlankSha(push.after)) {
		lines.push(`[${repo}] ${committer} has deleted the branch ${branch}`);
	}

	const total = push.total_commits_count;
	if (total === 0) return lines;

	// GitLab swaps a blank `before` for the first commit's parent; the payload has no parents.
	const before = isBlankSha(push.before) ? BLANK_SHA : push.before;
	let compare = `${base}/${repoPath}/compare/${truncateSha(before)}...${truncateSha(push.after)}`;
	if (c) compare = colour.url(compare);
	const count = c ? colour.count(String(total)) : String(total);
	lines.push(`[${repo}] ${committer} pushed ${count} new commit${total > 1 ? "s" : ""} to ${branch}: ${compare}`);

	for (const commit of push.commits.slice(0, MAX_COMMIT_LINES)) {
		const n = filesCount(commit);
		let files = `${n} file${n > 1 ? "s" : ""}`;
		let sha = truncateSha(clean(commit.id));
		if (c) {
			files = colour.files(files);
			sha = colour.sha(sha);
		}
		lines.push(`${repo}/${branch} ${sha} ${clean(commit.author?.name)} (${files}): ${clean(commitTitle(commit.message))}`);
	}
	return lines;
}
