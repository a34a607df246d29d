/**
 * What the builds service's parts share: its `this` (the build store, the artifact store, every
 * part's methods). The user-facing reads and controls are services/builds.service.ts; the internal
 * API the CI side drives is services/modules/builds/internal.ts.
 */
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import type { ProjectAccess } from "../../../lib/accounts/access";
import type { ApiMeta } from "../../../lib/api/context";
import type { ArtifactStore } from "../../../lib/builds/artifact-store";
import type { BuildStore, NewBuild } from "../../../lib/builds/build-store";
import type { StatePatch } from "../../../lib/builds/build-state";
import type { Collection } from "../../../lib/store/collection";
import type { CacheCleanerMethods } from "../../../mixins/cache-cleaner.mixin";
import type { ProjectAccessMethods } from "../../../mixins/project-access.mixin";
import type { BuildCounterDoc, BuildDoc } from "../../../models/build";
import type { UserDoc } from "../../../models/user";
import type { presentBuild } from "../../../presenters/build";

export type Ctx<P = Record<string, unknown>> = Context<P, ApiMeta>;

export interface BuildsVars {
	db: { builds: Collection<BuildDoc>; build_counters: Collection<BuildCounterDoc> };
	builds: BuildStore;
	artifacts: ArtifactStore;
	/** Stops the periodic sweep of unfinished uploads (started with the service). */
	stopUploadSweeps?: () => void;
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
}

export type BuildsModule = Partial<ServiceSchema<ServiceSettingSchema, BuildsMethods, BuildsVars>>;

export const now = () => new Date().toISOString();
