/**
 * Project snippets (docs/api.md#snippets). Visibility as docs/api.md#snippet-visibility says, on every
 * endpoint and in the list (filtered in the store query, so counts and pages agree): a snippet
 * the caller may not see answers as if it did not exist. The three reads take anonymous
 * callers (`auth: "optional"`): the gateway lets them reach public projects only, and here
 * they read public snippets only (401 for anything else).
 *
 * `code` is kept byte-exact and served back by `raw` as text/plain; charset=utf-8. v3's actions and
 * v4's are services/modules/snippets/; the rules both apply are the methods here.
 */
import type { ServiceSchema, ServiceSettingSchema } from "moleculer";
import { config } from "../config";
import { type ProjectAccess } from "../lib/accounts/access";
import { notFound, unauthorized, type ApiError } from "../lib/api/errors";
import { pageWindow, parsePage } from "../lib/api/pagination";
import { recordId } from "../lib/api/record-id";
import { canReadSnippet, visibleSnippetsQuery } from "../lib/snippets/snippet-rules";
import { serviceModule } from "../lib/moleculer/service-module";
import { CacheCleanerMixin } from "../mixins/cache.mixin";
import { DbMixin } from "../mixins/db.mixin";
import { ProjectAccessMixin } from "../mixins/project-access.mixin";
import { snippetsCollection, type SnippetDoc } from "../models/snippet";
import type { Ctx, NewSnippet, SnippetPresenter, SnippetsMethods as Methods, SnippetsVars as Vars } from "./modules/snippets/shared";
import { ProjectSnippets } from "./modules/snippets/project-snippets";
import { ProjectSnippetsV4 } from "./modules/snippets/project-snippets.v4";
import { usersById } from "../lib/accounts/lookups";

/** Newest first; the id breaks ties within a millisecond. */
const NEWEST_FIRST = ["-created_at", "-id"];

const SnippetsService: ServiceSchema<ServiceSettingSchema, Methods, Vars> = {
	name: "snippets",
	mixins: [
		DbMixin({ snippets: snippetsCollection }),
		CacheCleanerMixin(),
		ProjectAccessMixin(),
		serviceModule(ProjectSnippets),
		serviceModule(ProjectSnippetsV4),
	],

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
