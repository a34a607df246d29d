import { config } from "../../config";
import { artifactUpload } from "../artifact-upload";
import { fileDownload } from "../file-download";
import type { RouteTable } from "./types";

const timeout = config.requestTimeoutMs;

/** Builds (docs/api.md#builds) and the internal build API for the CI side (docs/api.md#internal-builds). */
export const buildsRoutes: RouteTable = {
	api: {
		"GET /projects/:id/builds": "builds.list",
		"GET /projects/:id/repository/commits/:sha/builds": "builds.commitBuilds",
		"GET /projects/:id/builds/:build_id": "builds.get",
		// builds authorizes and says where the file is; the gateway streams it from the artifact store.
		"GET /projects/:id/builds/:build_id/trace": fileDownload("builds.traceGrant", { timeout }),
		"GET /projects/:id/builds/:build_id/artifacts": fileDownload("builds.artifactsGrant", { timeout }),
		"POST /projects/:id/builds/:build_id/cancel": "builds.cancel",
		"POST /projects/:id/builds/:build_id/retry": "builds.retry",
		"POST /projects/:id/builds/:build_id/erase": "builds.erase",
	},
	internal: {
		"POST /builds": "builds.create",
		"PUT /builds/:build_id": "builds.updateState",
		// text/plain body, handed over as `text`.
		"PATCH /builds/:build_id/trace": "builds.appendTrace",
	},
	internalStream: {
		// Raw bytes, written by the gateway into the artifact store; builds authorizes and commits.
		"PUT /builds/:build_id/artifacts": artifactUpload("builds.authorizeArtifactsUpload", "builds.commitArtifactsUpload", { timeout }),
	},
};
