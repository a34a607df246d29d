/**
 * CI builds (docs/api.md#builds, #build-states): lists, reads, and a user's cancel, retry and erase
 * (services/modules/builds/controls.ts); the trace's and artifacts' downloads are
 * services/modules/builds/downloads.ts, the internal API the CI
 * side drives is services/modules/builds/internal.ts, API v4's jobs, pipelines and job artifacts
 * the *.v4.ts modules beside it.
 * The rules are here; storing, numbering and paging are the build store's (lib/builds/build-store.ts),
 * files the artifact store's. Every change cleans this project's cached reads.
 */
import type { ServiceSchema, ServiceSettingSchema } from "moleculer";
import { config } from "../config";
import { AccessLevel, canReadBuilds, type ProjectAccess } from "../lib/accounts/access";
import { usersById } from "../lib/accounts/lookups";
import { ApiError, forbidden, notFound } from "../lib/api/errors";
import { PAGE_PARAMS, paginated, parsePage } from "../lib/api/pagination";
import { openArtifactStore } from "../lib/builds/artifact-stores";
import { commitIdPrefix, parseId } from "../lib/builds/build-input";
import { isCanonicalScope, isFinished, parseScope, SCOPE_PARAM, type StatePatch } from "../lib/builds/build-state";
import { BuildBusy, BuildStore, type NewBuild } from "../lib/builds/build-store";
import { backfillPipelines } from "../lib/builds/pipeline-backfill";
import { PipelineStore } from "../lib/builds/pipeline-store";
import { sweepEvery } from "../lib/builds/sweeps";
import { CacheCleanerMixin, PROJECT_CACHE_KEY } from "../mixins/cache-cleaner.mixin";
import { DbMixin } from "../mixins/db.mixin";
import { ProjectAccessMixin } from "../mixins/project-access.mixin";
import { buildCountersCollection, buildMigrationsCollection, buildsCollection, type BuildDoc } from "../models/build";
import { pipelineCountersCollection, pipelinesCollection } from "../models/pipeline";
import type { UserDoc } from "../models/user";
import { presentBuild, presentErasedBuild } from "../presenters/build";
import { Controls } from "./modules/builds/controls";
import { Downloads } from "./modules/builds/downloads";
import { InternalBuilds } from "./modules/builds/internal";
import { JobArtifactsV4 } from "./modules/builds/job-artifacts.v4";
import { JobsV4 } from "./modules/builds/jobs.v4";
import { buildParams, type BuildsMethods, type BuildsVars, type Ctx } from "./modules/builds/shared";
import { PipelinesV4 } from "./modules/builds/pipelines.v4";

/** Cached reads live this long at most. Every write cleans them (after bumping the project's write generation: see the cache-cleaner mixin). */
const CACHE_TTL = 60;
/**
 * Uploads in progress that have not been written to for this long were left by a dead process
 * (a live one writes all the time, and no request lasts longer than the gateway's 5 minutes).
 */
const STALE_UPLOAD_MS = 60 * 60 * 1000;
/** How often the running service looks for them (besides once at its start). */
const SWEEP_UPLOADS_EVERY_MS = 15 * 60 * 1000;
/** How often it looks for builds that still owe their pipeline a status refresh (besides once at its start). */
const SETTLE_PIPELINES_EVERY_MS = 60 * 1000;

