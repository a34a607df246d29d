/**
 * Project snippet rules, pure: who sees a snippet (docs/api.md#snippet-visibility), who may write
 * one, and the GitLab 8.16 parameter and model validation of the fields.
 *
 * Visibility: private (0) → its author and admins only, not other members; internal (10) →
 * any logged-in user who can read the project; public (20) → also anonymous callers when the
 * project is public. A snippet may not be more visible than its project.
 */
import { AccessLevel, canReadProject, hasLevel, Visibility, VISIBILITY_LEVELS, type Caller, type ProjectAccess } from "../accounts/access";
import { invalidValue, missing, paramError, validation } from "../api/errors";
import { checkParamGroups, type ParamGroup } from "../api/param-groups";
import { schemaPattern } from "../api/schema-pattern";

/**
 * Largest snippet content accepted, in UTF-8 bytes. Kept well under the default request body
 * limit (MAX_BODY_BYTES, 1 MiB) so that content just over it still reaches this check and gets
 * a 400 with a message, not a 413 from the body parser.
 */
export const MAX_SNIPPET_CONTENT_BYTES = 512 * 1024;
const MAX_SNIPPET_TITLE_LENGTH = 255;
export const MAX_SNIPPET_FILE_NAME_LENGTH = 255;

/**
 * GitLab 8.16's `file_name_regex` (`c++.cpp` is a file name): Ruby's `[[:alnum:]]` is Unicode
 * letters and decimal digits. The message is the one this API has always given, earlier 8.x
 * versions' (8.16's adds `'+'`): a client that compares it keeps working, and one that sends a
 * `+` is no longer refused (docs/api.md#snippets).
 */
const FILE_NAME = /^[\p{Alphabetic}\p{Nd}_\-.@+]*$/u;
export const FILE_NAME_MESSAGE = "can contain only letters, digits, '_', '-', '@' and '.'.";

/** The fields of a snippet that decide who sees and changes it. */
export interface SnippetAccessFields {
	author_id: number;
	visibility_level: number;
}

const LEVEL_NAMES: Record<number, string> = { 0: "private", 10: "internal", 20: "public" };

function visibilityName(level: number): string {
	return LEVEL_NAMES[level] ?? String(level);
}

/** Whether `caller` may see this snippet of the project in `access` (on every endpoint and in lists). */
export function canReadSnippet(snippet: SnippetAccessFields, caller: Caller | null, access: ProjectAccess): boolean {
	if (!canReadProject(access.project, caller, access.level)) return false;
	if (caller?.is_admin) return true;
	switch (snippet.visibility_level) {
		case Visibility.PUBLIC:
			// canReadProject already limits anonymous callers to public projects.
			return true;
		case Visibility.INTERNAL:
			return !!caller;
		default:
			return !!caller && caller.id === snippet.author_id;
	}
}

/**
 * The store query for the snippets of a project that `caller` may see, so that lists filter
 * (and count) in the store, not after paging. SQLite and MongoDB both take `$or`/`$gte`.
 * Returns null when the caller may see none (the project is unreadable).
 */
export function visibleSnippetsQuery(projectId: number, caller: Caller | null, access: ProjectAccess): Record<string, unknown> | null {
	if (!canReadProject(access.project, caller, access.level)) return null;
	if (caller?.is_admin) return { project_id: projectId };
	if (!caller) return { project_id: projectId, visibility_level: Visibility.PUBLIC };
	return { project_id: projectId, $or: [{ visibility_level: { $gte: Visibility.INTERNAL } }, { author_id: caller.id }] };
}

/** create_project_snippet: reporter or above (admins count as owners). */
export function canCreateSnippet(caller: Caller | null, access: ProjectAccess): boolean {
	return !!caller && hasLevel(access, AccessLevel.REPORTER);
}

/**
 * Update and delete, for a snippet the caller can see: its author, a master or above, or an
 * admin (GitLab's Ability era: author rules plus project admin rules).
 */
export function canModifySnippet(snippet: SnippetAccessFields, caller: Caller | null, access: ProjectAccess): boolean {
	if (!caller) return false;
	return caller.is_admin || caller.id === snippet.author_id || hasLevel(access, AccessLevel.MASTER);
}

export interface SnippetFields {
	title: string;
	file_name: string;
	content: string;
	visibility_level: number;
}

type Params = Record<string, unknown>;

const given = (params: Params, name: string) => params[name] !== undefined && params[name] !== null;

/** Grape `type: String`: text as is, numbers and booleans as text, anything else invalid. */
function stringParam(params: Params, name: string): string | undefined {
	const value = params[name];
	if (!given(params, name)) return undefined;
	if (typeof value === "string") return value;
	if (typeof value === "number" || typeof value === "boolean") return String(value);
	throw paramError(`${name} is invalid`);
}

/** Grape `type: Integer, values: [0, 10, 20]` (form fields arrive as text). */
function visibilityParam(params: Params): number | undefined {
	if (!given(params, "visibility_level")) return undefined;
	const value = params.visibility_level;
	const n = typeof value === "number" ? value : typeof value === "string" && /^\s*-?\d+\s*$/.test(value) ? Number(value) : NaN;
	if (!Number.isSafeInteger(n)) throw paramError("visibility_level is invalid");
	if (!(VISIBILITY_LEVELS as readonly number[]).includes(n)) throw invalidValue("visibility_level");
	return n;
}

