/**
 * API v3's project snippets (docs/api.md#snippets): list, read, raw, create, edit, delete, with
 * the visibility rules and the store writes both versions share as the service's methods.
 */
import { AccessLevel } from "../../../lib/accounts/access";
import { forbidden, notFound, recordNotFound } from "../../../lib/api/errors";
import { PAGE_PARAMS, paginated } from "../../../lib/api/pagination";
import { RECORD_ID_SCHEMA } from "../../../lib/api/record-id";
import {
	canCreateSnippet,
	canModifySnippet,
	checkSnippetFields,
	readSnippetCreate,
	readSnippetUpdate,
	SNIPPET_FIELDS_DOC,
	SNIPPET_UPDATE_CODE_DOC,
	SNIPPET_UPDATE_GROUPS,
} from "../../../lib/snippets/snippet-rules";
import { PROJECT_CACHE_KEY } from "../../../lib/cache/write-generations";
import { presentDeletedSnippet, presentSnippet } from "../../../presenters/snippet";
import type { Ctx, SnippetsModule } from "./shared";

const snippetIdParams = { id: "string", snippet_id: { type: "string", max: 64, openapi: RECORD_ID_SCHEMA } } as const;
/** A DELETE of a snippet that is not there answers `{}` (docs/api.md#decisions): any id, a number or not. */
const anySnippetIdParams = { id: "string", snippet_id: { type: "string", max: 64 } } as const;
/** Every body field is checked by lib/snippets/snippet-rules, with GitLab's messages, not by the validator. */
const fieldParams = {
	title: { type: "any", optional: true, openapi: SNIPPET_FIELDS_DOC.title },
	file_name: { type: "any", optional: true, openapi: SNIPPET_FIELDS_DOC.file_name },
	code: { type: "any", optional: true, openapi: SNIPPET_FIELDS_DOC.code },
	visibility_level: { type: "any", optional: true, openapi: SNIPPET_FIELDS_DOC.visibility_level },
} as const;
/** An edit's: each may be left out, or null (the same); the code may be blank (the content then stays). */
const orNull = (doc: { anyOf: readonly object[] }) => ({ anyOf: [...doc.anyOf, { type: "null" }] });
const updateParams = {
	...snippetIdParams,
	title: { ...fieldParams.title, openapi: orNull(SNIPPET_FIELDS_DOC.title) },
	file_name: { ...fieldParams.file_name, openapi: orNull(SNIPPET_FIELDS_DOC.file_name) },
	code: { ...fieldParams.code, openapi: orNull(SNIPPET_UPDATE_CODE_DOC) },
	visibility_level: { ...fieldParams.visibility_level, openapi: orNull(SNIPPET_FIELDS_DOC.visibility_level) },
} as const;
/** A create needs all four (readSnippetCreate names those missing). */
const CREATE_GROUPS = [{ jointly: Object.keys(fieldParams), schema: { required: Object.keys(fieldParams) } }];
/** What a caller sees depends on who they are: cache entries are per project and per caller. */
const callerKeys = [PROJECT_CACHE_KEY, "#user.id", "#user.is_admin"];

export const ProjectSnippets: SnippetsModule = {
	actions: {
		/** The snippets the caller may see, newest first, always paginated. */
		list: {
			access: AccessLevel.NONE,
			auth: "optional",
			params: { id: "string", ...PAGE_PARAMS },
			cache: { keys: [...callerKeys, "page", "per_page"], ttl: 300 },
			async handler(ctx: Ctx<{ page?: number; per_page?: number }>) {
				const { found, total, page } = await this.visiblePage(ctx);
				return paginated(await this.present(ctx, found, presentSnippet), total, page);
			},
		},

		get: {
			access: AccessLevel.NONE,
			auth: "optional",
			params: snippetIdParams,
			cache: { keys: [...callerKeys, "snippet_id"], ttl: 300 },
			async handler(ctx: Ctx<{ snippet_id: string }>) {
				const snippet = await this.visibleSnippet(ctx, ctx.params.snippet_id);
				if (!snippet) throw this.hidden(ctx, recordNotFound());
				return (await this.present(ctx, [snippet], presentSnippet))[0];
			},
		},

		/** The content, byte for byte, as text/plain. */
		raw: {
			access: AccessLevel.NONE,
			hedge: true,
			auth: "optional",
			params: snippetIdParams,
			async handler(ctx: Ctx<{ snippet_id: string }>) {
				const snippet = await this.visibleSnippet(ctx, ctx.params.snippet_id);
				if (!snippet) throw this.hidden(ctx, notFound("Snippet"));
				ctx.meta.$responseType = "text/plain; charset=utf-8";
				return snippet.content;
			},
		},

		/**
		 * Reporter or above; all four fields required. 201 with the snippet. The level is checked in
		 * the handler, after the fields, as GitLab answers a bad body before the permission.
		 */
		create: {
			access: AccessLevel.NONE,
			params: { id: "string", ...fieldParams },
			paramGroups: CREATE_GROUPS,
			async handler(ctx: Ctx) {
				const access = this.access(ctx);
				const fields = readSnippetCreate(ctx.params);
				if (!canCreateSnippet(ctx.meta.user ?? null, access)) throw forbidden();
				checkSnippetFields(fields, access.project.visibility_level);
				const snippet = await this.insertSnippet(ctx, fields);
				ctx.meta.$statusCode = 201;
				return (await this.present(ctx, [snippet], presentSnippet))[0];
			},
		},

		/** The author, a master or above, or an admin, among those who can see it. */
		update: {
			access: AccessLevel.NONE,
			params: updateParams,
			paramGroups: SNIPPET_UPDATE_GROUPS,
			async handler(ctx: Ctx<{ snippet_id: string }>) {
				const access = this.access(ctx);
				const changes = readSnippetUpdate(ctx.params);
				const snippet = await this.visibleSnippet(ctx, ctx.params.snippet_id);
				if (!snippet) throw notFound("Snippet");
				if (!canModifySnippet(snippet, ctx.meta.user ?? null, access)) throw forbidden();
				checkSnippetFields(changes, access.project.visibility_level);
				const updated = Object.keys(changes).length ? await this.updateSnippet(snippet, changes) : snippet;
				return (await this.present(ctx, [updated], presentSnippet))[0];
			},
		},

		/**
		 * 200 whether or not the snippet exists (spec rule 2): a missing one, or one the caller
		 * may not see, answers `{}` and changes nothing; a deleted one answers its record.
		 */
		remove: {
			access: AccessLevel.NONE,
			params: anySnippetIdParams,
			async handler(ctx: Ctx<{ snippet_id: string }>) {
				const access = this.access(ctx);
				const snippet = await this.visibleSnippet(ctx, ctx.params.snippet_id);
				if (!snippet) return {};
				if (!canModifySnippet(snippet, ctx.meta.user ?? null, access)) throw forbidden();
				if (!(await this.db.snippets.remove({ id: snippet.id }))) return {};
				await this.cleanProjectCache(access.project.id);
				return presentDeletedSnippet(snippet);
			},
		},
	},
};