const BuildsService: ServiceSchema<ServiceSettingSchema, BuildsMethods, BuildsVars> = {
	name: "builds",
	mixins: [
		DbMixin({
			builds: buildsCollection,
			build_counters: buildCountersCollection,
			pipelines: pipelinesCollection,
			pipeline_counters: pipelineCountersCollection,
			build_migrations: buildMigrationsCollection,
		}),
		CacheCleanerMixin(),
		ProjectAccessMixin(),
		...([Controls, Downloads, InternalBuilds, JobsV4, PipelinesV4, JobArtifactsV4] as unknown as Partial<ServiceSchema>[]),
	],

	hooks: {
		error: {
			/** A build that kept changing, or numbers that kept being taken, under every attempt. */
			"*"(_ctx: unknown, err: unknown) {
				if (err instanceof BuildBusy) throw new ApiError(409, { message: "409 Conflict - the build changed, try again" });
				throw err;
			},
		},
	},

	created() {
		this.artifacts = openArtifactStore(config, this.logger);
	},

	async started() {
		const pipelines = new PipelineStore(this.db.pipelines, this.db.pipeline_counters, this.db.builds);
		this.builds = new BuildStore(this.db.builds, this.db.build_counters, pipelines);
		const renumbered = await this.builds.repair(message => this.logger.warn(message));
		await Promise.all(renumbered.map(id => this.cleanProjectCache(id)));
		// Builds stored before pipelines were kept get theirs, in the background (they show no pipeline until then).
		this.pipelinesBackfilled = backfillPipelines({
			builds: this.db.builds,
			counters: this.db.build_counters,
			migrations: this.db.build_migrations,
			pipelines,
			stopping: () => !!this.stopping,
		})
			.then(given => given && this.logger.info(`Gave ${given} build(s) stored before pipelines were kept their pipeline.`))
			.catch((err: unknown) => this.logger.warn("Giving older builds their pipelines stopped; the next start goes on:", err));
		// The store is there and does what the service relies on, or the start stops saying what is wrong.
		await this.artifacts.check();
		const swept = (removed: number) => this.logger.info(`Removed ${removed} artifacts upload(s) left unfinished by a stopped process.`);
		const removed = await this.artifacts.sweepStaleUploads(STALE_UPLOAD_MS);
		if (removed) swept(removed);
		this.stopUploadSweeps = sweepEvery(() => this.artifacts.sweepStaleUploads(STALE_UPLOAD_MS), {
			everyMs: SWEEP_UPLOADS_EVERY_MS,
			onSwept: swept,
			onError: err => this.logger.warn("Sweeping unfinished artifacts uploads failed:", err),
		});
		// Pipelines whose status a stopped process (or a failed refresh) left behind its builds' (docs/architecture.md#pipeline-status).
		const settled = (count: number) => this.logger.info(`Worked out again the pipeline status that ${count} build change(s) left unrefreshed.`);
		const settleFailed = (err: unknown) => this.logger.warn("Refreshing the pipelines builds left unrefreshed failed; the next sweep goes on:", err);
		const settle = async () => {
			const due = await this.builds.settleDue();
			await Promise.all(due.projects.map(id => this.cleanProjectCache(id)));
			return due.builds;
		};
		this.pipelinesSettled = settle().then(count => count && settled(count), settleFailed);
		this.stopPipelineSweeps = sweepEvery(settle, { everyMs: SETTLE_PIPELINES_EVERY_MS, onSwept: settled, onError: settleFailed });
	},

	async stopped() {
		this.stopUploadSweeps?.();
		this.stopPipelineSweeps?.();
		this.stopping = true;
		// Its writes end before the collections close.
		await Promise.all([this.pipelinesBackfilled, this.pipelinesSettled]);
	},

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

	methods: {
		/** The caller may read builds (reporter+, or public builds on a public/internal project), else 403. */
		requireReadBuilds(ctx: Ctx<unknown>): ProjectAccess {
			const access = this.access(ctx);
			if (!canReadBuilds(access, !!ctx.meta.user)) throw forbidden();
			return access;
		},

		/** Permission first (403), then the build of this project (404), as GitLab orders them. */
		async readableBuild(ctx: Ctx<{ build_id: unknown }>): Promise<BuildDoc> {
			return this.projectBuild(this.requireReadBuilds(ctx), ctx.params.build_id);
		},

		async projectBuild(access: ProjectAccess, rawId: unknown): Promise<BuildDoc> {
			const build = await this.builds.inProject(access.project.id, parseId(rawId, "build_id"));
			if (!build) throw notFound();
			return build;
		},

		async anyBuild(id: number): Promise<BuildDoc> {
			const build = await this.builds.byId(id);
			if (!build) throw notFound();
			return build;
		},

		async insertBuilds(projectId: number, fields: NewBuild[]): Promise<BuildDoc[]> {
			const builds = await this.builds.insert(projectId, fields);
			await this.cleanProjectCache(projectId);
			return builds;
		},

		/** A compare-and-set on the status that was read (the build as it is now, or null when it had changed). */
		async changeState(build: BuildDoc, patch: StatePatch): Promise<BuildDoc | null> {
			const changed = await this.builds.applyStatePatch(build, patch);
			if (changed) await this.cleanProjectCache(build.project_id);
			// A finished build's trace is put in one piece where the store keeps it in several (S3), in the background.
			if (changed && patch.status && isFinished(patch.status))
				this.artifacts
					.settleTrace(build.project_id, build.id)
					.catch((err: unknown) => this.logger.warn(`Settling the trace of build ${build.id} failed:`, err));
			return changed;
		},

		/** 201 for POSTs, with a Location for the build (moleculer-web expects one with a 201). */
		created201(ctx: Ctx<unknown>, build: BuildDoc) {
			ctx.meta.$statusCode = 201;
			ctx.meta.$location = `${config.gitlabUrl}/api/v3/projects/${build.project_id}/builds/${build.id}`;
		},

		/** The builds' users, fetched from accounts in one call. */
		users(ctx: Ctx<unknown>, builds: BuildDoc[]): Promise<Map<number, UserDoc>> {
			return usersById(
				ctx,
				builds.map(b => b.user_id).filter((id): id is number => typeof id === "number"),
			);
		},

		async present(ctx: Ctx<unknown>, builds: BuildDoc[]) {
			const byId = await this.users(ctx, builds);
			return builds.map(b => presentBuild(b, b.user_id === null ? null : (byId.get(b.user_id) ?? null), config.gitlabUrl));
		},
	},
};

export default BuildsService;
