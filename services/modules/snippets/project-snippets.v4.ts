/**
 * API v4's project snippets (docs/api.md#v4-snippets): the same snippets and visibility rules as
 * v3's, with `visibility` as a word, a description, and several files each (`files[]` to create
 * them, and to create, update, move and delete them in an edit; lib/snippets/snippet-files.ts):
 * v3 keeps showing a snippet's first file. DELETE answers 204 (If-Unmodified-Since).
 */
import { AccessLevel, VISIBILITY_LEVELS } from "../../../lib/accounts/access";
import { checkUnmodifiedSince } from "../../../lib/api/conditional";
import { forbidden, notFound, paramError } from "../../../lib/api/errors";
import { checkParamGroups, type ParamGroup } from "../../../lib/api/param-groups";
import { PAGE_PARAMS, paginated } from "../../../lib/api/pagination";
import {
	applyFileActions,
	checkFiles,
	CREATE_FILES_DOC,
	CREATE_FILES_GROUPS,
	FILE_ACTIONS_DOC,
	filesOf,
	readCreateFiles,
	storedFiles,
	type SnippetFile,
} from "../../../lib/snippets/snippet-files";
import { schemaPattern } from "../../../lib/api/schema-pattern";
import { canCreateSnippet, canModifySnippet, checkSnippetFields } from "../../../lib/snippets/snippet-rules";
import { PROJECT_CACHE_KEY } from "../../../lib/cache/write-generations";
import type { SnippetDoc } from "../../../models/snippet";
import { SNIPPET_REF, presentSnippetV4 } from "../../../presenters/snippet.v4";
import type { Ctx, SnippetsModule } from "./shared";
import { RECORD_ID_SCHEMA } from "../../../lib/api/record-id";

const snippetIdParams = { id: "string", snippet_id: { type: "string", max: 64, openapi: RECORD_ID_SCHEMA } } as const;
/** Every body field is read by lib/snippets/snippet-files.ts and snippet-rules.ts, with GitLab's messages. */
const any = { type: "any", optional: true } as const;
/** Grape's `String, allow_blank: false`: text or a number, not blank (as the API description states it). */
const NON_BLANK = { anyOf: [{ type: "string", pattern: schemaPattern(/\S/) }, { type: "number" }] };
const VISIBILITY_WORDS = ["private", "internal", "public"];
/** An edit's fields; null is the same as left out. */
const fieldParams = {
	title: { ...any, openapi: { anyOf: [{ type: "string", maxLength: 255, pattern: schemaPattern(/\S/) }, { type: "number" }, { type: "null" }] } },
	description: { ...any, openapi: { type: ["string", "null"] } },
	visibility: { ...any, openapi: { enum: [...VISIBILITY_WORDS, null] } },
	files: { ...any, openapi: { anyOf: [FILE_ACTIONS_DOC, { type: "null" }] } },
	content: { ...any, openapi: { anyOf: [...NON_BLANK.anyOf, { type: "null" }] } },
	file_name: { ...any, openapi: { type: ["string", "null"] } },
} as const;
/** A create's: `title` and `visibility` needed, `files[]` or `content` (with `file_name`) as they are created. */
const createParams = {
	...fieldParams,
	title: { ...any, openapi: { anyOf: [{ type: "string", maxLength: 255, pattern: schemaPattern(/\S/) }, { type: "number" }] } },
	visibility: { ...any, openapi: { enum: VISIBILITY_WORDS } },
	files: { ...any, openapi: { anyOf: [CREATE_FILES_DOC, { type: "null" }] } },
	file_name: { ...any, openapi: { type: ["string", "number", "boolean", "null"] } },
} as const;
const CREATE_GROUPS: ParamGroup[] = [
	{ jointly: ["title", "visibility"], schema: { required: ["title", "visibility"] } },
	...CREATE_FILES_GROUPS,
	{
		jointly: ["content", "file_name"],
		schema: {
			if: { required: ["content"], properties: { content: { not: { type: "null" } } } },
			then: { required: ["file_name"], properties: { file_name: { not: { type: "null" } } } },
		},
	},
];
/** What a caller sees depends on who they are: cache entries are per project and per caller. */
const callerKeys = [PROJECT_CACHE_KEY, "#user.id", "#user.is_admin"];
/** Snippets here have no repository: the refs a file is read at, all naming its one state. */
const REFS = [SNIPPET_REF, "master", "HEAD"];

