/**
 * What the snippets service's parts share: its `this`. v3's actions and the visibility rules'
 * methods are services/snippets.service.ts, v4's actions services/modules/snippets/project-snippets.v4.ts.
 */
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import type { ApiMeta } from "../../../lib/api/context";
import type { ApiError } from "../../../lib/api/errors";
import type { PageRequest } from "../../../lib/api/pagination";
import type { Collection } from "../../../lib/store/collection";
import type { CacheCleanerMethods } from "../../../mixins/cache-cleaner.mixin";
import type { ProjectAccessMethods } from "../../../mixins/project-access.mixin";
import type { SnippetDoc } from "../../../models/snippet";
import type { UserDoc } from "../../../models/user";
import type { presentSnippet } from "../../../presenters/snippet";
import type { presentSnippetV4 } from "../../../presenters/snippet.v4";

type SnippetV4Entity = ReturnType<typeof presentSnippetV4>;

export type Ctx<P = Record<string, unknown>> = Context<P, ApiMeta>;

export interface SnippetsMethods extends ProjectAccessMethods, CacheCleanerMethods {
	visibleSnippet(ctx: Ctx, rawId: string): Promise<SnippetDoc | null>;
	visiblePage(ctx: Ctx<{ page?: number; per_page?: number }>): Promise<{ found: SnippetDoc[]; total: number; page: PageRequest }>;
	hidden(ctx: Ctx, notFoundError: ApiError): ApiError;
	present(ctx: Ctx, snippets: SnippetDoc[]): Promise<ReturnType<typeof presentSnippet>[]>;
	/** The snippets' authors, from accounts in one call. */
	authors(ctx: Ctx, snippets: SnippetDoc[]): Promise<Map<number, UserDoc>>;
	// v4's (services/modules/snippets/project-snippets.v4.ts):
	readableV4(ctx: Ctx<{ snippet_id: string }>): Promise<SnippetDoc>;
	presentV4(ctx: Ctx<unknown>, snippets: SnippetDoc[]): Promise<SnippetV4Entity[]>;
}

export interface SnippetsVars {
	db: { snippets: Collection<SnippetDoc> };
}

export type SnippetsModule = Partial<ServiceSchema<ServiceSettingSchema, SnippetsMethods, SnippetsVars>>;
