/**
 * API v4's jobs (docs/api.md#v4-jobs): v3's builds, listed with `scope[]` in offset or keyset pages
 * (`pagination=keyset&order_by=id&sort=desc`; other orders are GitLab's 405), read, traced,
 * cancelled, retried and erased, in v4's Job entity with its pipeline. Reading needs `read_build`
 * (reporters, or readers of a public project with public builds, and signed-in readers of an
 * internal one), and takes no token for a public project (docs/api.md#v4-anonymous).
 */
import { config } from "../../../config";
import { AccessLevel } from "../../../lib/accounts/access";
import { keysetPage, PAGE_PARAMS, paginated, parsePage } from "../../../lib/api/pagination";
import { parseId } from "../../../lib/builds/build-input";
import { isCanonicalScope } from "../../../lib/builds/build-state";
import {
	decodeCursor,
	encodeCursor,
	JOB_SCOPE_PARAM,
	KEYSET_GROUP,
	KEYSET_PARAMS,
	parseJobScope,
	wantsKeyset,
	type KeysetParams,
} from "../../../lib/builds/job-listing";
import { traceGrant, type DownloadGrant } from "../../../lib/builds/transfer-grants";
import { PROJECT_CACHE_KEY } from "../../../lib/cache/write-generations";
import type { BuildDoc } from "../../../models/build";
import { presentJob } from "../../../presenters/job";
import type { BuildsModule, Ctx } from "./shared";
import { RECORD_ID_SCHEMA } from "../../../lib/api/record-id";

export const jobParams = { id: "string", job_id: { type: "any", openapi: RECORD_ID_SCHEMA } } as const;
/** A job's id from the path, as Grape's `type: Integer` takes it (`job_id is invalid`), before any permission. */
export const jobId = (raw: unknown) => parseId(raw, "job_id");
/**
 * Cached reads that check `read_build` in their handler: a hit skips the handler, so the entry is
 * kept per everything that check reads (the caller's level, whether an admin, the project's public
 * builds and visibility), and only a caller who passed it with the same inputs is answered from it.
 */
export const READ_BUILD_KEYS = [PROJECT_CACHE_KEY, "#access.level", "#access.admin", "#access.project.public_builds", "#access.project.visibility_level"];
const CACHE_TTL = 60;

type ListParams = KeysetParams & { scope?: unknown; page?: number; per_page?: number };

export const JobsV4: BuildsModule = {
	actions: {
		listJobs: {
			access: AccessLevel.NONE,
			auth: "optional",
			params: { id: "string", scope: JOB_SCOPE_PARAM, ...PAGE_PARAMS, ...KEYSET_PARAMS },
			paramGroups: [KEYSET_GROUP],
			cache: {
				keys: [...READ_BUILD_KEYS, "scope", "page", "per_page", "pagination", "order_by", "sort", "cursor"],
				ttl: CACHE_TTL,
				storedIf: isCanonicalScope,
			},
			async handler(ctx: Ctx<ListParams>) {
				const projectId = this.requireReadBuilds(ctx).project.id;
				const scope = parseJobScope(ctx.params.scope);
				const page = parsePage(ctx.params);
				if (wantsKeyset(ctx.params)) {
					const before = ctx.params.cursor === undefined ? null : decodeCursor(ctx.params.cursor).seq;
					const { rows, more } =
						scope?.length === 0 ? { rows: [], more: false } : await this.builds.keysetPage(projectId, scope, before, page.perPage);
					const last = rows[rows.length - 1];
					return keysetPage(await this.presentJobs(ctx, rows), more && last ? encodeCursor({ id: last.id, seq: last.seq }) : null, page.perPage);
				}
				if (scope?.length === 0) return paginated([], 0, page);
				const { rows, total } = scope ? await this.builds.scopePage(projectId, scope, page) : await this.builds.projectPage(projectId, page);
				return paginated(await this.presentJobs(ctx, rows), total, page);
			},
		},

		getJob: {
			access: AccessLevel.NONE,
			auth: "optional",
			params: jobParams,
			cache: { keys: [...READ_BUILD_KEYS, "job_id"], ttl: CACHE_TTL },
			async handler(ctx: Ctx<{ job_id: unknown }>) {
				const id = jobId(ctx.params.job_id);
				const build = await this.projectBuild(this.requireReadBuilds(ctx), id);
				return (await this.presentJobs(ctx, [build]))[0];
			},
		},

		/** The log as text/plain, streamed by the gateway (empty when there is none). */
		jobTraceGrant: {
			visibility: "public",
			auth: "optional",
			hedge: true,
			params: jobParams,
			async handler(ctx: Ctx<{ job_id: unknown }>): Promise<DownloadGrant> {
				const id = jobId(ctx.params.job_id);
				const build = await this.projectBuild(this.requireReadBuilds(ctx), id);
				const size = build.erased_at ? 0 : await this.artifacts.traceSize(build.project_id, build.id);
				return traceGrant(this.artifacts.traceKey(build.project_id, build.id), build.id, size);
			},
		},

		cancelJob: {
			access: AccessLevel.DEVELOPER,
			params: jobParams,
			async handler(ctx: Ctx<{ job_id: unknown }>) {
				const build = await this.cancelBuild(ctx, jobId(ctx.params.job_id));
				this.created201V4(ctx, build);
				return (await this.presentJobs(ctx, [build]))[0];
			},
		},

		retryJob: {
			access: AccessLevel.DEVELOPER,
			params: jobParams,
			async handler(ctx: Ctx<{ job_id: unknown }>) {
				const fresh = await this.retryBuild(ctx, jobId(ctx.params.job_id), "Job");
				this.created201V4(ctx, fresh);
				return (await this.presentJobs(ctx, [fresh]))[0];
			},
		},

		eraseJob: {
			access: AccessLevel.DEVELOPER,
			params: jobParams,
			async handler(ctx: Ctx<{ job_id: unknown }>) {
				const erased = await this.eraseBuild(ctx, jobId(ctx.params.job_id), "Job");
				this.created201V4(ctx, erased);
				return (await this.presentJobs(ctx, [erased]))[0];
			},
		},
	},

	methods: {
		/** v4's Job entities, with their users and pipelines fetched once for all. */
		async presentJobs(ctx: Ctx<unknown>, builds: BuildDoc[]) {
			const pipelineIds = [...new Set(builds.map(b => b.pipeline_id).filter((id): id is number => id !== undefined))];
			const [users, pipelines] = await Promise.all([this.users(ctx, builds), this.builds.pipelines.byIds(pipelineIds)]);
			const byId = new Map(pipelines.map(p => [p.id, p]));
			const place = { gitlabUrl: config.gitlabUrl, projectPath: this.access(ctx).project.path_with_namespace };
			const now = Date.now();
			return builds.map(b =>
				presentJob(
					b,
					b.user_id === null ? null : (users.get(b.user_id) ?? null),
					b.pipeline_id === undefined ? null : (byId.get(b.pipeline_id) ?? null),
					place,
					now,
				),
			);
		},

		/** 201 with a Location for the job. */
		created201V4(ctx: Ctx<unknown>, build: BuildDoc) {
			ctx.meta.$statusCode = 201;
			ctx.meta.$location = `${config.gitlabUrl}/api/v4/projects/${build.project_id}/jobs/${build.id}`;
		},
	},
};
