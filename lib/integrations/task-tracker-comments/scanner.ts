/**
 * GitLab's Asana service, generation B (docs/integrations.md#task-tracker-comments): which tasks a push mentions and
 * which it completes, and the comment text. Two deliberate differences from GitLab, both named
 * in the reference as quirks to fix:
 * - `restrict_to_branch` is an exact, comma-separated list (GitLab tested a substring, so
 *   "rel" matched "master,release");
 * - the closing keyword must be a word of its own ("prefix #12" does not complete task 12), and
 *   a task mentioned twice in one commit gets one comment.
 */
import type { PushCommit, PushPayload } from "../../push/payload";
import { refName } from "../../push/payload";

export interface TaskMention {
	taskId: string;
	/** A word starting with `fix` or `clos[ei]` came right before the mention. */
	complete: boolean;
}

export interface TaskComment extends TaskMention {
	commitId: string;
	text: string;
}

/** A task mention: a task URL (the host can be another tracker's) or `#<id>`. */
function mentionPattern(taskHost: string): RegExp {
	const host = taskHost.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
	return new RegExp(`https:\\/\\/${host}\\/\\d+\\/\\d+\\/(\\d+)|#(\\d+)`, "gi");
}

/** A character of `\w`. */
const isWordChar = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
const COMPLETING_WORD = /^(?:fix|clos[ei])/i;

/**
 * Whether the last word before the mention at `at`, past any non-word characters, starts with
 * `fix` or `clos[ei]`. GitLab matches `(fix\w*|clos[ei]\w*+)?\W*` in front of the mention with the
 * regex itself, which backtracks over every run of non-word characters from each of its
 * positions: a commit message of a megabyte of punctuation held the worker for minutes. Walked
 * back from the mention instead, each character is looked at once in the whole message (the words
 * before two mentions do not overlap).
 */
function completes(message: string, at: number): boolean {
	let end = at;
	while (end > 0 && !isWordChar(message.charCodeAt(end - 1))) end--;
	let start = end;
	while (start > 0 && isWordChar(message.charCodeAt(start - 1))) start--;
	return start < end && COMPLETING_WORD.test(message.slice(start, Math.min(end, start + 5)));
}

const DEFAULT_TASK_HOST = "app.asana.com";

/** Every task a commit message mentions, in order of first mention; completing wins over mentioning. */
export function scanMessage(message: string, taskHost = DEFAULT_TASK_HOST): TaskMention[] {
	const text = String(message ?? "");
	const found = new Map<string, TaskMention>();
	for (const m of text.matchAll(mentionPattern(taskHost))) {
		const taskId = m[1] ?? m[2];
		const complete = completes(text, m.index);
		const prev = found.get(taskId);
		if (prev) prev.complete ||= complete;
		else found.set(taskId, { taskId, complete });
	}
	return [...found.values()];
}

/** Blank: every branch. Otherwise the branch must be one of the comma-separated names. */
export function branchAllowed(restrictToBranch: string | null | undefined, branch: string): boolean {
	const list = String(restrictToBranch ?? "")
		.split(",")
		.map(s => s.trim())
		.filter(Boolean);
	return list.length === 0 || list.includes(branch);
}

/** GitLab's `name_with_namespace`: "Group / Project". */
function projectNameWithNamespace(push: PushPayload): string {
	const ns = push.project.namespace;
	return ns ? `${ns} / ${push.project.name}` : push.project.path_with_namespace;
}

export function commentText(push: PushPayload, commit: PushCommit): string {
	const pushMsg = `${push.user_name} pushed to branch ${refName(push.ref)} of ${projectNameWithNamespace(push)} ( ${commit.url} ):`;
	return `${pushMsg} ${commit.message}`;
}

/**
 * What the commenter does for a push: one comment per (commit, task), in commit order, and
 * whether to complete the task afterwards. Empty for tag pushes and restricted branches.
 */
export function planComments(push: PushPayload, restrictToBranch?: string | null, taskHost = DEFAULT_TASK_HOST): TaskComment[] {
	if (push.object_kind !== "push") return [];
	if (!branchAllowed(restrictToBranch, refName(push.ref))) return [];
	const plan: TaskComment[] = [];
	for (const commit of push.commits) {
		for (const mention of scanMessage(commit.message, taskHost)) plan.push({ ...mention, commitId: commit.id, text: commentText(push, commit) });
	}
	return plan;
}
