import type { RouteTable } from "../types";

/** Pipelines (docs/api.md#v4-pipelines): one per commit and ref the project's builds ran for. */
export const pipelinesRoutes: RouteTable = {
	api: {
		"GET /projects/:id/pipelines": "builds.listPipelines",
		"GET /projects/:id/pipelines/:pipeline_id": "builds.getPipeline",
		"GET /projects/:id/pipelines/:pipeline_id/jobs": "builds.listPipelineJobs",
	},
};
