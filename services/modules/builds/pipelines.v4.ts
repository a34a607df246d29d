/**
 * API v4's pipelines (docs/api.md#v4-pipelines): one per commit and ref the project's builds ran
 * for (lib/builds/pipeline-store.ts), listed, read, and their jobs listed. Reading needs
 * `read_build`, as the jobs do.
 */
import { config } from "../../../config";
import { AccessLevel, type ProjectAccess } from "../../../lib/accounts/access";
import { BOOLEAN_PARAM, isTrue } from "../../../lib/api/booleans";
import { recordNotFound } from "../../../lib/api/errors";
import { PAGE_PARAMS, paginated, parsePage } from "../../../lib/api/pagination";
import { parseId } from "../../../lib/builds/build-input";
import { isCanonicalScope } from "../../../lib/builds/build-state";
import { JOB_SCOPE_PARAM, parseJobScope, PIPELINE_LIST_PARAMS, pipelineStatuses, type PipelineListParams } from "../../../lib/builds/job-listing";
import type { PipelineDoc } from "../../../models/pipeline";
import { DEFAULT_BRANCH } from "../../../models/project";
import { presentPipeline, presentPipelineBasic } from "../../../presenters/pipeline";
import { READ_BUILD_KEYS } from "./jobs.v4";
import type { BuildsModule, Ctx } from "./shared";
import { usersById } from "../../../lib/accounts/lookups";
import { RECORD_ID_SCHEMA } from "../../../lib/api/record-id";

const CACHE_TTL = 60;
const pipelineParams = { id: "string", pipeline_id: { type: "any", openapi: RECORD_ID_SCHEMA } } as const;
const place = (ctx: Ctx<unknown>, projectPath: string) => ({ gitlabUrl: config.gitlabUrl, projectPath });

export const PipelinesV4: BuildsModule = {
	actions: {
		/** Newest first (or `order_by`/`sort`), filtered by `scope`, `status`, `ref`, `sha`; only pipelines that have builds. */
		listPipelines: {
			access: AccessLevel.NONE,
			auth: "optional",
			params: { id: "string", ...PIPELINE_LIST_PARAMS, ...PAGE_PARAMS },
			cache: { keys: [...READ_BUILD_KEYS, "scope", "status", "ref", "sha", "order_by", "sort", "page", "per_page"], ttl: CACHE_TTL },
			async handler(ctx: Ctx<PipelineListParams & { page?: number; per_page?: number }>) {
				const access = this.requireReadBuilds(ctx);
				const p = ctx.params;
				const page = parsePage(p);
				const statuses = pipelineStatuses(p);
				if (statuses?.length === 0) return paginated([], 0, page);
				const tag = p.scope === "tags" ? true : p.scope === "branches" ? false : undefined;
				const order = { field: p.order_by ?? "id", direction: p.sort ?? "desc" } as const;
				const { rows, total } = await this.builds.pipelines.page(
					access.project.id,
					{ statuses: statuses ?? undefined, ref: p.ref, sha: p.sha, tag, order },
					page,
				);
				return paginated(
					rows.map(r => presentPipelineBasic(r, place(ctx, access.project.path_with_namespace))),
					total,
					page,
				);
			},
		},

		/** Its status worked out from its builds as they are now (so a change a crash left unapplied is applied here). */
		getPipeline: {
			access: AccessLevel.NONE,
			auth: "optional",
			hedge: true,
			params: pipelineParams,
			async handler(ctx: Ctx<{ pipeline_id: unknown }>) {
				const id = parseId(ctx.params.pipeline_id, "pipeline_id");
				const access = this.requireReadBuilds(ctx);
				return this.presentFreshPipeline(ctx, access, await this.projectPipeline(access.project.id, id));
			},
		},

		/** The ref's newest pipeline (`ref` blank or left out: the default branch), as `getPipeline` shows one. */
		latestPipeline: {
			access: AccessLevel.NONE,
			auth: "optional",
			hedge: true,
			params: { id: "string", ref: PIPELINE_LIST_PARAMS.ref },
			async handler(ctx: Ctx<{ ref?: string }>) {
				const access = this.requireReadBuilds(ctx);
				const ref = ctx.params.ref?.trim() ? ctx.params.ref : DEFAULT_BRANCH;
				const found = await this.builds.pipelines.latest(access.project.id, ref);
				if (!found) throw recordNotFound();
				return this.presentFreshPipeline(ctx, access, found);
			},
		},

		/** Its jobs, newest first; retried ones only with `include_retried`. */
		listPipelineJobs: {
			access: AccessLevel.NONE,
			auth: "optional",
			params: { ...pipelineParams, scope: JOB_SCOPE_PARAM, include_retried: BOOLEAN_PARAM, ...PAGE_PARAMS },
			cache: { keys: [...READ_BUILD_KEYS, "pipeline_id", "scope", "include_retried", "page", "per_page"], ttl: CACHE_TTL, storedIf: isCanonicalScope },
			async handler(ctx: Ctx<{ pipeline_id: unknown; scope?: unknown; include_retried?: unknown; page?: number; per_page?: number }>) {
				const id = parseId(ctx.params.pipeline_id, "pipeline_id");
				const access = this.requireReadBuilds(ctx);
				const pipeline = await this.projectPipeline(access.project.id, id);
				const scope = parseJobScope(ctx.params.scope);
				const page = parsePage(ctx.params);
				if (scope?.length === 0) return paginated([], 0, page);
				const { rows, total } = await this.builds.pipelinePage(pipeline.id, scope, !!isTrue(ctx.params.include_retried), page);
				return paginated(await this.presentJobs(ctx, rows), total, page);
			},
		},
	},

	methods: {
		/** The pipeline with its status worked out from its builds as they are now, in GitLab's Pipeline entity. */
		async presentFreshPipeline(ctx: Ctx<unknown>, access: ProjectAccess, found: PipelineDoc) {
			const pipeline = (await this.builds.pipelines.refresh(found.id)) ?? found;
			const user = pipeline.user_id === null ? undefined : (await usersById(ctx, [pipeline.user_id])).get(pipeline.user_id);
			return presentPipeline(pipeline, user ?? null, place(ctx, access.project.path_with_namespace));
		},

		/** The project's pipeline (one that has builds), or GitLab's record look-up 404. */
		async projectPipeline(projectId: number, id: number): Promise<PipelineDoc> {
			const pipeline = await this.builds.pipelines.inProject(projectId, id);
			if (!pipeline || pipeline.status === null) throw recordNotFound();
			return pipeline;
		},
	},
};
