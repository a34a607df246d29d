/**
 * The internal build API the CI side drives (docs/api.md#internal-builds), behind the shared
 * secret and without a user: new builds, runner state updates, trace appends, artifacts uploads
 * (authorized and committed here, written into the store by the gateway), and builds in bulk for seeding.
 */
import { badRequest, conflict, forbidden, invalidValue, notFound, paramError, tooLarge } from "../../../lib/api/errors";
import { TraceBusy, TraceTooLarge, UploadGone } from "../../../lib/builds/artifact-errors";
import { isMissing } from "../../../lib/builds/file-streams";
import { parseArtifactsFilename, parseId, parseNewBuild } from "../../../lib/builds/build-input";
import { isBuildStatus, parseCoverage, parseRunnerUpdate, runnerTransition, stateReached } from "../../../lib/builds/build-state";
import { untilSet } from "../../../lib/builds/build-store";
import { UPLOAD_COMMIT_PARAMS, type UploadCommit, type UploadLease } from "../../../lib/builds/upload-leases";
import type { ArtifactsDoc } from "../../../models/build";
import { now, type BuildsModule, type Ctx } from "./shared";
import { RECORD_ID_SCHEMA } from "../../../lib/api/record-id";
import { projectById, usersById } from "../../../lib/accounts/lookups";

/** The build a runner's call names (its body is read by lib/builds, which declares it: gateway/routes/builds.routes.ts). */
const BUILD_ID_PARAMS = { build_id: { type: "any", openapi: RECORD_ID_SCHEMA } } as const;

/** Most builds one createBatch call takes (its payload stays far below NATS's 1 MB). */
export const BATCH_MAX = 500;

