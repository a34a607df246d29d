/**
 * A pipeline's status from the statuses of its builds (retried ones left out), as GitLab's
 * composite status works it out for the five states builds have here (docs/api.md#v4-pipelines).
 * It depends only on which statuses are present, so the store answers it with one look-up per
 * status on an index, whatever the pipeline's size. Pure.
 */
import { BUILD_STATUSES, type BuildStatus } from "../../models/build";

const FINISHED: readonly BuildStatus[] = ["success", "failed", "canceled"];

/** null: no builds (yet). */
export function compositeStatus(present: ReadonlySet<BuildStatus>): BuildStatus | null {
	if (present.size === 0) return null;
	const only = (...allowed: BuildStatus[]) => [...present].every(s => allowed.includes(s));
	if (only("success")) return "success";
	if (only("canceled", "success")) return "canceled";
	if (only("pending")) return "pending";
	if (present.has("running") || present.has("pending")) return "running";
	return "failed";
}

export const isFinished = (status: BuildStatus | null) => status !== null && FINISHED.includes(status);

/** Every status, in the order the look-ups ask for them. */
export const STATUSES: readonly BuildStatus[] = BUILD_STATUSES;