type Fields = { title?: unknown; description?: unknown; visibility?: unknown; files?: unknown; content?: unknown; file_name?: unknown };

const given = (v: unknown) => v !== undefined && v !== null;
/** An edit changes something, and its files through `files[]` or `content`/`file_name`, not both (Grape's checks). */
const UPDATE_GROUPS: ParamGroup[] = [
	{ atLeastOneOf: ["content", "description", "files", "file_name", "title", "visibility"], nullIsAbsent: true },
	{ mutuallyExclusive: ["files", "content"], nullIsAbsent: true },
	{ mutuallyExclusive: ["files", "file_name"], nullIsAbsent: true },
];
/** Grape's `type: String, allow_blank: false`. */
function nonBlank(params: Fields, name: "title" | "content"): string | undefined {
	const v = params[name];
	if (!given(v)) return undefined;
	if (typeof v !== "string" && typeof v !== "number") throw paramError(`${name} is invalid`);
	if (!String(v).trim()) throw paramError(`${name} is empty`);
	return String(v);
}
function visibilityLevel(v: unknown): number | undefined {
	if (!given(v)) return undefined;
	const at = typeof v === "string" ? VISIBILITY_WORDS.indexOf(v) : -1;
	if (at < 0) throw paramError("visibility does not have a valid value");
	return VISIBILITY_LEVELS[at];
}
function description(v: unknown): string | null | undefined {
	if (v === undefined) return undefined;
	if (v !== null && typeof v !== "string") throw paramError("description is invalid");
	return v;
}

