/**
 * API v4's job artifacts (docs/api.md#v4-job-artifacts): the archive by job or by ref (the named
 * job of the ref's latest successful pipeline), one file out of it, keep, and DELETE (204). The
 * downloads are authorized here and streamed by the gateway (gateway/files/file-download.ts,
 * gateway/files/artifact-entry-download.ts), as v3's are; the gateway reads a grant's `auth` for its
 * download, so that anyone may fetch a public project's public artifacts (docs/api.md#v4-anonymous).
 */
import { AccessLevel } from "../../../lib/accounts/access";
import { badRequest, notFound, recordNotFound } from "../../../lib/api/errors";
import { artifactEntryGrant, artifactsGrant, type DownloadGrant, type EntryGrant } from "../../../lib/builds/transfer-grants";
import { entryPath } from "../../../lib/builds/zip-entries";
import type { BuildDoc } from "../../../models/build";
import { jobId, jobParams } from "./jobs.v4";
import type { BuildsModule, Ctx } from "./shared";

const refParams = { id: "string", ref_name: { type: "string", max: 1024 }, job: { type: "string", max: 255 } } as const;
const entryParam = { artifact_path: { type: "any" } } as const;
type RefParams = { ref_name: string; job: string };

export const JobArtifactsV4: BuildsModule = {
	actions: {
		jobArtifactsGrant: {
			visibility: "public",
			auth: "optional",
			hedge: true,
			params: jobParams,
			async handler(ctx: Ctx<{ job_id: unknown }>): Promise<DownloadGrant> {
				return this.archiveGrant(await this.readableJob(ctx, ctx.params.job_id));
			},
		},

		refArtifactsGrant: {
			visibility: "public",
			auth: "optional",
			hedge: true,
			params: refParams,
			async handler(ctx: Ctx<RefParams>): Promise<DownloadGrant> {
				return this.archiveGrant(await this.latestSuccessfulJob(ctx, ctx.params.ref_name, ctx.params.job));
			},
		},

		jobArtifactEntryGrant: {
			visibility: "public",
			auth: "optional",
			hedge: true,
			params: { ...jobParams, ...entryParam },
			async handler(ctx: Ctx<{ job_id: unknown; artifact_path: unknown }>): Promise<EntryGrant> {
				return this.entryGrant(await this.readableJob(ctx, ctx.params.job_id), ctx.params.artifact_path);
			},
		},

		refArtifactEntryGrant: {
			visibility: "public",
			auth: "optional",
			hedge: true,
			params: { ...refParams, ...entryParam },
			async handler(ctx: Ctx<RefParams & { artifact_path: unknown }>): Promise<EntryGrant> {
				return this.entryGrant(await this.latestSuccessfulJob(ctx, ctx.params.ref_name, ctx.params.job), ctx.params.artifact_path);
			},
		},

		/** Artifacts here never expire: the job as it is (404 when it has none). 200. */
		keepArtifacts: {
			access: AccessLevel.DEVELOPER,
			params: jobParams,
			async handler(ctx: Ctx<{ job_id: unknown }>) {
				const build = await this.projectBuild(this.access(ctx), jobId(ctx.params.job_id));
				if (!build.artifacts) throw notFound();
				return (await this.presentJobs(ctx, [build]))[0];
			},
		},

		/** Maintainers: the job loses its artifacts (none: nothing changes). 204. */
		deleteArtifacts: {
			access: AccessLevel.MASTER,
			params: jobParams,
			async handler(ctx: Ctx<{ job_id: unknown }>) {
				await this.dropArtifacts(ctx, jobId(ctx.params.job_id));
				ctx.meta.$statusCode = 204;
				return null;
			},
		},
	},

	methods: {
		/** The job a path names, for a caller who may read builds (403 first, then 404). */
		async readableJob(ctx: Ctx<unknown>, rawId: unknown): Promise<BuildDoc> {
			const id = jobId(rawId);
			return this.projectBuild(this.requireReadBuilds(ctx), id);
		},

		/** The job of that name in the ref's latest successful pipeline, successful itself; GitLab's record look-up 404 otherwise. */
		async latestSuccessfulJob(ctx: Ctx<unknown>, ref: string, name: string): Promise<BuildDoc> {
			const access = this.requireReadBuilds(ctx);
			const pipeline = await this.builds.pipelines.latestSuccessful(access.project.id, ref);
			const build = pipeline ? await this.builds.latestSuccessful(pipeline.id, name) : null;
			if (!build) throw recordNotFound();
			return build;
		},

		archiveGrant(build: BuildDoc): DownloadGrant {
			if (!build.artifacts) throw notFound();
			return artifactsGrant(this.artifacts.artifactKey(build.project_id, build.id, build.artifacts.file), build.artifacts);
		},

		/** No artifacts: 404; a path that cannot be one: 400 (GitLab checks in that order). */
		entryGrant(build: BuildDoc, rawPath: unknown): EntryGrant {
			if (!build.artifacts) throw notFound();
			const entry = entryPath(rawPath);
			if (entry === null) throw badRequest("400 Bad request");
			return artifactEntryGrant(this.artifacts.artifactKey(build.project_id, build.id, build.artifacts.file), build.artifacts, entry);
		},
	},
};
