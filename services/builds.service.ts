/**
 * CI builds (docs/api.md#builds, #build-states): v3's lists, reads, and a user's cancel, retry and
 * erase (services/modules/builds/builds.ts, the rules of the controls in controls.ts); the trace's and artifacts' downloads are
 * services/modules/builds/downloads.ts, the internal API the CI
 * side drives is services/modules/builds/internal.ts, API v4's jobs, pipelines and job artifacts
 * the *.v4.ts modules beside it.
 * The rules are here; storing, numbering and paging are the build store's (lib/builds/build-store.ts),
 * files the artifact store's. Every change cleans this project's cached reads.
 */
import type { ServiceSchema, ServiceSettingSchema } from "moleculer";
import { config } from "../config";
import { canReadBuilds, type ProjectAccess } from "../lib/accounts/access";
import { usersById } from "../lib/accounts/lookups";
import { ApiError, forbidden, notFound } from "../lib/api/errors";
import { openArtifactStore } from "../lib/builds/artifact-stores";
import { parseId } from "../lib/builds/build-input";
import { isFinished, type StatePatch } from "../lib/builds/build-state";
import { BuildBusy, BuildStore, type NewBuild } from "../lib/builds/build-store";
import { backfillPipelines } from "../lib/builds/pipeline-backfill";
import { PipelineStore } from "../lib/builds/pipeline-store";
import { sweepEvery } from "../lib/builds/sweeps";
import { serviceModule } from "../lib/moleculer/service-module";
import { CacheCleanerMixin } from "../mixins/cache.mixin";
import { DbMixin } from "../mixins/db.mixin";
import { ProjectAccessMixin } from "../mixins/project-access.mixin";
import { buildCountersCollection, buildMigrationsCollection, buildsCollection, type BuildDoc } from "../models/build";
import { pipelineCountersCollection, pipelinesCollection } from "../models/pipeline";
import type { UserDoc } from "../models/user";
import { presentBuild } from "../presenters/build";
import { Builds } from "./modules/builds/builds";
import { Controls } from "./modules/builds/controls";
import { Downloads } from "./modules/builds/downloads";
import { InternalBuilds } from "./modules/builds/internal";
import { JobArtifactsV4 } from "./modules/builds/job-artifacts.v4";
import { JobsV4 } from "./modules/builds/jobs.v4";
import { type BuildsMethods, type BuildsVars, type Ctx } from "./modules/builds/shared";
import { PipelinesV4 } from "./modules/builds/pipelines.v4";

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
		serviceModule(Builds),
		serviceModule(Controls),
		serviceModule(Downloads),
		serviceModule(InternalBuilds),
		serviceModule(JobsV4),
		serviceModule(PipelinesV4),
		serviceModule(JobArtifactsV4),
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
