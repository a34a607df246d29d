/**
 * A snippet's files (docs/api.md#v4-snippets), pure: v4 gives a snippet several (`files[]`), v3
 * knows one. The first is kept where v3 keeps its one (`file_name`, `content`), the rest beside
 * it, with every path listed apart for lists that leave the contents in the store. Here: reading
 * a create's `files[]` or `content` + `file_name`, applying an update's actions (create, update,
 * delete, move), and the rules every file set keeps, with GitLab's messages.
 */
import { paramError, validation } from "../api/errors";
import { checkParamGroups, type ParamGroup } from "../api/param-groups";
import type { SnippetDoc } from "../../models/snippet";
import { FILE_NAME_MESSAGE, MAX_SNIPPET_CONTENT_BYTES, MAX_SNIPPET_FILE_NAME_LENGTH } from "./snippet-rules";

export interface SnippetFile {
	path: string;
	content: string;
}

/** GitLab's limit of files per snippet. */
const MAX_SNIPPET_FILES = 10;
const FILE_ACTIONS = ["create", "update", "delete", "move"] as const;

/** A path's segments: each a file name as snippets take them (no `.` or `..`, nothing empty). */
const SEGMENT = /^[\p{Alphabetic}\p{Nd}_\-.@+]+$/u;

export function filesOf(s: Pick<SnippetDoc, "file_name" | "content" | "more_files">): SnippetFile[] {
	return [{ path: s.file_name, content: s.content }, ...(s.more_files ?? [])];
}

export function pathsOf(s: Pick<SnippetDoc, "file_name" | "file_paths">): string[] {
	return s.file_paths ?? [s.file_name];
}

/** How a set of files is stored: the first where v3 reads it, the rest beside it. */
export function storedFiles(files: SnippetFile[]): Pick<SnippetDoc, "file_name" | "content" | "file_paths" | "more_files"> {
	const [first, ...rest] = files;
	return { file_name: first.path, content: first.content, file_paths: files.map(f => f.path), more_files: rest };
}

const text = (v: unknown) => (typeof v === "string" ? v : typeof v === "number" || typeof v === "boolean" ? String(v) : undefined);
const given = (v: unknown) => v !== undefined && v !== null;

/** `files` as clients send it: an array, or a form's `files[0][file_path]` object of objects. */
function fileList(raw: unknown): Record<string, unknown>[] {
	const list = Array.isArray(raw) ? raw : raw && typeof raw === "object" ? Object.values(raw) : null;
	if (!list || !list.every(f => f && typeof f === "object" && !Array.isArray(f))) throw paramError("files is invalid");
	return list as Record<string, unknown>[];
}

/** A create's files: `files[]` or `content`, exactly one of them (Grape's check). */
export const CREATE_FILES_GROUPS: ParamGroup[] = [{ exactlyOneOf: ["files", "content"], nullIsAbsent: true }];

/** A create's files: `files[]` (`file_path`, `content`) or `content` with `file_name` (CREATE_FILES_GROUPS). */
export function readCreateFiles(params: { files?: unknown; content?: unknown; file_name?: unknown }): SnippetFile[] {
	checkParamGroups(CREATE_FILES_GROUPS, params);
	if (given(params.content)) {
		if (!given(params.file_name)) throw paramError("file_name is missing");
		return [{ path: text(params.file_name) ?? invalid("file_name"), content: text(params.content) ?? invalid("content") }];
	}
	return fileList(params.files).map((f, i) => {
		if (!given(f.file_path)) throw paramError(`files[${i}][file_path] is missing`);
		if (!given(f.content)) throw paramError(`files[${i}][content] is missing`);
		return { path: text(f.file_path) ?? invalid(`files[${i}][file_path]`), content: text(f.content) ?? invalid(`files[${i}][content]`) };
	});
}

function invalid(name: string): never {
	throw paramError(`${name} is invalid`);
}

/**
 * An update's `files[]` applied to the snippet's files: `create` a new path, `update` a path's
 * content (and move it, with `previous_path`), `move` a path to another (its content, or a new
 * one), `delete` a path. A path that is not there, or one that is already, is a 400 naming it.
 */
