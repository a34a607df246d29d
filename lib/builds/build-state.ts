/**
 * The build state machine and the rules of cancel, retry and erase, pure (GitLab 8.x
 * CommitStatus; docs/api.md#build-states, and #internal-builds for the runner's updates).
 *
 *   pending ──run──> running ──success/drop──> success | failed
 *      │                │
 *      └──success/drop──┴──cancel──> canceled          (finished: success, failed, canceled)
 *
 * Helpers answer with what to write (`set`) rather than writing; the service applies the write
 * as a compare-and-set on the status it read, so two racing updates cannot both win.
 */
import { BUILD_STATUSES, type BuildStatus } from "../../models/build";
import { forbidden, badRequest, invalidValue, missing, paramError } from "../api/errors";
import { schemaPattern } from "../api/schema-pattern";

const FINISHED_STATUSES: readonly BuildStatus[] = ["success", "failed", "canceled"];
/** What a runner may report through `PUT /internal/builds/:build_id`. */
const RUNNER_STATUSES = ["running", "success", "failed"] as const;
export type RunnerStatus = (typeof RUNNER_STATUSES)[number];

export function isBuildStatus(value: unknown): value is BuildStatus {
	return typeof value === "string" && (BUILD_STATUSES as readonly string[]).includes(value);
}

/** Whether a build (or, from its builds' statuses, a pipeline) has finished; null: no builds yet. */
export function isFinished(status: BuildStatus | null): boolean {
	return status !== null && FINISHED_STATUSES.includes(status);
}

/** The part of a stored build the rules look at. */
export interface BuildStateView {
	status: BuildStatus;
	started_at: string | null;
	finished_at: string | null;
}

/** Fields to set on the build, or nothing to do. */
export type StatePatch = Partial<Pick<BuildStateView, "status" | "started_at" | "finished_at">> & { coverage?: number | null };

/** Runner transitions: `from` → the statuses it may move to (GitLab's run, success and drop events). */
const RUNNER_TRANSITIONS: Record<BuildStatus, readonly BuildStatus[]> = {
	pending: ["running", "success", "failed"],
	running: ["success", "failed"],
	success: [],
	failed: [],
	canceled: [],
};

/**
 * A runner's state update. `running` sets `started_at`; `success`/`failed` set `finished_at`
 * (a pending build may also be dropped or passed without running; it keeps `started_at` null).
 * Re-sending the status the build already has is a no-op (a runner may retry a request whose
 * answer it lost), apart from the coverage it carries. Anything else is a 400.
 */
export function runnerTransition(build: BuildStateView, to: RunnerStatus, now: string, coverage?: number | null): StatePatch {
	const patch: StatePatch = {};
	if (coverage !== undefined) patch.coverage = coverage;
	if (build.status === to) return patch;
	if (!RUNNER_TRANSITIONS[build.status].includes(to)) throw badRequest(`Cannot transition build status from ${build.status} to ${to}`);
	patch.status = to;
	if (to === "running") patch.started_at = now;
	else patch.finished_at = now;
	return patch;
}

/**
 * Cancel: a pending or running build becomes canceled with `finished_at` set; a finished one is
 * left as it is (GitLab answers 201 with the unchanged build). Returns null when nothing changes.
 */
export function cancelPatch(build: BuildStateView, now: string): StatePatch | null {
	if (isFinished(build.status)) return null;
	return { status: "canceled", finished_at: now };
}

/**
 * The state a build is in once it has been brought to `status` through the transitions a runner
 * and a user make (pending → running → success|failed; pending → canceled), at `at`, with the
 * coverage a finishing runner reports. For builds created in bulk (seeding).
 */
export function stateReached(status: BuildStatus, at: string, coverage?: number | null): BuildStateView & { coverage: number | null } {
	let state: BuildStateView & { coverage: number | null } = { status: "pending", started_at: null, finished_at: null, coverage: null };
	if (status === "canceled") return { ...state, ...cancelPatch(state, at) };
	if (status === "pending") return state;
	state = { ...state, ...runnerTransition(state, "running", at) };
	return status === "running" ? state : { ...state, ...runnerTransition(state, status, at, coverage) };
}

/** Retry needs a finished build; otherwise `403 Forbidden  - Build is not retryable`. */
/** `noun`: what the version calls a build (v4: "Job"). */
export function assertRetryable(build: BuildStateView, noun = "Build"): void {
	if (!isFinished(build.status)) throw forbidden(`${noun} is not retryable`);
}

/** The fields a retried build starts with; everything else (name, stage, ref, tag, commit) is copied. */
export function retriedBuildState(now: string): BuildStateView & { created_at: string; coverage: null } {
	return { status: "pending", created_at: now, started_at: null, finished_at: null, coverage: null };
}

