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
};