export function applyFileActions(current: SnippetFile[], raw: unknown): SnippetFile[] {
	const files = current.map(f => ({ ...f }));
	const at = (path: string | undefined) => (path === undefined ? -1 : files.findIndex(f => f.path === path));
	fileList(raw).forEach((a, i) => {
		const action = text(a.action);
		if (action === undefined) throw paramError(`files[${i}][action] is missing`);
		if (!(FILE_ACTIONS as readonly string[]).includes(action)) throw paramError(`files[${i}][action] does not have a valid value`);
		const path = given(a.file_path) ? (text(a.file_path) ?? invalid(`files[${i}][file_path]`)) : undefined;
		const previous = given(a.previous_path) ? (text(a.previous_path) ?? invalid(`files[${i}][previous_path]`)) : undefined;
		const content = given(a.content) ? (text(a.content) ?? invalid(`files[${i}][content]`)) : undefined;
		const unknown = (p: string | undefined) => validation({ files: [`${p ?? "(no path)"} is not a file of the snippet`] });
		if (action === "create") {
			if (path === undefined || content === undefined) throw paramError(`files[${i}][file_path], files[${i}][content] are required to create a file`);
			if (at(path) >= 0) throw validation({ files: [`${path} already exists`] });
			files.push({ path, content });
		} else if (action === "delete") {
			const found = at(path);
			if (found < 0) throw unknown(path);
			files.splice(found, 1);
		} else {
			const from = previous ?? path;
			const found = at(from);
			if (found < 0) throw unknown(from);
			if (action === "update" && content === undefined) throw paramError(`files[${i}][content] is missing`);
			const to = path ?? files[found].path;
			if (to !== files[found].path && at(to) >= 0) throw validation({ files: [`${to} already exists`] });
			files[found] = { path: to, content: content ?? files[found].content };
		}
	});
	return files;
}

/** The rules a snippet's files keep: 1 to 10 of them, paths of file names, none twice, content not blank, the whole within the size limit. */
export function checkFiles(files: SnippetFile[]): void {
	const errors: string[] = [];
	if (!files.length) errors.push("can't be empty");
	if (files.length > MAX_SNIPPET_FILES) errors.push(`are too many (maximum is ${MAX_SNIPPET_FILES})`);
	const seen = new Set<string>();
	for (const f of files) {
		const segments = f.path.split("/");
		if (!f.path || [...f.path].length > MAX_SNIPPET_FILE_NAME_LENGTH || segments.some(s => !SEGMENT.test(s) || s === "." || s === ".."))
			errors.push(`${f.path || "a path"} ${FILE_NAME_MESSAGE}`);
		if (seen.has(f.path)) errors.push(`${f.path} is there twice`);
		seen.add(f.path);
		if (!f.content.trim()) errors.push(`${f.path} can't be blank`);
	}
	const bytes = files.reduce((total, f) => total + Buffer.byteLength(f.content, "utf8"), 0);
	if (bytes > MAX_SNIPPET_CONTENT_BYTES) errors.push(`are too large (maximum is ${MAX_SNIPPET_CONTENT_BYTES} bytes in all)`);
	if (errors.length) throw validation({ files: errors });
}

/** `files[]` as the API description states it: a list (or a form's object of them), each file's fields as Grape's String takes them. */
const AS_TEXT = { type: ["string", "number", "boolean"] };
const fileSchema = (required: string[], extra: Record<string, unknown> = {}) => ({
	type: "object",
	properties: { file_path: AS_TEXT, content: AS_TEXT, ...extra },
	required,
	additionalProperties: false,
});
const listOf = (file: Record<string, unknown>) => ({
	anyOf: [
		{ type: "array", items: file },
		{ type: "object", additionalProperties: file },
	],
});
export const CREATE_FILES_DOC = listOf(fileSchema(["file_path", "content"]));
export const FILE_ACTIONS_DOC = listOf(
	fileSchema(["action"], { action: { enum: FILE_ACTIONS }, previous_path: { type: ["string", "number", "boolean", "null"] } }),
);
