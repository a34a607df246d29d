import { config } from "../../../config";
import { entryDownload } from "../../files/artifact-entry-download";
import { fileDownload } from "../../files/file-download";
import { JOB } from "../../../presenters/job";
import { noContent, ok } from "../answers";
import type { RouteTable } from "../types";

const timeout = config.requestTimeoutMs;

/**
 * Job artifacts (docs/api.md#v4-job-artifacts), streamed by the gateway: the archive by job or by
 * ref, one file out of it (`*artifact_path` takes slashes, and so does `*ref_name`, as GitLab's
 * `ref_name: /.+/`), keep, DELETE.
 */
export const jobArtifactsRoutes: RouteTable = {
	api: {
		"GET /projects/:id/jobs/:job_id/artifacts": fileDownload("builds.jobArtifactsGrant", { timeout, redirects: true }),
		"GET /projects/:id/jobs/:job_id/artifacts/*artifact_path": entryDownload("builds.jobArtifactEntryGrant", { timeout }),
		"GET /projects/:id/jobs/artifacts/*ref_name/download": fileDownload("builds.refArtifactsGrant", { timeout, redirects: true }),
		"GET /projects/:id/jobs/artifacts/*ref_name/raw/*artifact_path": entryDownload("builds.refArtifactEntryGrant", { timeout }),
		"POST /projects/:id/jobs/:job_id/artifacts/keep": "builds.keepArtifacts",
		"DELETE /projects/:id/jobs/:job_id/artifacts": "builds.deleteArtifacts",
	},
	answers: {
		// Artifacts here never expire: keeping them answers the job as it is.
		"POST /projects/:id/jobs/:job_id/artifacts/keep": ok(JOB),
		"DELETE /projects/:id/jobs/:job_id/artifacts": noContent,
	},
};
