/**
 * API v4's Job entity (GitLab's JobBasic < Job, docs/api.md#v4-jobs), a build as v4 shows it,
 * beside v3's Build (presenters/build.ts); pure. What this service does not keep (runners, tags,
 * artifact expiry, other artifact kinds than the archive) shows as GitLab shows a job without it.
 */
import type { BuildDoc, CommitDoc } from "../models/build";
import type { PipelineDoc } from "../models/pipeline";
import type { UserDoc } from "../models/user";
import { withNumericOffset } from "./build";
import { alwaysNull, arrayOf, boolean, integer, nullable, number, object, oneValue, string, timestamp } from "./json-schema";
import { BUILD_STATUS, PIPELINE_BASIC, presentPipelineBasic, type ProjectPlace } from "./pipeline";
import { presentUserV4, USER_V4 } from "./user.v4";

/** v4's Commit entity of a job. */
function presentCommitV4(c: CommitDoc, place: ProjectPlace) {
	const created = withNumericOffset(c.created_at);
	return {
		id: c.id,
		short_id: c.short_id,
		created_at: created,
		parent_ids: [] as string[],
		title: c.title,
		message: c.message,
		author_name: c.author_name,
		author_email: c.author_email,
		authored_date: created,
		committer_name: c.committer_name ?? c.author_name,
		committer_email: c.committer_email ?? c.author_email,
		committed_date: created,
		trailers: {},
		extended_trailers: {},
		web_url: `${place.gitlabUrl}/${place.projectPath}/-/commit/${c.id}`,
	};
}

/** Seconds between two times, or to `now` when the second has not come. */
const secondsBetween = (from: string, to: string | null, now: number) => Math.max(0, ((to ? Date.parse(to) : now) - Date.parse(from)) / 1000);

/** A failed build's reason: the CI side reports none here, so GitLab's for a runner that gave none. */
const FAILURE_REASON = "unknown_failure";

export function presentJob(b: BuildDoc, user: UserDoc | null, pipeline: PipelineDoc | null, place: ProjectPlace, now = Date.now()) {
	return {
		id: b.id,
		status: b.status,
		stage: b.stage,
		name: b.name,
		ref: b.ref,
		tag: !!b.tag,
		coverage: b.coverage ?? null,
		allow_failure: false,
		created_at: b.created_at,
		started_at: b.started_at ?? null,
		finished_at: b.finished_at ?? null,
		erased_at: b.erased_at ?? null,
		duration: b.started_at ? secondsBetween(b.started_at, b.finished_at, now) : null,
		queued_duration: secondsBetween(b.created_at, b.started_at, now),
		user: user ? presentUserV4(user, place.gitlabUrl) : null,
		commit: presentCommitV4(b.commit, place),
		pipeline: pipeline ? presentPipelineBasic(pipeline, place) : null,
		...(b.status === "failed" ? { failure_reason: FAILURE_REASON } : {}),
		web_url: `${place.gitlabUrl}/${place.projectPath}/-/jobs/${b.id}`,
		project: { ci_job_token_scope_enabled: false },
		...(b.artifacts ? { artifacts_file: { filename: b.artifacts.filename, size: b.artifacts.size } } : {}),
		artifacts: b.artifacts ? [{ file_type: "archive", size: b.artifacts.size, filename: b.artifacts.filename, file_format: "zip" }] : [],
		runner: null,
		runner_manager: null,
		artifacts_expire_at: null,
		archived: false,
		tag_list: [] as string[],
	};
}

export type JobEntity = ReturnType<typeof presentJob>;

/** The shape above, for the API description (presenters/json-schema.ts). */
const COMMIT_V4 = object(
	{
		id: string,
		short_id: string,
		created_at: string,
		parent_ids: arrayOf(string),
		title: string,
		message: string,
		author_name: string,
		author_email: string,
		authored_date: string,
		committer_name: string,
		committer_email: string,
		committed_date: string,
		trailers: object({}),
		extended_trailers: object({}),
		web_url: string,
	},
	"CommitV4",
);
const ARTIFACTS_FILE = object({ filename: string, size: integer });
export const JOB = object(
	{
		id: integer,
		status: BUILD_STATUS,
		stage: string,
		name: string,
		ref: string,
		tag: boolean,
		coverage: nullable(number),
		allow_failure: boolean,
		created_at: timestamp,
		started_at: nullable(timestamp),
		finished_at: nullable(timestamp),
		erased_at: nullable(timestamp),
		duration: nullable(number),
		queued_duration: number,
		user: nullable(USER_V4),
		commit: COMMIT_V4,
		pipeline: nullable(PIPELINE_BASIC),
		web_url: string,
		project: object({ ci_job_token_scope_enabled: boolean }),
		artifacts: arrayOf(object({ file_type: oneValue("archive"), size: integer, filename: string, file_format: oneValue("zip") })),
		runner: alwaysNull,
		runner_manager: alwaysNull,
		artifacts_expire_at: alwaysNull,
		archived: boolean,
		tag_list: arrayOf(string),
	},
	"Job",
	// A failed job's reason; the archive of a job that has one.
	{ failure_reason: string, artifacts_file: ARTIFACTS_FILE },
);
