/**
 * Project snippets (docs/api.md#snippets). Visibility as docs/api.md#snippet-visibility says, on every
 * endpoint and in the list (filtered in the store query, so counts and pages agree): a snippet
 * the caller may not see answers as if it did not exist. The three reads take anonymous
 * callers (`auth: "optional"`): the gateway lets them reach public projects only, and here
 * they read public snippets only (401 for anything else).
 *
 * `code` is kept byte-exact and served back by `raw` as text/plain; charset=utf-8.
 */
import type { ServiceSchema, ServiceSettingSchema } from "moleculer";
import { config } from "../config";
import { AccessLevel, type ProjectAccess } from "../lib/accounts/access";
import { forbidden, notFound, recordNotFound, unauthorized, type ApiError } from "../lib/api/errors";
import { PAGE_PARAMS, pageWindow, paginated, parsePage } from "../lib/api/pagination";
import { RECORD_ID_SCHEMA, recordId } from "../lib/api/record-id";
import {
	canCreateSnippet,
	canModifySnippet,
	canReadSnippet,
	checkSnippetFields,
	readSnippetCreate,
	readSnippetUpdate,
	SNIPPET_FIELDS_DOC,
	SNIPPET_UPDATE_CODE_DOC,
	SNIPPET_UPDATE_GROUPS,
	visibleSnippetsQuery,
} from "../lib/snippets/snippet-rules";
import { CacheCleanerMixin, PROJECT_CACHE_KEY } from "../mixins/cache-cleaner.mixin";
import { DbMixin } from "../mixins/db.mixin";
import { ProjectAccessMixin } from "../mixins/project-access.mixin";
import { presentDeletedSnippet, presentSnippet } from "../presenters/snippet";
import { snippetsCollection, type SnippetDoc } from "../models/snippet";
import type { Ctx, NewSnippet, SnippetPresenter, SnippetsMethods as Methods, SnippetsVars as Vars } from "./modules/snippets/shared";
import { ProjectSnippetsV4 } from "./modules/snippets/project-snippets.v4";
import { usersById } from "../lib/accounts/lookups";

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
/** Newest first; the id breaks ties within a millisecond. */
const NEWEST_FIRST = ["-created_at", "-id"];

const SnippetsService: ServiceSchema<ServiceSettingSchema, Methods, Vars> = {
	name: "snippets",
	mixins: [DbMixin({ snippets: snippetsCollection }), CacheCleanerMixin(), ProjectAccessMixin(), ProjectSnippetsV4 as unknown as Partial<ServiceSchema>],

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

	methods: {
		/** A page of the snippets the caller may see, newest first, for either version's list. */
		async visiblePage(ctx: Ctx<{ page?: number; per_page?: number }>) {
			const access = this.access(ctx);
			const query = visibleSnippetsQuery(access.project.id, ctx.meta.user ?? null, access);
			if (!query) throw notFound("Project");
			const page = parsePage(ctx.params);
			// Lists show no content (up to MAX_SNIPPET_CONTENT_BYTES each): it stays in the store.
			const [found, total] = await this.db.snippets.findPage(query, pageWindow(page), { sort: NEWEST_FIRST, omit: ["content", "more_files"] });
			return { found, total, page };
		},

		/** The snippet of this project the caller may see, or null (missing, elsewhere or hidden alike). */
		async visibleSnippet(ctx: Ctx, rawId: string): Promise<SnippetDoc | null> {
			const access: ProjectAccess = this.access(ctx);
			const id = recordId(rawId);
			if (id === null) return null;
			const snippet: SnippetDoc | null = await this.db.snippets.findOne({ id, project_id: access.project.id });
			if (!snippet || !canReadSnippet(snippet, ctx.meta.user ?? null, access)) return null;
			return snippet;
		},

		/**
		 * The answer for a snippet the caller cannot see: 404 as if it did not exist; but an
		 * anonymous caller may only read public snippets, so anything else asks them to sign in
		 * (401, docs/api.md#authentication), for missing and hidden snippets alike.
		 */
		hidden(ctx: Ctx, notFoundError: ApiError): ApiError {
			return ctx.meta.user ? notFoundError : unauthorized();
		},

		/**
		 * A new snippet of the caller's in this project, for both versions' create (each reads its
		 * own parameters into `fields`); the project's cached reads are cleaned.
		 */
		async insertSnippet(ctx: Ctx<unknown>, fields: NewSnippet): Promise<SnippetDoc> {
			const projectId = this.access(ctx).project.id;
			const now = new Date().toISOString();
			const snippet = await this.db.snippets.insert({
				project_id: projectId,
				...fields,
				author_id: ctx.meta.user!.id,
				expires_at: null,
				created_at: now,
				updated_at: now,
			});
			await this.cleanProjectCache(projectId);
			return snippet;
		},

		/** Both versions' update: the changes stored with a new `updated_at`, the cached reads cleaned; 404 when it was deleted meanwhile. */
		async updateSnippet(snippet: SnippetDoc, changes: Partial<SnippetDoc>): Promise<SnippetDoc> {
			const updated = await this.db.snippets.updateOne({ id: snippet.id }, { ...changes, updated_at: new Date().toISOString() });
			if (!updated) throw notFound("Snippet");
			await this.cleanProjectCache(snippet.project_id);
			return updated;
		},

		/** The snippets in the version's entity (`presenter`), their authors fetched from accounts in one call. */
		async present<E>(ctx: Ctx<unknown>, snippets: SnippetDoc[], presenter: SnippetPresenter<E>): Promise<E[]> {
			const byId = await usersById(
				ctx,
				snippets.map(s => s.author_id),
			);
			const place = { gitlabUrl: config.gitlabUrl, projectPath: this.access(ctx).project.path_with_namespace };
			return snippets.map(s => presenter(s, byId.get(s.author_id) ?? null, place));
		},
	},
};

export default SnippetsService;