export const InternalBuilds: BuildsModule = {
	actions: {
		/** `POST /internal/builds`: a new pending build. 201. */
		create: {
			async handler(ctx: Ctx) {
				const input = parseNewBuild(ctx.params);
				if (!(await projectById(ctx, input.project_id))) throw notFound("Project");
				if (input.user_id !== null && !(await usersById(ctx, [input.user_id])).size) throw notFound("User");
				const [build] = await this.insertBuilds(input.project_id, [
					{ ...input, status: "pending", coverage: null, created_at: now(), started_at: null, finished_at: null },
				]);
				this.created201(ctx, build);
				return (await this.present(ctx, [build]))[0];
			},
		},

		/**
		 * The internal API in bulk, for `npm run seed` over the broker (no HTTP route): up to
		 * BATCH_MAX builds of one project, each the body of `POST /internal/builds` plus the state to
		 * leave it in (`status`, reached through the same transitions a runner and a user would
		 * make), an optional `coverage` and `trace`. Answers the new ids in order.
		 */
		createBatch: {
			visibility: "public",
			params: { project_id: { type: "any" }, builds: { type: "array", min: 1, max: BATCH_MAX, items: "object" } },
			async handler(ctx: Ctx<{ project_id: unknown; builds: Record<string, unknown>[] }>) {
				const at = now();
				const items = ctx.params.builds.map(item => {
					const input = parseNewBuild({ ...item, project_id: ctx.params.project_id });
					const status = item.status ?? "pending";
					if (!isBuildStatus(status)) throw invalidValue("status");
					const coverage = item.coverage === undefined ? undefined : parseCoverage(item.coverage);
					if (item.trace !== undefined && typeof item.trace !== "string") throw paramError("trace is invalid");
					return { input, state: stateReached(status, at, coverage), trace: item.trace };
				});
				const projectId = items[0].input.project_id;
				if (!(await projectById(ctx, projectId))) throw notFound("Project");
				const userIds = new Set(items.map(i => i.input.user_id).filter((id): id is number => id !== null));
				if ((await usersById(ctx, userIds)).size !== userIds.size) throw notFound("User");
				const builds = await this.insertBuilds(
					projectId,
					items.map(({ input, state }) => ({ ...input, ...state, created_at: at })),
				);
				for (const [i, b] of builds.entries()) if (items[i].trace) await this.artifacts.appendTrace(projectId, b.id, items[i].trace);
				return { ids: builds.map(b => b.id) };
			},
		},

		/** `PUT /internal/builds/:build_id` `{status: running|success|failed, coverage?}`. 200. */
		updateState: {
			params: BUILD_ID_PARAMS,
			async handler(ctx: Ctx<{ build_id: unknown; status?: unknown; coverage?: unknown }>) {
				const buildId = parseId(ctx.params.build_id, "build_id");
				const { status, coverage } = parseRunnerUpdate(ctx.params);
				const build = await untilSet(
					await this.anyBuild(buildId),
					() => this.anyBuild(buildId),
					async b => {
						const patch = runnerTransition(b, status, now(), coverage);
						return Object.keys(patch).length ? ((await this.changeState(b, patch)) ?? "changed") : b;
					},
				);
				return (await this.present(ctx, [build]))[0];
			},
		},

		/** `PATCH /internal/builds/:build_id/trace` with a text/plain body: appended. 200 `{id, trace_size}`. */
		appendTrace: {
			params: BUILD_ID_PARAMS,
			async handler(ctx: Ctx<{ build_id: unknown; text?: unknown }>) {
				const buildId = parseId(ctx.params.build_id, "build_id");
				const { text } = ctx.params;
				if (text === undefined || text === null) throw paramError("trace is missing");
				if (typeof text !== "string") throw paramError("trace is invalid");
				const build = await this.anyBuild(buildId);
				if (build.erased_at) throw forbidden("Build has been erased");
				if (!text.length) return { id: build.id, trace_size: await this.artifacts.traceSize(build.project_id, build.id) };
				let size: number;
				try {
					size = await this.artifacts.appendTrace(build.project_id, build.id, text);
				} catch (err) {
					if (err instanceof TraceTooLarge) throw tooLarge();
					if (err instanceof TraceBusy) throw conflict("409 Conflict - the trace changed, try again");
					// An erase pruned the build's directory under the append.
					if (isMissing(err) && (await this.anyBuild(buildId)).erased_at) throw forbidden("Build has been erased");
					throw err;
				}
				// An erase that came between the check above and the append: its trace is gone for good.
				if ((await this.anyBuild(buildId)).erased_at) {
					await this.artifacts.removeTrace(build.project_id, build.id);
					await this.artifacts.pruneBuildDir(build.project_id, build.id);
					throw forbidden("Build has been erased");
				}
				return { id: build.id, trace_size: size };
			},
		},

		/**
		 * `PUT /internal/builds/:build_id/artifacts?filename=NAME`, step 1 (lib/builds/upload-leases.ts):
		 * the build exists and takes artifacts. The gateway then writes the body into the store
		 * itself (gateway/files/artifact-upload.ts) and commits it below.
		 */
		authorizeArtifactsUpload: {
			visibility: "public",
			params: BUILD_ID_PARAMS,
			async handler(ctx: Ctx<{ build_id: unknown; filename?: unknown }>): Promise<UploadLease> {
				const buildId = parseId(ctx.params.build_id, "build_id");
				const filename = parseArtifactsFilename(ctx.params.filename);
				const build = await this.anyBuild(buildId);
				if (build.erased_at) throw forbidden("Build has been erased");
				return { build_id: build.id, project_id: build.project_id, filename };
			},
		},

		/**
		 * Step 3: the complete upload becomes the build's artifacts, replacing any previous ones, with
		 * a compare-and-set on the record. On any failure the upload is removed. 200 with the build.
		 */
		commitArtifactsUpload: {
			visibility: "public",
			params: UPLOAD_COMMIT_PARAMS,
			async handler(ctx: Ctx<UploadCommit>) {
				const { build_id: buildId, upload } = ctx.params;
				/** The new file until the build record points at it. */
				let orphan: { projectId: number; buildId: number; file: string } | null = null;
				try {
					const filename = parseArtifactsFilename(ctx.params.filename);
					const read = await this.anyBuild(buildId);
					if (read.erased_at) throw forbidden("Build has been erased");
					const stored = await this.artifacts.commitUpload(read.project_id, read.id, upload);
					orphan = { projectId: read.project_id, buildId: read.id, file: stored.file };
					if (stored.size !== ctx.params.size) throw badRequest(`400 (Bad request) upload has ${stored.size} bytes, not ${ctx.params.size}`);
					const artifacts: ArtifactsDoc = { filename, size: stored.size, file: stored.file };
					const build = await untilSet(
						read,
						() => this.anyBuild(buildId),
						async b => {
							if (b.erased_at) throw forbidden("Build has been erased");
							return (await this.builds.setArtifacts(b, artifacts)) ? b : "changed";
						},
					);
					orphan = null;
					if (build.artifacts) await this.artifacts.removeArtifact(build.project_id, build.id, build.artifacts.file);
					await this.cleanProjectCache(build.project_id);
					return (await this.present(ctx, [{ ...build, artifacts }]))[0];
				} catch (err) {
					if (orphan) await this.artifacts.removeArtifact(orphan.projectId, orphan.buildId, orphan.file);
					else await this.artifacts.discardUpload(upload, buildId).catch(() => {});
					if (err instanceof UploadGone) {
						// An erase can prune the build's directory between the check and the move.
						if ((await this.anyBuild(buildId).catch(() => null))?.erased_at) throw forbidden("Build has been erased");
						throw badRequest("400 (Bad request) upload is gone");
					}
					throw err;
				}
			},
		},
	},
};
