/**
 * The internal push payload (docs/api.md#internal; GitLab 8.x PushDataBuilder shape,
 * docs/integrations.md#push-payload): validation with Grape-style errors and a normalised copy that keeps
 * only known keys, plus the small ref/sha helpers the workers share.
 *
 * One extension to GitLab's shape: an optional top-level `diffs` array (the v3 compare-diff
 * shape) lets the git server hand the push mailer the diff it cannot compute without a
 * repository.
 */
import { paramError, invalidValue, missing, badRequest } from "../api/errors";
import { schemaPattern } from "../api/schema-pattern";
import { charCount } from "../text/chars";
import { hasControlCharacters, SINGLE_LINE_TEXT } from "../text/control-characters";
import { HTTP_URL, ISO_TIME } from "../text/formats";

export const BLANK_SHA = "0000000000000000000000000000000000000000";
const MAX_COMMITS = 100;
const MAX_DIFFS = 1000;

export interface PushCommit {
	id: string;
	message: string;
	timestamp: string;
	url: string;
	author: { name: string; email: string };
	added: string[];
	modified: string[];
	removed: string[];
}

interface PushProject {
	name: string;
	path_with_namespace: string;
	namespace: string;
	web_url: string;
	description: string | null;
	default_branch: string | null;
	visibility_level: number | null;
	[extra: string]: unknown;
}

export interface PushDiff {
	old_path: string;
	new_path: string;
	diff: string;
	new_file: boolean;
	renamed_file: boolean;
	deleted_file: boolean;
	too_large: boolean;
}

export interface PushPayload {
	object_kind: "push" | "tag_push";
	before: string;
	after: string;
	ref: string;
	checkout_sha: string | null;
	message: string | null;
	user_id: number;
	user_name: string;
	/** GitLab 9's `user_username`; optional here (the mail's X-GitLab-Author header). */
	user_username?: string;
	user_email: string;
	project_id: number;
	project: PushProject;
	commits: PushCommit[];
	total_commits_count: number;
	repository?: { name: string; [extra: string]: unknown };
	diffs?: PushDiff[];
}

/** What travels on the `push` channel. */
export interface PushEvent {
	/** Stable event id: the idempotency key of every worker. */
	id: string;
	received_at: string;
	push: PushPayload;
	/** Set on a replayed dead letter: only this worker group acts on it. */
	replay_group?: string;
}