export const ProjectSnippetsV4: SnippetsModule = {
	actions: {
		/** The snippets the caller may see, newest first, paginated (anonymous: the public ones of a public project). */
		listV4: {
			access: AccessLevel.NONE,
			auth: "optional",
			params: { id: "string", ...PAGE_PARAMS },
			cache: { keys: [...callerKeys, "page", "per_page"], ttl: 300 },
			async handler(ctx: Ctx<{ page?: number; per_page?: number }>) {
				const { found, total, page } = await this.visiblePage(ctx);
				return paginated(await this.present(ctx, found, presentSnippetV4), total, page);
			},
		},

		getV4: {
			access: AccessLevel.NONE,
			auth: "optional",
			params: snippetIdParams,
			cache: { keys: [...callerKeys, "snippet_id"], ttl: 300 },
			async handler(ctx: Ctx<{ snippet_id: string }>) {
				return (await this.present(ctx, [await this.readableV4(ctx)], presentSnippetV4))[0];
			},
		},

		/** The first file's content, byte for byte, as text/plain. */
		rawV4: {
			access: AccessLevel.NONE,
			hedge: true,
			auth: "optional",
			params: snippetIdParams,
			async handler(ctx: Ctx<{ snippet_id: string }>) {
				const snippet = await this.readableV4(ctx);
				ctx.meta.$responseType = "text/plain; charset=utf-8";
				return snippet.content;
			},
		},

		/** One file's content (its path URL-encoded), at the snippet's one ref. */
		fileRawV4: {
			access: AccessLevel.NONE,
			hedge: true,
			auth: "optional",
			params: { ...snippetIdParams, ref: { type: "string", max: 255 }, file_path: { type: "string", max: 1024 } },
			async handler(ctx: Ctx<{ snippet_id: string; ref: string; file_path: string }>) {
				const snippet = await this.readableV4(ctx);
				if (!REFS.includes(ctx.params.ref)) throw notFound("Reference");
				const file = filesOf(snippet).find(f => f.path === ctx.params.file_path);
				if (!file) throw notFound("File");
				ctx.meta.$responseType = "text/plain; charset=utf-8";
				return file.content;
			},
		},

		/** `title`, `visibility`, and `files[]` or `content` with `file_name`; reporters and above. 201. */
		createV4: {
			access: AccessLevel.NONE,
			params: { id: "string", ...createParams },
			paramGroups: CREATE_GROUPS,
			async handler(ctx: Ctx<Fields>) {
				const p = ctx.params;
				const absent = ["title", "visibility"].filter(name => !given(p[name as keyof Fields]));
				if (absent.length) throw paramError(absent.map(name => `${name} is missing`).join(", "));
				const title = nonBlank(p, "title")!;
				const level = visibilityLevel(p.visibility)!;
				const files = readCreateFiles(p);
				const access = this.access(ctx);
				if (!canCreateSnippet(ctx.meta.user ?? null, access)) throw forbidden();
				checkSnippetFields({ title, visibility_level: level }, access.project.visibility_level);
				checkFiles(files);
				const snippet = await this.insertSnippet(ctx, {
					title,
					description: description(p.description) ?? null,
					...storedFiles(files),
					visibility_level: level,
				});
				ctx.meta.$statusCode = 201;
				return (await this.present(ctx, [snippet], presentSnippetV4))[0];
			},
		},

		/** Its author, masters and above, admins. A snippet of several files changes its files through `files[]` only. */
		updateV4: {
			access: AccessLevel.NONE,
			params: { ...snippetIdParams, ...fieldParams },
			paramGroups: UPDATE_GROUPS,
			async handler(ctx: Ctx<Fields & { snippet_id: string }>) {
				const p = ctx.params;
				checkParamGroups(UPDATE_GROUPS, p);
				const title = nonBlank(p, "title");
				const content = nonBlank(p, "content");
				const level = visibilityLevel(p.visibility);
				const access = this.access(ctx);
				const snippet = await this.readableV4(ctx);
				if (!canModifySnippet(snippet, ctx.meta.user ?? null, access)) throw forbidden();
				let files: SnippetFile[] = filesOf(snippet);
				if (given(p.content) || given(p.file_name)) {
					if (files.length > 1) throw paramError("To update Snippets with multiple files, you must use the `files` parameter");
					if (given(p.file_name) && typeof p.file_name !== "string") throw paramError("file_name is invalid");
					files = [{ path: typeof p.file_name === "string" ? p.file_name : files[0].path, content: content ?? files[0].content }];
				}
				if (given(p.files)) files = applyFileActions(files, p.files);
				checkSnippetFields({ title, visibility_level: level }, access.project.visibility_level);
				checkFiles(files);
				const changes: Partial<SnippetDoc> = storedFiles(files);
				if (title !== undefined) changes.title = title;
				if (level !== undefined) changes.visibility_level = level;
				const text = description(p.description);
				if (text !== undefined) changes.description = text;
				return (await this.present(ctx, [await this.updateSnippet(snippet, changes)], presentSnippetV4))[0];
			},
		},

		/** 204; a snippet the caller cannot see is 404 `Snippet Not Found`. */
		removeV4: {
			access: AccessLevel.NONE,
			params: snippetIdParams,
			async handler(ctx: Ctx<{ snippet_id: string }>) {
				const access = this.access(ctx);
				const snippet = await this.readableV4(ctx);
				if (!canModifySnippet(snippet, ctx.meta.user ?? null, access)) throw forbidden();
				checkUnmodifiedSince(ctx.meta, snippet.updated_at);
				if (!(await this.db.snippets.remove({ id: snippet.id }))) throw notFound("Snippet");
				await this.cleanProjectCache(access.project.id);
				ctx.meta.$statusCode = 204;
				return null;
			},
		},
	},

	methods: {
		/** The snippet the path names, if the caller may see it: `404 Snippet Not Found` otherwise, to anonymous callers too (GitLab v4). */
		async readableV4(ctx: Ctx<{ snippet_id: string }>): Promise<SnippetDoc> {
			const snippet = await this.visibleSnippet(ctx, ctx.params.snippet_id);
			if (!snippet) throw notFound("Snippet");
			return snippet;
		},
	},
};
