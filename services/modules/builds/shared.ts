/**
 * What the builds service's parts share: its `this` (the build store, the artifact store, every
 * part's methods). v3's reads and controls are services/modules/builds/builds.ts, v4's the *.v4.ts
 * beside it; the internal API the CI side drives is services/modules/builds/internal.ts.
 */
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import type { ProjectAccess } from "../../../lib/accounts/access";
import type { ApiMeta } from "../../../lib/api/context";
import type { BuildFileStore } from "../../../lib/builds/artifact-storage";
import type { BuildStore, NewBuild } from "../../../lib/builds/build-store";
import type { StatePatch } from "../../../lib/builds/build-state";
import type { Collection } from "../../../lib/store/collection";
import type { CacheCleanerMethods } from "../../../mixins/cache.mixin";
import type { ProjectAccessMethods } from "../../../mixins/project-access.mixin";
import type { BuildCounterDoc, BuildDoc, BuildMigrationDoc } from "../../../models/build";
import type { PipelineCounterDoc, PipelineDoc } from "../../../models/pipeline";
import type { UserDoc } from "../../../models/user";
import type { presentBuild } from "../../../presenters/build";
import type { presentPipeline } from "../../../presenters/pipeline";
import type { JobEntity } from "../../../presenters/job";
import type { DownloadGrant, EntryGrant } from "../../../lib/builds/transfer-grants";
import { RECORD_ID_SCHEMA } from "../../../lib/api/record-id";

export type Ctx<P = Record<string, unknown>> = Context<P, ApiMeta>;

export interface BuildsVars {
	db: {
		builds: Collection<BuildDoc>;
		build_counters: Collection<BuildCounterDoc>;
		pipelines: Collection<PipelineDoc>;
		pipeline_counters: Collection<PipelineCounterDoc>;
		build_migrations: Collection<BuildMigrationDoc>;
	};
	/** The background run giving older builds their pipelines (lib/builds/pipeline-backfill.ts); awaited at stop. */
	pipelinesBackfilled?: Promise<unknown>;
	stopping?: boolean;
	builds: BuildStore;
	artifacts: BuildFileStore;
	/** Stops the periodic sweep of unfinished uploads (started with the service). */
	stopUploadSweeps?: () => void;
	/** The start's refresh of pipelines that builds left unrefreshed (BuildStore.settleDue); awaited at stop. */
	pipelinesSettled?: Promise<unknown>;
	/** Stops the periodic one. */
	stopPipelineSweeps?: () => void;
}

export interface BuildsMethods extends ProjectAccessMethods, CacheCleanerMethods {
	requireReadBuilds(ctx: Ctx<unknown>): ProjectAccess;
	readableBuild(ctx: Ctx<{ build_id: unknown }>): Promise<BuildDoc>;
	projectBuild(access: ProjectAccess, rawId: unknown): Promise<BuildDoc>;
	anyBuild(id: number): Promise<BuildDoc>;
	insertBuilds(projectId: number, fields: NewBuild[]): Promise<BuildDoc[]>;
	changeState(build: BuildDoc, patch: StatePatch): Promise<BuildDoc | null>;
	created201(ctx: Ctx<unknown>, build: BuildDoc): void;
	users(ctx: Ctx<unknown>, builds: BuildDoc[]): Promise<Map<number, UserDoc>>;
	present(ctx: Ctx<unknown>, builds: BuildDoc[]): Promise<ReturnType<typeof presentBuild>[]>;
	// services/modules/builds/controls.ts:
	cancelBuild(ctx: Ctx<unknown>, rawId: unknown): Promise<BuildDoc>;
	retryBuild(ctx: Ctx<unknown>, rawId: unknown, noun?: string): Promise<BuildDoc>;
	eraseBuild(ctx: Ctx<unknown>, rawId: unknown, noun?: string): Promise<BuildDoc>;
	dropArtifacts(ctx: Ctx<unknown>, rawId: unknown): Promise<void>;
	// v4's (services/modules/builds/jobs.v4.ts):
	presentJobs(ctx: Ctx<unknown>, builds: BuildDoc[]): Promise<JobEntity[]>;
	created201V4(ctx: Ctx<unknown>, build: BuildDoc): void;
	projectPipeline(projectId: number, id: number): Promise<PipelineDoc>;
	presentFreshPipeline(ctx: Ctx<unknown>, access: ProjectAccess, found: PipelineDoc): Promise<ReturnType<typeof presentPipeline>>;
	// services/modules/builds/job-artifacts.v4.ts:
	readableJob(ctx: Ctx<unknown>, rawId: unknown): Promise<BuildDoc>;
	latestSuccessfulJob(ctx: Ctx<unknown>, ref: string, name: string): Promise<BuildDoc>;
	archiveGrant(build: BuildDoc): DownloadGrant;
	entryGrant(build: BuildDoc, rawPath: unknown): EntryGrant;
}

export type BuildsModule = Partial<ServiceSchema<ServiceSettingSchema, BuildsMethods, BuildsVars>>;

export const now = () => new Date().toISOString();

/** v3's parameters of one build's routes. */
export const buildParams = { id: "string", build_id: { type: "any", openapi: RECORD_ID_SCHEMA } } as const;
