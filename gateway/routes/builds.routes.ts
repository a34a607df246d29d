import { config } from "../../config";
import { artifactUpload } from "../files/artifact-upload";
import { fileDownload } from "../files/file-download";
import { ARTIFACTS_UPLOAD_SCHEMA, NEW_BUILD_SCHEMA, TRACE_CHUNK_SCHEMA } from "../../lib/builds/build-input";
import { RUNNER_UPDATE_SCHEMA } from "../../lib/builds/build-state";
import { BUILD, ERASED_BUILD } from "../../presenters/build";
import { arrayOf, integer, object } from "../../presenters/json-schema";
import { created, ok } from "./answers";
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
		"GET /projects/:id/builds/:build_id/artifacts": fileDownload("builds.artifactsGrant", { timeout, redirects: true }),
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
	// A change is a compare-and-set on the build's state: one that keeps losing the race is a 409.
	answers: {
		"GET /projects/:id/builds": ok(arrayOf(BUILD)),
		"GET /projects/:id/repository/commits/:sha/builds": ok(arrayOf(BUILD)),
		"GET /projects/:id/builds/:build_id": ok(BUILD),
		"POST /projects/:id/builds/:build_id/cancel": { ...created(BUILD), 409: "Conflict" },
		"POST /projects/:id/builds/:build_id/retry": { ...created(BUILD), 409: "Conflict" },
		"POST /projects/:id/builds/:build_id/erase": { ...created(ERASED_BUILD), 409: "Conflict" },
		// A short_id that does not begin the commit's id: 400.
		"POST /builds": { ...created(BUILD), 400: "RuleRefusal" },
		// A transition the build's state does not allow (success to failed): 400.
		"PUT /builds/:build_id": { ...ok(BUILD), 400: "RuleRefusal", 409: "Conflict" },
		// An erased build takes no trace or artifacts: 403. In a bucket, appends that keep taking this one's place first: 409.
		"PATCH /builds/:build_id/trace": { ...ok(object({ id: integer, trace_size: integer }, "TraceAppended")), 403: "Forbidden", 409: "Conflict" },
		"PUT /builds/:build_id/artifacts": { ...ok(BUILD), 403: "Forbidden", 409: "Conflict" },
	},
	// The internal API's bodies are read by lib/builds (build-input.ts, build-state.ts), which declares them.
	takes: {
		"POST /builds": NEW_BUILD_SCHEMA,
		"PUT /builds/:build_id": RUNNER_UPDATE_SCHEMA,
		"PATCH /builds/:build_id/trace": TRACE_CHUNK_SCHEMA,
		"PUT /builds/:build_id/artifacts": ARTIFACTS_UPLOAD_SCHEMA,
	},
};