export const isBlankSha = (sha: string | null | undefined) => !sha || /^0+$/.test(sha);
export const isTagRef = (ref: string) => ref.startsWith("refs/tags/");
/** Gitlab::Git.ref_name: the ref without `refs/heads/` or `refs/tags/`. */
export const refName = (ref: string) => ref.replace(/^refs\/(tags|heads)\//, "");

/**
 * GitLab's Commit#title: the first line; when that is longer than 100 characters, its first 80
 * and an ellipsis.
 */
export function commitTitle(message: string): string {
	const text = String(message ?? "");
	if (!text.trim()) return "--no commit message";
	const end = text.indexOf("\n");
	if ((end < 0 && text.length > 100) || end > 100) return `${text.slice(0, 80)}…`;
	return (end < 0 ? text : text.slice(0, end)).replace(/\r$/, "");
}

const SHA = /^[0-9a-f]{40}$/i;
const PATH_WITH_NAMESPACE = /^[^/\s]+(\/[^/\s]+)+$/;
const REF = /^refs\/[^/\s]+\/\S/;
type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => !!v && typeof v === "object" && !Array.isArray(v);
const INT_TEXT = /^\d{1,15}$/;
const isInt = (v: unknown) => (typeof v === "number" && Number.isSafeInteger(v)) || (typeof v === "string" && INT_TEXT.test(v));

function need(obj: Obj, key: string, label = key): unknown {
	const v = obj[key];
	if (v === undefined || v === null || v === "") throw missing(label);
	return v;
}

function str(obj: Obj, key: string, label = key, { required = true, max = 100_000 } = {}): string {
	const v = required ? need(obj, key, label) : obj[key];
	if (v === undefined || v === null) return "";
	if (typeof v !== "string" || charCount(v) > max) throw paramError(`${label} is invalid`);
	return v;
}

function optStr(obj: Obj, key: string, label = key, max = 100_000): string | null {
	const v = obj[key];
	if (v === undefined || v === null) return null;
	if (typeof v !== "string" || charCount(v) > max) throw paramError(`${label} is invalid`);
	return v;
}

function sha(obj: Obj, key: string, label = key): string {
	const v = need(obj, key, label);
	if (typeof v !== "string" || !SHA.test(v)) throw paramError(`${label} is invalid`);
	return v.toLowerCase();
}

function int(obj: Obj, key: string, label = key, min = 0): number {
	const v = need(obj, key, label);
	if (!isInt(v) || Number(v) < min) throw paramError(`${label} is invalid`);
	return Number(v);
}

function paths(obj: Obj, key: string, label: string): string[] {
	const v = obj[key];
	if (v === undefined || v === null) return [];
	if (!Array.isArray(v) || v.length > 10_000 || v.some(p => typeof p !== "string" || charCount(p) > 4096)) throw paramError(`${label} is invalid`);
	return v as string[];
}

const httpUrl = (value: string) => HTTP_URL.test(value);

function commit(raw: unknown, i: number): PushCommit {
	const label = (k: string) => `commits[${i}][${k}]`;
	if (!isObj(raw)) throw paramError(`commits[${i}] is invalid`);
	const timestamp = str(raw, "timestamp", label("timestamp"), { max: 64 });
	if (!ISO_TIME.test(timestamp)) throw paramError(`${label("timestamp")} is invalid`);
	const url = str(raw, "url", label("url"), { max: 4096 });
	if (!httpUrl(url)) throw paramError(`${label("url")} is invalid`);
	const author = need(raw, "author", label("author"));
	if (!isObj(author)) throw paramError(`${label("author")} is invalid`);
	return {
		id: sha(raw, "id", label("id")),
		message: str(raw, "message", label("message"), { required: false, max: 1_000_000 }),
		timestamp,
		url,
		author: {
			name: str(author, "name", `${label("author")}[name]`, { max: 1024 }),
			email: str(author, "email", `${label("author")}[email]`, { required: false, max: 1024 }),
		},
		added: paths(raw, "added", label("added")),
		modified: paths(raw, "modified", label("modified")),
		removed: paths(raw, "removed", label("removed")),
	};
}

function project(raw: unknown): PushProject {
	if (raw === undefined || raw === null) throw missing("project");
	if (!isObj(raw)) throw paramError("project is invalid");
	const pathWithNamespace = str(raw, "path_with_namespace", "project[path_with_namespace]", { max: 1024 });
	if (!PATH_WITH_NAMESPACE.test(pathWithNamespace)) throw paramError("project[path_with_namespace] is invalid");
	const webUrl = optStr(raw, "web_url", "project[web_url]", 4096);
	if (webUrl !== null && !httpUrl(webUrl)) throw paramError("project[web_url] is invalid");
	const vis = raw.visibility_level;
	if (vis !== undefined && vis !== null && !(isInt(vis) && [0, 10, 20].includes(Number(vis)))) throw invalidValue("project[visibility_level]");
	return {
		name: str(raw, "name", "project[name]", { max: 1024 }),
		path_with_namespace: pathWithNamespace,
		namespace: optStr(raw, "namespace", "project[namespace]", 1024) ?? pathWithNamespace.split("/").slice(0, -1).join("/"),
		web_url: webUrl ?? "",
		description: optStr(raw, "description", "project[description]"),
		default_branch: optStr(raw, "default_branch", "project[default_branch]", 1024),
		visibility_level: vis === undefined || vis === null ? null : Number(vis),
	};
}

function diffs(raw: unknown): PushDiff[] | undefined {
	if (raw === undefined || raw === null) return undefined;
	if (!Array.isArray(raw) || raw.length > MAX_DIFFS) throw paramError("diffs is invalid");
	return raw.map((d, i) => {
		if (!isObj(d)) throw paramError(`diffs[${i}] is invalid`);
		const flag = (k: string) => {
			const v = d[k];
			if (v === undefined || v === null) return false;
			if (typeof v !== "boolean") throw paramError(`diffs[${i}][${k}] is invalid`);
			return v;
		};
		const oldPath = optStr(d, "old_path", `diffs[${i}][old_path]`, 4096);
		const newPath = optStr(d, "new_path", `diffs[${i}][new_path]`, 4096);
		if (!oldPath && !newPath) throw missing(`diffs[${i}][new_path]`);
		return {
			old_path: oldPath ?? (newPath as string),
			new_path: newPath ?? (oldPath as string),
			diff: optStr(d, "diff", `diffs[${i}][diff]`, 10_000_000) ?? "",
			new_file: flag("new_file"),
			renamed_file: flag("renamed_file"),
			deleted_file: flag("deleted_file"),
			too_large: flag("too_large"),
		};
	});
}

/**
 * Checks a push payload and returns a normalised copy; throws a 400 ApiError
 * (`{"error":"ref is missing"}` style) on the first problem.
 */
export function validatePushPayload(body: unknown): PushPayload {
	if (!isObj(body)) throw badRequest();
	const kind = need(body, "object_kind");
	if (kind !== "push" && kind !== "tag_push") throw invalidValue("object_kind");

	const ref = str(body, "ref", "ref", { max: 1024 });
	if (!REF.test(ref) || hasControlCharacters(ref)) throw paramError("ref is invalid");
	// GitLab derives the kind from the ref; a payload that disagrees with itself is refused.
	if ((kind === "tag_push") !== isTagRef(ref)) throw invalidValue("object_kind");

	const before = sha(body, "before");
	const after = sha(body, "after");
	let checkoutSha: string | null = null;
	if (body.checkout_sha !== undefined && body.checkout_sha !== null) checkoutSha = sha(body, "checkout_sha");
	else if (body.checkout_sha === undefined && !isBlankSha(after)) checkoutSha = after;

	const rawCommits = body.commits ?? [];
	if (!Array.isArray(rawCommits) || rawCommits.length > MAX_COMMITS) throw paramError("commits is invalid");
	const commits = rawCommits.map(commit);
	const total = body.total_commits_count === undefined || body.total_commits_count === null ? commits.length : int(body, "total_commits_count");
	if (total < commits.length) throw paramError("total_commits_count is invalid");

	let repository: PushPayload["repository"];
	if (body.repository !== undefined && body.repository !== null) {
		if (!isObj(body.repository)) throw paramError("repository is invalid");
		const name = optStr(body.repository, "name", "repository[name]", 1024);
		if (name) repository = { name };
	}

	const payload: PushPayload = {
		object_kind: kind,
		before,
		after,
		ref,
		checkout_sha: checkoutSha,
		message: optStr(body, "message", "message"),
		user_id: int(body, "user_id", "user_id", 1),
		user_name: str(body, "user_name", "user_name", { max: 1024 }),
		user_email: str(body, "user_email", "user_email", { required: false, max: 1024 }),
		project_id: int(body, "project_id", "project_id", 1),
		project: project(body.project),
		commits,
		total_commits_count: total,
	};
	const username = optStr(body, "user_username", "user_username", 255);
	if (username) payload.user_username = username;
	if (repository) payload.repository = repository;
	const d = diffs(body.diffs);
	if (d) payload.diffs = d;
	return payload;
}

/** What validatePushPayload takes (`POST /internal/push`), for the API description. */
const textSchema = (max: number) => ({ type: "string", minLength: 1, maxLength: max });
const optionalTextSchema = (max: number) => ({ type: ["string", "null"], maxLength: max });
const shaSchema = { type: "string", pattern: schemaPattern(SHA) };
/** `isInt` at least `min` (0 or 1): a safe integer, or up to 15 digits. */
const intSchema = (min: 0 | 1) => ({
	anyOf: [
		{ type: "integer", minimum: min, maximum: Number.MAX_SAFE_INTEGER },
		{ type: "string", pattern: schemaPattern(min ? /^(?=\d{1,15}$)0*[1-9]\d*$/ : INT_TEXT) },
	],
});
const urlSchema = { type: "string", minLength: 1, maxLength: 4096, pattern: schemaPattern(HTTP_URL) };
const pathList = { type: ["array", "null"], maxItems: 10_000, items: { type: "string", maxLength: 4096 } };
/** A branch's ref for a push, a tag's for a tag push (GitLab derives the kind from the ref). */
const REF_TEXT = { type: "string", minLength: 1, maxLength: 1024, allOf: [{ pattern: schemaPattern(REF) }, { pattern: schemaPattern(SINGLE_LINE_TEXT) }] };
const TAG_REF = /^refs\/tags\//;
const flag = { type: ["boolean", "null"] };

export const PUSH_PAYLOAD_SCHEMA = {
	type: "object",
	properties: {
		object_kind: { enum: ["push", "tag_push"] },
		before: shaSchema,
		after: shaSchema,
		ref: REF_TEXT,
		checkout_sha: { anyOf: [shaSchema, { type: "null" }] },
		message: optionalTextSchema(100_000),
		user_id: intSchema(1),
		user_name: textSchema(1024),
		user_username: optionalTextSchema(255),
		user_email: optionalTextSchema(1024),
		project_id: intSchema(1),
		project: {
			type: "object",
			properties: {
				name: textSchema(1024),
				path_with_namespace: { ...textSchema(1024), pattern: schemaPattern(PATH_WITH_NAMESPACE) },
				namespace: optionalTextSchema(1024),
				web_url: { anyOf: [urlSchema, { type: "null" }] },
				description: optionalTextSchema(100_000),
				default_branch: optionalTextSchema(1024),
				visibility_level: { anyOf: [{ enum: [0, 10, 20, null] }, { type: "string", pattern: schemaPattern(/^(0{1,15}|0{0,13}[12]0)$/) }] },
			},
			required: ["name", "path_with_namespace"],
			additionalProperties: false,
		},
		commits: {
			type: ["array", "null"],
			maxItems: MAX_COMMITS,
			items: {
				type: "object",
				properties: {
					id: shaSchema,
					message: optionalTextSchema(1_000_000),
					timestamp: { type: "string", maxLength: 64, pattern: schemaPattern(ISO_TIME) },
					url: urlSchema,
					author: {
						type: "object",
						properties: { name: textSchema(1024), email: optionalTextSchema(1024) },
						required: ["name"],
						additionalProperties: false,
					},
					added: pathList,
					modified: pathList,
					removed: pathList,
				},
				required: ["id", "timestamp", "url", "author"],
				additionalProperties: false,
			},
		},
		total_commits_count: { anyOf: [intSchema(0), { type: "null" }], description: "At least as many as `commits` holds (their count when left out)." },
		repository: { type: ["object", "null"], properties: { name: optionalTextSchema(1024) }, additionalProperties: false },
		diffs: {
			type: ["array", "null"],
			maxItems: MAX_DIFFS,
			items: {
				type: "object",
				properties: {
					old_path: optionalTextSchema(4096),
					new_path: optionalTextSchema(4096),
					diff: optionalTextSchema(10_000_000),
					new_file: flag,
					renamed_file: flag,
					deleted_file: flag,
					too_large: flag,
				},
				// A path, old or new, that is not blank.
				anyOf: [
					{ required: ["old_path"], properties: { old_path: { type: "string", minLength: 1 } } },
					{ required: ["new_path"], properties: { new_path: { type: "string", minLength: 1 } } },
				],
				additionalProperties: false,
			},
		},
	},
	required: ["object_kind", "before", "after", "ref", "user_id", "user_name", "project_id", "project"],
	// The kind follows the ref.
	oneOf: [
		{ properties: { object_kind: { const: "tag_push" }, ref: { pattern: schemaPattern(TAG_REF) } } },
		{ properties: { object_kind: { const: "push" }, ref: { not: { pattern: schemaPattern(TAG_REF) } } } },
	],
	additionalProperties: false,
};
