/**
 * What the snippets service's parts share: its `this`. v3's actions are project-snippets.ts here,
 * v4's project-snippets.v4.ts; the visibility rules' methods are services/snippets.service.ts.
 */
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import type { ApiMeta } from "../../../lib/api/context";
import type { ApiError } from "../../../lib/api/errors";
import type { PageRequest } from "../../../lib/api/pagination";
import type { Collection } from "../../../lib/store/collection";
import type { CacheCleanerMethods } from "../../../mixins/cache.mixin";
import type { ProjectAccessMethods } from "../../../mixins/project-access.mixin";
import type { SnippetDoc } from "../../../models/snippet";
import type { UserDoc } from "../../../models/user";
import type { ProjectPlace } from "../../../presenters/pipeline";

export type Ctx<P = Record<string, unknown>> = Context<P, ApiMeta>;

/** A snippet as one version's entity shows it (presenters/snippet.ts, presenters/snippet.v4.ts). */
export type SnippetPresenter<E> = (snippet: SnippetDoc, author: UserDoc | null, place: ProjectPlace) => E;

/** What a version's create reads from its parameters; the rest of a new snippet is the same in both. */
export type NewSnippet = Omit<SnippetDoc, "id" | "project_id" | "author_id" | "expires_at" | "created_at" | "updated_at">;

export interface SnippetsMethods extends ProjectAccessMethods, CacheCleanerMethods {
	visibleSnippet(ctx: Ctx, rawId: string): Promise<SnippetDoc | null>;
	visiblePage(ctx: Ctx<{ page?: number; per_page?: number }>): Promise<{ found: SnippetDoc[]; total: number; page: PageRequest }>;
	hidden(ctx: Ctx, notFoundError: ApiError): ApiError;
	insertSnippet(ctx: Ctx<unknown>, fields: NewSnippet): Promise<SnippetDoc>;
	updateSnippet(snippet: SnippetDoc, changes: Partial<SnippetDoc>): Promise<SnippetDoc>;
	present<E>(ctx: Ctx<unknown>, snippets: SnippetDoc[], presenter: SnippetPresenter<E>): Promise<E[]>;
	// v4's (services/modules/snippets/project-snippets.v4.ts):
	readableV4(ctx: Ctx<{ snippet_id: string }>): Promise<SnippetDoc>;
}

export interface SnippetsVars {
	db: { snippets: Collection<SnippetDoc> };
}

export type SnippetsModule = Partial<ServiceSchema<ServiceSettingSchema, SnippetsMethods, SnippetsVars>>;
