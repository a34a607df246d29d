/** API v4's pipeline entities (GitLab's PipelineBasic < Pipeline, docs/api.md#v4-pipelines); pure. */
import type { BuildStatus } from "../models/build";
import type { PipelineDoc } from "../models/pipeline";
import type { UserDoc } from "../models/user";
import { alwaysNull, boolean, integer, nullable, object, oneOfValues, oneValue, propertiesOf, string, timestamp } from "./json-schema";
import { presentUserBasicV4, USER_BASIC_V4 } from "./user.v4";

/** Where links point: the GITLAB_URL base and the project's `namespace/path`. */
export interface ProjectPlace {
	gitlabUrl: string;
	projectPath: string;
}

/** GitLab's word for each state in its status badges. */
const STATUS_TEXT: Record<BuildStatus, string> = { pending: "pending", running: "running", success: "passed", failed: "failed", canceled: "canceled" };
/** Builds made through the internal API stand for pushes. */
const SOURCE = "push";
/** Pipelines here have no parent commit to name: GitLab's `before_sha` of a first push. */
const NO_SHA = "0".repeat(40);

const seconds = (from: string | null, to: string | null) => (from && to ? Math.max(0, Math.round((Date.parse(to) - Date.parse(from)) / 1000)) : null);

/** PipelineBasic: a list's rows and a job's `pipeline`. */
export function presentPipelineBasic(p: PipelineDoc, place: ProjectPlace) {
	return {
		id: p.id,
		iid: p.iid,
		project_id: p.project_id,
		sha: p.sha,
		ref: p.ref,
		status: p.status,
		source: SOURCE,
		created_at: p.created_at,
		updated_at: p.updated_at,
		web_url: `${place.gitlabUrl}/${place.projectPath}/-/pipelines/${p.id}`,
	};
}

/** Pipeline: one pipeline read by id. */
export function presentPipeline(p: PipelineDoc, user: UserDoc | null, place: ProjectPlace) {
	const status = p.status ?? "pending";
	return {
		...presentPipelineBasic(p, place),
		before_sha: NO_SHA,
		tag: !!p.tag,
		yaml_errors: null,
		user: user ? presentUserBasicV4(user, place.gitlabUrl) : null,
		started_at: p.started_at,
		finished_at: p.finished_at,
		committed_at: null,
		duration: seconds(p.started_at, p.finished_at),
		queued_duration: seconds(p.created_at, p.started_at),
		coverage: null,
		detailed_status: {
			icon: `status_${status}`,
			text: STATUS_TEXT[status],
			label: STATUS_TEXT[status],
			group: status,
			tooltip: STATUS_TEXT[status],
			has_details: true,
			details_path: `/${place.projectPath}/-/pipelines/${p.id}`,
			illustration: null,
			favicon: `/assets/ci_favicons/favicon_status_${status}.png`,
		},
	};
}

/** The shapes above, for the API description (presenters/json-schema.ts). */
export const BUILD_STATUS = oneOfValues("pending", "running", "success", "failed", "canceled");
export const PIPELINE_BASIC = object(
	{
		id: integer,
		iid: integer,
		project_id: integer,
		sha: string,
		ref: string,
		status: nullable(BUILD_STATUS),
		source: oneValue("push"),
		created_at: timestamp,
		updated_at: timestamp,
		web_url: string,
	},
	"PipelineBasic",
);
export const PIPELINE = object(
	{
		...propertiesOf(PIPELINE_BASIC),
		before_sha: string,
		tag: boolean,
		yaml_errors: alwaysNull,
		user: nullable(USER_BASIC_V4),
		started_at: nullable(timestamp),
		finished_at: nullable(timestamp),
		committed_at: alwaysNull,
		duration: nullable(integer),
		queued_duration: nullable(integer),
		coverage: alwaysNull,
		detailed_status: object({
			icon: string,
			text: string,
			label: string,
			group: string,
			tooltip: string,
			has_details: boolean,
			details_path: string,
			illustration: alwaysNull,
			favicon: string,
		}),
	},
	"Pipeline",
);