const chars = (s: string) => [...s].length;
const withArticle = (word: string) => (/^[aeiou]/.test(word) ? `an ${word}` : `a ${word}`);

/** Snippet model validations, keyed by model attribute (`content`, not `code`). */
function modelErrors(fields: Partial<SnippetFields>, projectVisibility: number): Record<string, string[]> {
	const errors: Record<string, string[]> = {};
	const add = (field: string, message: string) => (errors[field] ??= []).push(message);
	if (fields.title !== undefined) {
		if (!fields.title.trim()) add("title", "can't be blank");
		if (chars(fields.title) > MAX_SNIPPET_TITLE_LENGTH) add("title", `is too long (maximum is ${MAX_SNIPPET_TITLE_LENGTH} characters)`);
	}
	if (fields.file_name !== undefined) {
		if (chars(fields.file_name) > MAX_SNIPPET_FILE_NAME_LENGTH) add("file_name", `is too long (maximum is ${MAX_SNIPPET_FILE_NAME_LENGTH} characters)`);
		if (!FILE_NAME.test(fields.file_name)) add("file_name", FILE_NAME_MESSAGE);
	}
	if (fields.content !== undefined) {
		if (!fields.content.trim()) add("content", "can't be blank");
		const tooLong = Buffer.byteLength(fields.content, "utf8") > MAX_SNIPPET_CONTENT_BYTES;
		if (tooLong) add("content", `is too long (maximum is ${MAX_SNIPPET_CONTENT_BYTES} bytes)`);
	}
	if (fields.visibility_level !== undefined && fields.visibility_level > projectVisibility)
		add("visibility_level", `${visibilityName(fields.visibility_level)} is not allowed in ${withArticle(visibilityName(projectVisibility))} project`);
	return errors;
}

/**
 * POST parameters (Grape's checks, before any permission check): the new snippet's fields,
 * or 400 `{"error":"title is missing, code is missing"}` for absent parameters,
 * `{"error":"visibility_level does not have a valid value"}` for a level outside 0/10/20.
 */
export function readSnippetCreate(params: Params): SnippetFields {
	const absent = ["title", "file_name", "code", "visibility_level"].filter(name => !given(params, name));
	if (absent.length) throw missing(...absent);
	return {
		title: stringParam(params, "title")!,
		file_name: stringParam(params, "file_name")!,
		content: stringParam(params, "code")!,
		visibility_level: visibilityParam(params)!,
	};
}

/**
 * PUT parameters: the fields to change. At least one of the four must be given; `code` only
 * replaces the content when it is not blank (GitLab: `params[:code].present?`).
 */
export const SNIPPET_UPDATE_GROUPS: ParamGroup[] = [{ atLeastOneOf: ["title", "file_name", "code", "visibility_level"], nullIsAbsent: true }];

export function readSnippetUpdate(params: Params): Partial<SnippetFields> {
	checkParamGroups(SNIPPET_UPDATE_GROUPS, params);
	const changes: Partial<SnippetFields> = {};
	const title = stringParam(params, "title");
	const fileName = stringParam(params, "file_name");
	const code = stringParam(params, "code");
	const level = visibilityParam(params);
	if (title !== undefined) changes.title = title;
	if (fileName !== undefined) changes.file_name = fileName;
	if (code !== undefined && code.trim()) changes.content = code;
	if (level !== undefined) changes.visibility_level = level;
	return changes;
}

/** Model validation (after the permission check): 400 `{"message":{"title":["can't be blank"]}}`. */
export function checkSnippetFields(fields: Partial<SnippetFields>, projectVisibility: number): void {
	const errors = modelErrors(fields, projectVisibility);
	if (Object.keys(errors).length) throw validation(errors);
}

/** The parameters above as the API description states them (`openapi` of each): what Grape's String takes, and the model's rules. */
const NOT_BLANK = schemaPattern(/\S/);
/** Grape's String takes numbers and booleans as their text. */
const AS_TEXT = [{ type: "number" }, { type: "boolean" }];
const VISIBILITY_DOC = { anyOf: [{ enum: VISIBILITY_LEVELS }, { type: "string", pattern: schemaPattern(/^\s*(-?0+|0*[12]0)\s*$/) }] };
export const SNIPPET_FIELDS_DOC = {
	title: { anyOf: [{ type: "string", maxLength: MAX_SNIPPET_TITLE_LENGTH, pattern: NOT_BLANK }, ...AS_TEXT] },
	file_name: { anyOf: [{ type: "string", maxLength: MAX_SNIPPET_FILE_NAME_LENGTH, pattern: schemaPattern(FILE_NAME) }, ...AS_TEXT] },
	code: { anyOf: [{ type: "string", maxLength: MAX_SNIPPET_CONTENT_BYTES, pattern: NOT_BLANK, description: "At most this many bytes." }, ...AS_TEXT] },
	visibility_level: VISIBILITY_DOC,
} as const;
/** An edit's code may be blank: it then leaves the content as it is. */
export const SNIPPET_UPDATE_CODE_DOC = { anyOf: [{ type: "string", maxLength: MAX_SNIPPET_CONTENT_BYTES }, ...AS_TEXT] } as const;
