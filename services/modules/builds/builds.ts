/**
 * API v3's builds (docs/api.md#builds): a project's and a commit's lists, one build, cancel, retry
 * and erase, and the cached reads behind their permission checks. Controls, downloads and the
 * runner's internal API are modules beside this one; the rules they share are the service's methods.
 */
import { config } from "../../../config";
import { AccessLevel } from "../../../lib/accounts/access";
import { notFound } from "../../../lib/api/errors";
import { PAGE_PARAMS, paginated, parsePage } from "../../../lib/api/pagination";
import { commitIdPrefix, parseId } from "../../../lib/builds/build-input";
import { isCanonicalScope, parseScope, SCOPE_PARAM } from "../../../lib/builds/build-state";
import { PROJECT_CACHE_KEY } from "../../../lib/cache/write-generations";
import { presentErasedBuild } from "../../../presenters/build";
import { buildParams, type BuildsModule, type Ctx } from "./shared";

/** Cached reads live this long at most. Every write cleans them (after bumping the project's write generation: see the cache-cleaner mixin). */
const CACHE_TTL = 60;

export const Builds: BuildsModule = {
	actions: {
		/** Any reader of the project (GitLab 8.x checks no build permission here). Always paginated. */
		list: {
			access: AccessLevel.NONE,
			params: { id: "string", scope: SCOPE_PARAM, ...PAGE_PARAMS },
			cache: { keys: [PROJECT_CACHE_KEY, "scope", "page", "per_page"], ttl: CACHE_TTL, storedIf: isCanonicalScope },
			async handler(ctx: Ctx<{ scope?: unknown; page?: number; per_page?: number }>) {
				const projectId = this.access(ctx).project.id;
				const scope = parseScope(ctx.params.scope);
				const page = parsePage(ctx.params);
				const { rows, total } = scope ? await this.builds.scopePage(projectId, scope, page) : await this.builds.projectPage(projectId, page);
				return paginated(await this.present(ctx, rows), total, page);
			},
		},

		/**
		 * `read_build` (checked here: it depends on the project's public builds). A commit's builds;
		 * none is [], not a 404. An abbreviated id (7 hex characters or more) names the one commit
		 * of the project's builds it starts; one that starts several commits' ids is a 404, as an
		 * ambiguous id is to GitLab's repository look-up.
		 */
		commitBuilds: {
			access: AccessLevel.NONE,
			hedge: true,
			params: { id: "string", sha: "string", scope: SCOPE_PARAM, ...PAGE_PARAMS },
			async handler(ctx: Ctx<{ sha: string; scope?: unknown; page?: number; per_page?: number }>) {
				this.requireReadBuilds(ctx);
				const { sha, scope, page, per_page } = ctx.params;
				// No commit hash or ref is that long: nothing to look up (and nothing to cache).
				if (sha.length > 255) return paginated([], 0, parsePage(ctx.params));
				return ctx.call("builds.cachedCommitBuilds", { sha, scope, page, per_page });
			},
		},

		/** `read_build` (reporter+, or public builds). */
		get: {
			access: AccessLevel.NONE,
			hedge: true,
			params: buildParams,
			async handler(ctx: Ctx<{ build_id: unknown }>) {
				this.requireReadBuilds(ctx);
				const buildId = parseId(ctx.params.build_id, "build_id");
				const build = await ctx.call("builds.cachedBuild", { build_id: String(buildId) });
				if (!build) throw notFound();
				return build;
			},
		},

		/** Pending or running → canceled; a finished build is returned unchanged. 201. */
		cancel: {
			access: AccessLevel.DEVELOPER,
			params: buildParams,
			async handler(ctx: Ctx<{ build_id: unknown }>) {
				const build = await this.cancelBuild(ctx, ctx.params.build_id);
				this.created201(ctx, build);
				return (await this.present(ctx, [build]))[0];
			},
		},

		/** A finished build gives a new pending one (the old one is kept); 201 with the new one. */
		retry: {
			access: AccessLevel.DEVELOPER,
			params: buildParams,
			async handler(ctx: Ctx<{ build_id: unknown }>) {
				const fresh = await this.retryBuild(ctx, ctx.params.build_id);
				this.created201(ctx, fresh);
				return (await this.present(ctx, [fresh]))[0];
			},
		},

		/** A finished build with artifacts or a trace loses both; 201 with the erased-build record. */
		erase: {
			access: AccessLevel.DEVELOPER,
			params: buildParams,
			async handler(ctx: Ctx<{ build_id: unknown }>) {
				const erased = await this.eraseBuild(ctx, ctx.params.build_id);
				this.created201(ctx, erased);
				const users = await this.users(ctx, [erased]);
				return presentErasedBuild(erased, users.get(erased.user_id ?? -1) ?? null, config.gitlabUrl);
			},
		},

		// ── cached reads behind the permission checks above (local calls only) ──

		cachedBuild: {
			visibility: "protected",
			params: { build_id: "string" },
			cache: { keys: [PROJECT_CACHE_KEY, "build_id"], ttl: CACHE_TTL },
			async handler(ctx: Ctx<{ build_id: string }>) {
				const build = await this.builds.inProject(this.access(ctx).project.id, Number(ctx.params.build_id));
				return build ? (await this.present(ctx, [build]))[0] : null;
			},
		},

		cachedCommitBuilds: {
			visibility: "protected",
			params: { sha: "string", scope: SCOPE_PARAM, ...PAGE_PARAMS },
			cache: { keys: [PROJECT_CACHE_KEY, "sha", "scope", "page", "per_page"], ttl: CACHE_TTL, storedIf: isCanonicalScope },
			async handler(ctx: Ctx<{ sha: string; scope?: unknown; page?: number; per_page?: number }>) {
				const page = parsePage(ctx.params);
				const projectId = this.access(ctx).project.id;
				let sha = /^[0-9a-f]+$/i.test(ctx.params.sha) ? ctx.params.sha.toLowerCase() : ctx.params.sha;
				const prefix = commitIdPrefix(sha);
				if (prefix) {
					const commit = await this.builds.commitByPrefix(projectId, prefix);
					if (commit === "ambiguous") throw notFound();
					if (commit === "none") return paginated([], 0, page);
					sha = commit.found;
				}
				const { rows, total } = await this.builds.commitPage(projectId, sha, parseScope(ctx.params.scope), page);
				return paginated(await this.present(ctx, rows), total, page);
			},
		},
	},
};