/** Erase needs a finished build with artifacts or a trace; otherwise `403 Forbidden  - Build is not erasable!`. */
export function assertErasable(build: BuildStateView, has: { artifacts: boolean; trace: boolean }, noun = "Build"): void {
	if (!isFinished(build.status) || !(has.artifacts || has.trace)) throw forbidden(`${noun} is not erasable!`);
}

/**
 * A `scope` parameter as the list actions declare it (v3's builds, v4's jobs and pipelines): one
 * of `values` or a list of them. Anything else is a 400 `scope does not have a valid value`,
 * before any cache or store sees it.
 */
export function scopeParam(values: string[]) {
	return {
		type: "multi",
		optional: true,
		rules: [
			{ type: "enum", values },
			{ type: "array", max: 20, items: { type: "enum", values } },
		],
	} as const;
}

/** v3's: a build state (an empty value means every state). */
export const SCOPE_PARAM = scopeParam([...BUILD_STATUSES, ""]);

/**
 * The `scope` filter: absent, one value, or a list (`scope=a`, `scope[]=a&scope[]=b`, and
 * `scope[0]=a`, which parses to a list or an index-keyed object). Empty values are ignored, so
 * an empty scope means every build. Any other value → 400 `scope does not have a valid value`.
 * Returns the distinct statuses asked for, or null for "all".
 */
export function parseScope(raw: unknown): BuildStatus[] | null {
	if (raw === undefined || raw === null) return null;
	let values: unknown[];
	if (typeof raw === "string") values = [raw];
	else if (Array.isArray(raw)) values = raw;
	else if (typeof raw === "object") values = Object.values(raw as Record<string, unknown>);
	else throw invalidValue("scope");
	const wanted = new Set<BuildStatus>();
	for (const v of values) {
		if (v === "" || v === null || v === undefined) continue;
		if (!isBuildStatus(v)) throw invalidValue("scope");
		wanted.add(v);
	}
	return wanted.size ? BUILD_STATUSES.filter(s => wanted.has(s)) : null;
}

/**
 * The one spelling of a scope whose answers are cached (others are answered, not stored, so a
 * client cannot grow the cache by reordering or repeating states): absent, one state, or two or
 * more distinct states in BUILD_STATUSES order. Parameters as sent, before parseScope.
 */
export function isCanonicalScope(params: { scope?: unknown }): boolean {
	const raw = params.scope;
	if (raw === undefined) return true;
	if (typeof raw === "string") return raw !== "";
	if (!Array.isArray(raw) || raw.length < 2) return false;
	const order = raw.map(v => (BUILD_STATUSES as readonly unknown[]).indexOf(v));
	return order.every((at, i) => at >= 0 && (i === 0 || at > order[i - 1]));
}

/** The body of `PUT /internal/builds/:build_id`: `status` required, `coverage` optional (0–100 or null). */
export function parseRunnerUpdate(body: { status?: unknown; coverage?: unknown }): { status: RunnerStatus; coverage?: number | null } {
	const { status } = body;
	if (status === undefined || status === null || status === "") throw missing("status");
	if (typeof status !== "string" || !(RUNNER_STATUSES as readonly string[]).includes(status)) throw invalidValue("status");
	const out: { status: RunnerStatus; coverage?: number | null } = { status: status as RunnerStatus };
	if (body.coverage !== undefined) out.coverage = parseCoverage(body.coverage);
	return out;
}

/** Coverage as GitLab stores it: a float, or null for none. Numeric strings (form bodies) are accepted. */
export function parseCoverage(raw: unknown): number | null {
	if (raw === null || raw === "") return null;
	const n = typeof raw === "number" ? raw : typeof raw === "string" && COVERAGE_TEXT.test(raw) ? Number(raw) : NaN;
	if (!Number.isFinite(n) || n < 0 || n > 100) throw paramError("coverage is invalid");
	return n;
}

/** A percentage in decimal digits, 0 to 100 (a form's field). */
const COVERAGE_TEXT = /^\s*0*(\d{1,2}(\.\d+)?|100(\.0+)?)\s*$/;

/** What parseRunnerUpdate takes (`PUT /internal/builds/:build_id`), for the API description. */
export const RUNNER_UPDATE_SCHEMA = {
	type: "object",
	properties: {
		status: { enum: RUNNER_STATUSES },
		coverage: { anyOf: [{ type: "number", minimum: 0, maximum: 100 }, { type: "string", pattern: schemaPattern(COVERAGE_TEXT) }, { enum: ["", null] }] },
	},
	required: ["status"],
	additionalProperties: false,
};
