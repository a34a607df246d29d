import { JOB } from "../../../presenters/job";
import { arrayOf } from "../../../presenters/json-schema";
import { PIPELINE, PIPELINE_BASIC } from "../../../presenters/pipeline";
import { ok } from "../answers";
import type { RouteTable } from "../types";

/** Pipelines (docs/api.md#v4-pipelines): one per commit and ref the project's builds ran for; a ref's latest. */
export const pipelinesRoutes: RouteTable = {
	api: {
		"GET /projects/:id/pipelines": "builds.listPipelines",
		// Before `:pipeline_id`, which `latest` would match too (moleculer-web takes the first).
		"GET /projects/:id/pipelines/latest": "builds.latestPipeline",
		"GET /projects/:id/pipelines/:pipeline_id": "builds.getPipeline",
		"GET /projects/:id/pipelines/:pipeline_id/jobs": "builds.listPipelineJobs",
	},
	answers: {
		"GET /projects/:id/pipelines": ok(arrayOf(PIPELINE_BASIC)),
		"GET /projects/:id/pipelines/latest": ok(PIPELINE),
		"GET /projects/:id/pipelines/:pipeline_id": ok(PIPELINE),
		"GET /projects/:id/pipelines/:pipeline_id/jobs": ok(arrayOf(JOB)),
	},
};
