import { config } from "../../../config";
import { JOB } from "../../../presenters/job";
import { arrayOf } from "../../../presenters/json-schema";
import { fileDownload } from "../../files/file-download";
import { created, ok } from "../answers";
import type { RouteTable } from "../types";

const timeout = config.requestTimeoutMs;

/** A change is a compare-and-set on the job's state, as v3's builds: one that keeps losing the race is a 409. */
const CHANGED = { ...created(JOB), 409: "Conflict" };

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
	answers: {
		// A cursor the service did not issue: 400.
		"GET /projects/:id/jobs": { ...ok(arrayOf(JOB)), 400: "RuleRefusal", 405: "KeysetUnsupported" },
		"GET /projects/:id/jobs/:job_id": ok(JOB),
		"POST /projects/:id/jobs/:job_id/cancel": CHANGED,
		"POST /projects/:id/jobs/:job_id/retry": CHANGED,
		"POST /projects/:id/jobs/:job_id/erase": CHANGED,
	},
};
