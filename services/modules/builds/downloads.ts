/**
 * v3's downloads of a build's trace and artifacts, authorized here (`read_build`) and streamed by
 * the gateway from the artifact store itself (gateway/files/file-download.ts; docs/architecture.md#artifacts).
 */
import { notFound } from "../../../lib/api/errors";
import { artifactsGrant, traceGrant, type DownloadGrant } from "../../../lib/builds/transfer-grants";
import { buildParams, type BuildsModule, type Ctx } from "./shared";

export const Downloads: BuildsModule = {
	actions: {
		/** The trace: text/plain, empty when there is none (docs/api.md#builds). */
		traceGrant: {
			visibility: "public",
			hedge: true,
			params: buildParams,
			async handler(ctx: Ctx<{ build_id: unknown }>): Promise<DownloadGrant> {
				const build = await this.readableBuild(ctx);
				const size = build.erased_at ? 0 : await this.artifacts.traceSize(build.project_id, build.id);
				return traceGrant(this.artifacts.traceKey(build.project_id, build.id), build.id, size);
			},
		},

		/** The artifacts: 404 when the build has none. */
		artifactsGrant: {
			visibility: "public",
			hedge: true,
			params: buildParams,
			async handler(ctx: Ctx<{ build_id: unknown }>): Promise<DownloadGrant> {
				const build = await this.readableBuild(ctx);
				if (!build.artifacts) throw notFound();
				return artifactsGrant(this.artifacts.artifactKey(build.project_id, build.id, build.artifacts.file), build.artifacts);
			},
		},
	},
};
