import { windowedDownload } from "../windowed-download";
import type { RouteTable } from "./types";

/** Builds (docs/api.md#builds) and the internal build API for the CI side (docs/api.md#internal-builds). */
export const buildsRoutes: RouteTable = {
	api: {
		"GET /projects/:id/builds": "builds.list",
		"GET /projects/:id/repository/commits/:sha/builds": "builds.commitBuilds",
		"GET /projects/:id/builds/:build_id": "builds.get",
		// Files come in windows, so that a slow client never makes the gateway buffer the whole file.
		"GET /projects/:id/builds/:build_id/trace": windowedDownload("builds.traceInfo", "builds.traceRange"),
		"GET /projects/:id/builds/:build_id/artifacts": windowedDownload("builds.artifactsInfo", "builds.artifactsRange"),
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
		// Raw bytes, streamed through the transporter into the artifacts store.
		"PUT /builds/:build_id/artifacts": "stream:builds.uploadArtifacts",
	},
};
