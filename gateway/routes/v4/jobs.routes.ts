import { config } from "../../../config";
import { fileDownload } from "../../file-download";
import type { RouteTable } from "../types";

const timeout = config.requestTimeoutMs;

/** Jobs (docs/api.md#v4-jobs): v3's builds as v4 has them; the log is streamed by the gateway as v3's trace is. */
export const jobsRoutes: RouteTable = {
	api: {
		"GET /projects/:id/jobs": "builds.listJobs",
		"GET /projects/:id/jobs/:job_id": "builds.getJob",
		"GET /projects/:id/jobs/:job_id/trace": fileDownload("builds.jobTraceGrant", { timeout }),
		"POST /projects/:id/jobs/:job_id/cancel": "builds.cancelJob",
		"POST /projects/:id/jobs/:job_id/retry": "builds.retryJob",
		"POST /projects/:id/jobs/:job_id/erase": "builds.eraseJob",
	},
	// A change is a compare-and-set on the job's state, as v3's builds: one that keeps losing the race is a 409.
	answers: {
		"GET /projects/:id/jobs": { 405: "KeysetUnsupported" },
		"POST /projects/:id/jobs/:job_id/cancel": { 409: "Conflict" },
		"POST /projects/:id/jobs/:job_id/retry": { 409: "Conflict" },
		"POST /projects/:id/jobs/:job_id/erase": { 409: "Conflict" },
	},
};
