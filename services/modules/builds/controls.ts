/**
 * What a user does to a build, in either version (docs/api.md#build-states): cancel, retry, erase,
 * and dropping its artifacts (v4). Each is a compare-and-set on the state that was read, and
 * cleans the project's cached reads; the versions' actions present the result.
 */
import { assertErasable, assertRetryable, cancelPatch, retriedBuildState } from "../../../lib/builds/build-state";
import { untilSet } from "../../../lib/builds/build-store";
import type { BuildDoc } from "../../../models/build";
import { now, type BuildsModule, type Ctx } from "./shared";

export const Controls: BuildsModule = {
	methods: {
		/** Pending or running → canceled; a finished build as it is. */
		async cancelBuild(ctx: Ctx<unknown>, rawId: unknown): Promise<BuildDoc> {
			const access = this.access(ctx);
			const read = await this.projectBuild(access, rawId);
			return untilSet(
				read,
				() => this.projectBuild(access, read.id),
				async b => {
					const patch = cancelPatch(b, now());
					return patch ? ((await this.changeState(b, patch)) ?? "changed") : b;
				},
			);
		},

		/** A finished build gives a new pending one in the same pipeline; the old one stays, no longer counted there. The new one. */
		async retryBuild(ctx: Ctx<unknown>, rawId: unknown, noun?: string): Promise<BuildDoc> {
			const old = await this.projectBuild(this.access(ctx), rawId);
			assertRetryable(old, noun);
			const [fresh] = await this.insertBuilds(old.project_id, [
				{
					project_id: old.project_id,
					name: old.name,
					stage: old.stage,
					ref: old.ref,
					tag: old.tag,
					commit: old.commit,
					user_id: ctx.meta.user!.id,
					...retriedBuildState(now()),
					retried_from: old.id,
				},
			]);
			await this.builds.markRetried(old);
			await this.cleanProjectCache(old.project_id);
			return fresh;
		},

		/** A finished build with artifacts or a trace loses both (the record first, then the files). The build as it is now. */
		async eraseBuild(ctx: Ctx<unknown>, rawId: unknown, noun?: string): Promise<BuildDoc> {
			const access = this.access(ctx);
			const read = await this.projectBuild(access, rawId);
			// The build as it was when erased: its files are removed below.
			const build = await untilSet(
				read,
				() => this.projectBuild(access, read.id),
				async b => {
					const hasTrace = !b.erased_at && (await this.artifacts.traceSize(b.project_id, b.id)) > 0;
					assertErasable(b, { artifacts: !!b.artifacts, trace: hasTrace }, noun);
					return (await this.builds.markErased(b, now(), ctx.meta.user!.id)) ? b : "changed";
				},
			);
			// The record says erased first, so a failure below leaves files nobody serves, never the reverse.
			if (build.artifacts) await this.artifacts.removeArtifact(build.project_id, build.id, build.artifacts.file);
			await this.artifacts.removeTrace(build.project_id, build.id);
			await this.artifacts.pruneBuildDir(build.project_id, build.id);
			await this.cleanProjectCache(build.project_id);
			return this.projectBuild(access, build.id);
		},

		/** v4's DELETE of a job's artifacts: the record loses them, then the file goes (none: nothing changes). */
		async dropArtifacts(ctx: Ctx<unknown>, rawId: unknown): Promise<void> {
			const access = this.access(ctx);
			const read = await this.projectBuild(access, rawId);
			const build = await untilSet(
				read,
				() => this.projectBuild(access, read.id),
				async b => (!b.artifacts || (await this.builds.dropArtifacts(b)) ? b : "changed"),
			);
			if (!build.artifacts) return;
			await this.artifacts.removeArtifact(build.project_id, build.id, build.artifacts.file);
			await this.cleanProjectCache(build.project_id);
		},
	},
};
