/**
 * CI builds (docs/api.md#builds, #build-states) and the internal build API the CI side drives
 * (docs/api.md#internal-builds): create, runner state updates, trace appends, streamed artifacts uploads.
 *
 * Pages cost the same at 100 builds or 1,000,000: every build has a dense per-project number
 * (`seq`, 1…total in creation and id order), so page N of the unfiltered list is one range scan
 * of an index over `project_seq` and X-Total is one counter read. Scope and commit filters go
 * through the `project_status` / `project_sha` indexes (README, "Builds", says what that costs
 * on NeDB, which cannot walk an index in order).
 *
 * Every write is a compare-and-set on the state it read, so racing updates never both win, and
 * every change cleans this project's cached reads.
 */
import type { Context, ServiceSchema } from "moleculer";
import type { Readable } from "stream";
import { config } from "../config";
import { AccessLevel, canReadBuilds, type ProjectAccess } from "../lib/access";
import { ArtifactIncomplete, ArtifactInterrupted, ArtifactStore, ArtifactTooLarge, drain } from "../lib/artifact-store";
import { attachmentDisposition, parseArtifactsFilename, parseId, parseNewBuild, seqKey, seqRange, shaKey, statusKey } from "../lib/build-input";
import { BuildNumbers, NumberingBusy } from "../lib/build-numbers";
import {
	assertErasable,
	assertRetryable,
	cancelPatch,
	isBuildStatus,
	parseCoverage,
	parseRunnerUpdate,
	parseScope,
	retriedBuildState,
	runnerTransition,
	SCOPE_PARAM,
	type BuildStateView,
	type StatePatch,
} from "../lib/build-state";
import type { ApiMeta } from "../lib/context";
import { WINDOW_BYTES, type DownloadInfo, type RangeParams } from "../lib/file-window";
import { ApiError, badRequest, forbidden, invalidValue, notFound, paramError, tooLarge } from "../lib/errors";
import { PAGE_PARAMS, pageWindow, paginated, parsePage, type PageRequest } from "../lib/pagination";
import { CacheCleanerMixin, PROJECT_CACHE_KEY } from "../mixins/cache-cleaner.mixin";
import { DbMixin, type Doc } from "../mixins/db.mixin";
import { ProjectAccessMixin } from "../mixins/project-access.mixin";
import { presentBuild, presentErasedBuild, type ArtifactsDoc, type BuildDoc } from "../presenters/build";
import type { UserDoc } from "../presenters/user";

type Ctx<P = Record<string, unknown>> = Context<P, ApiMeta & { contentLength?: number }>;

/** What a new build is made of; the store adds its numbers and index keys. */
type NewBuildFields = Omit<BuildDoc, "id" | "seq" | "project_seq" | "project_status" | "project_sha" | "artifacts" | "erased_at" | "erased_by">;

const buildParams = { id: "string", build_id: { type: "any" } } as const;
const rangeParams = {
	...buildParams,
	version: "string",
	start: { type: "number", integer: true, min: 0 },
	end: { type: "number", integer: true, min: 0 },
} as const;
/** Newest first: `seq` follows the id within a project. */
const NEWEST_FIRST = ["-seq"];
/** Cached reads live this long at most. Every write cleans them (twice: see the cache-cleaner mixin). */
const CACHE_TTL = 60;
/** Uploads in progress that have not been written to for this long were left by a dead process. */
const STALE_UPLOAD_MS = 60 * 60 * 1000;
/** Most builds one createBatch call takes (its payload stays far below NATS's 1 MB). */
export const BATCH_MAX = 500;
/** Compare-and-set rounds before giving up on a build that keeps changing under us. */
const CAS_ATTEMPTS = 20;

const now = () => new Date().toISOString();

/** An erase, cancel or upload that lost every compare-and-set round: the build is too busy. */
const busy = () => new ApiError(409, { message: "409 Conflict - the build changed, try again" });

/**
 * A compare-and-set with re-reads: `attempt` acts on the build as read and answers "changed" when
 * its conditional write matched nothing; then the build is read again and the attempt repeated,
 * CAS_ATTEMPTS times at most. Resolves with the build the successful attempt returned.
 */
async function untilSet(build: BuildDoc, reread: () => Promise<BuildDoc>, attempt: (b: BuildDoc) => Promise<BuildDoc | "changed">): Promise<BuildDoc> {
	for (let round = 0; ; round++) {
		const outcome = await attempt(build);
		if (outcome !== "changed") return outcome;
		if (round >= CAS_ATTEMPTS) throw busy();
		build = await reread();
	}
}

/** A window asked for by the gateway: within the file and at most a few windows long. */
function checkRange(r: RangeParams, size: number): { start: number; end: number } {
	if (!(r.end >= r.start && r.end < size && r.end - r.start < 16 * WINDOW_BYTES)) throw badRequest("400 (Bad request) range is invalid");
	return { start: r.start, end: r.end };
}

/** The store query that matches the artifacts a build had when it was read. */
function sameArtifacts(b: BuildDoc): Doc {
	return b.artifacts ? { "artifacts.file": b.artifacts.file } : { artifacts: null };
}

const BuildsService: ServiceSchema = {
	name: "builds",
	mixins: [
		DbMixin({
			builds: {
				indexes: [{ fields: { project_seq: 1 }, unique: true }, { fields: { project_status: 1, seq: -1 } }, { fields: { project_sha: 1, seq: -1 } }],
			},
			build_counters: {},
		}),
		CacheCleanerMixin(),
		ProjectAccessMixin(),
	],

	created() {
		this.store = new ArtifactStore(config.artifactsDir, config.maxArtifactBytes);
		this.allocationLocks = new Map();
		this.uploadsInFlight = new Set();
	},

	async started() {
		this.numbers = new BuildNumbers<BuildDoc>(this.db.builds, this.db.build_counters);
		const renumbered: number[] = await this.numbers.repair((message: string) => this.logger.warn(message));
		if (renumbered.length) await Promise.all(renumbered.map(id => this.cleanProjectCache(id)));
		const removed = await this.store.sweepStaleUploads(STALE_UPLOAD_MS);
		if (removed) this.logger.info(`Removed ${removed} artifacts upload(s) left unfinished by a stopped process.`);
	},

	/**
	 * A graceful stop (SIGTERM) has already given in-flight requests the shutdown window; uploads
	 * still running now are cut, so that their partial files are removed before the process exits.
	 */
	async stopped() {
		const uploads = [...this.uploadsInFlight] as { source: Readable; done: Promise<void> }[];
		for (const upload of uploads) upload.source.destroy(new Error("the builds service is stopping"));
		await Promise.allSettled(uploads.map(u => u.done));
	},

	actions: {
		/** Any reader of the project (GitLab 8.x checks no build permission here). Always paginated. */
		list: {
			params: { id: "string", scope: SCOPE_PARAM, ...PAGE_PARAMS },
			cache: { keys: [PROJECT_CACHE_KEY, "scope", "page", "per_page"], ttl: CACHE_TTL },
			async handler(ctx: Ctx<{ scope?: unknown; page?: unknown; per_page?: unknown }>) {
				const projectId = this.access(ctx).project.id;
				const scope = parseScope(ctx.params.scope);
				const page = parsePage(ctx.params);
				const { rows, total } = scope
					? await this.filteredPage({ project_status: { $in: scope.map(s => statusKey(projectId, s)) } }, page)
					: await this.projectPage(projectId, page);
				return paginated(await this.present(ctx, rows), total, page);
			},
		},

		/** `read_build`. The builds of one commit (exact sha); none is an empty list, not a 404. */
		commitBuilds: {
			params: { id: "string", sha: "string", scope: SCOPE_PARAM, ...PAGE_PARAMS },
			async handler(ctx: Ctx<{ sha: unknown; scope?: unknown; page?: unknown; per_page?: unknown }>) {
				this.requireReadBuilds(ctx);
				const { sha, scope, page, per_page } = ctx.params;
				// No commit hash or ref is that long: nothing to look up (and nothing to cache).
				if (typeof sha !== "string" || sha.length > 255) return paginated([], 0, parsePage(ctx.params));
				return ctx.call("builds.cachedCommitBuilds", { sha, scope, page, per_page });
			},
		},

		/** `read_build` (reporter+, or public builds). */
		get: {
			params: buildParams,
			async handler(ctx: Ctx<{ build_id: unknown }>) {
				this.requireReadBuilds(ctx);
				const buildId = parseId(ctx.params.build_id, "build_id");
				const build = await ctx.call("builds.cachedBuild", { build_id: String(buildId) });
				if (!build) throw notFound();
				return build;
			},
		},

		/**
		 * `read_build`. The trace (text/plain, empty when there is none) and the artifacts
		 * (404 when the build has none, docs/api.md#builds) are served by the gateway in windows
		 * (gateway/windowed-download.ts): `*Info` checks and describes the file, `*Range` streams
		 * one window of it.
		 */
		traceInfo: {
			visibility: "public",
			params: buildParams,
			async handler(ctx: Ctx<{ build_id: unknown }>): Promise<DownloadInfo> {
				const build = await this.readableBuild(ctx);
				const size = build.erased_at ? 0 : await this.store.traceSize(build.project_id, build.id);
				// The trace only grows: any range within this size stays what it was.
				return { size, version: String(size), contentType: "text/plain", headers: { "Content-Disposition": `infile; filename="${build.id}.log"` } };
			},
		},

		traceRange: {
			visibility: "public",
			params: rangeParams,
			async handler(ctx: Ctx<{ build_id: unknown } & RangeParams>) {
				const build = await this.readableBuild(ctx);
				const range = checkRange(ctx.params, Number(ctx.params.version));
				const opened = build.erased_at ? null : await this.store.openTrace(build.project_id, build.id, range);
				if (!opened) throw notFound();
				return opened.stream;
			},
		},

		artifactsInfo: {
			visibility: "public",
			params: buildParams,
			async handler(ctx: Ctx<{ build_id: unknown }>): Promise<DownloadInfo> {
				const build = await this.readableBuild(ctx);
				const size = build.artifacts ? await this.store.artifactSize(build.project_id, build.id, build.artifacts.file) : null;
				if (size === null) throw notFound();
				return {
					size,
					version: build.artifacts!.file,
					contentType: "application/octet-stream",
					headers: { "Content-Disposition": attachmentDisposition(build.artifacts!.filename), "Content-Transfer-Encoding": "binary" },
				};
			},
		},

		artifactsRange: {
			visibility: "public",
			params: rangeParams,
			async handler(ctx: Ctx<{ build_id: unknown } & RangeParams>) {
				const build = await this.readableBuild(ctx);
				if (build.artifacts?.file !== ctx.params.version) throw notFound();
				const opened = await this.store.openArtifact(build.project_id, build.id, build.artifacts.file, checkRange(ctx.params, build.artifacts.size));
				if (!opened) throw notFound();
				return opened.stream;
			},
		},

		/** Developer+. Pending or running → canceled; a finished build is returned unchanged. 201. */
		cancel: {
			params: buildParams,
			async handler(ctx: Ctx<{ build_id: unknown }>) {
				const access = this.requireLevel(ctx, AccessLevel.DEVELOPER);
				const read = await this.projectBuild(access, ctx.params.build_id);
				const build = await untilSet(
					read,
					() => this.projectBuild(access, read.id),
					async b => {
						const patch = cancelPatch(b, now());
						return patch ? ((await this.applyStatePatch(b, patch)) ?? "changed") : b;
					},
				);
				this.created201(ctx, build);
				return (await this.present(ctx, [build]))[0];
			},
		},

		/** Developer+. A finished build gives a new pending one (the old one is kept); 201 with the new one. */
		retry: {
			params: buildParams,
			async handler(ctx: Ctx<{ build_id: unknown }>) {
				const access = this.requireLevel(ctx, AccessLevel.DEVELOPER);
				const old = await this.projectBuild(access, ctx.params.build_id);
				assertRetryable(old);
				const fresh = await this.insertBuild({
					project_id: old.project_id,
					name: old.name,
					stage: old.stage,
					ref: old.ref,
					tag: old.tag,
					commit: old.commit,
					user_id: ctx.meta.user!.id,
					...retriedBuildState(now()),
					retried_from: old.id,
				});
				this.created201(ctx, fresh);
				return (await this.present(ctx, [fresh]))[0];
			},
		},

		/** Developer+. A finished build with artifacts or a trace loses both; 201 with the erased-build record. */
		erase: {
			params: buildParams,
			async handler(ctx: Ctx<{ build_id: unknown }>) {
				const access = this.requireLevel(ctx, AccessLevel.DEVELOPER);
				const read = await this.projectBuild(access, ctx.params.build_id);
				// The build as it was when erased: its files are removed below.
				const build = await untilSet(
					read,
					() => this.projectBuild(access, read.id),
					async b => {
						const hasTrace = !b.erased_at && (await this.store.traceSize(b.project_id, b.id)) > 0;
						assertErasable(b, { artifacts: !!b.artifacts, trace: hasTrace });
						const matched = await this.db.builds.update(
							{ id: b.id, status: b.status, erased_at: null, ...sameArtifacts(b) },
							{ erased_at: now(), erased_by: ctx.meta.user!.id, artifacts: null },
						);
						return matched ? b : "changed";
					},
				);
				// The record says erased first, so a failure below leaves files nobody serves, never the reverse.
				if (build.artifacts) await this.store.removeArtifact(build.project_id, build.id, build.artifacts.file);
				await this.store.removeTrace(build.project_id, build.id);
				await this.store.pruneBuildDir(build.project_id, build.id);
				await this.cleanProjectCache(build.project_id);
				const erased = await this.projectBuild(access, build.id);
				this.created201(ctx, erased);
				const users = await this.users(ctx, [erased]);
				return presentErasedBuild(erased, users.get(erased.user_id ?? -1) ?? null, config.gitlabUrl);
			},
		},

		// ── cached reads behind the permission checks above (local calls only) ──

		cachedBuild: {
			visibility: "protected",
			params: { build_id: "string" },
			cache: { keys: [PROJECT_CACHE_KEY, "build_id"], ttl: CACHE_TTL },
			async handler(ctx: Ctx<{ build_id: string }>) {
				const build: BuildDoc | null = await this.db.builds.findOne({ id: Number(ctx.params.build_id), project_id: this.access(ctx).project.id });
				return build ? (await this.present(ctx, [build]))[0] : null;
			},
		},

		cachedCommitBuilds: {
			visibility: "protected",
			params: { sha: "string", scope: SCOPE_PARAM, ...PAGE_PARAMS },
			cache: { keys: [PROJECT_CACHE_KEY, "sha", "scope", "page", "per_page"], ttl: CACHE_TTL },
			async handler(ctx: Ctx<{ sha: string; scope?: unknown; page?: unknown; per_page?: unknown }>) {
				const projectId = this.access(ctx).project.id;
				const scope = parseScope(ctx.params.scope);
				const page = parsePage(ctx.params);
				const sha = /^[0-9a-f]+$/i.test(ctx.params.sha) ? ctx.params.sha.toLowerCase() : ctx.params.sha;
				const query: Doc = { project_sha: shaKey(projectId, sha) };
				if (scope) query.status = { $in: scope };
				const { rows, total } = await this.filteredPage(query, page);
				return paginated(await this.present(ctx, rows), total, page);
			},
		},

		// ── the internal build API (Gitlab-Shared-Secret, no user) ──

		/** `POST /internal/builds`: a new pending build. 201. */
		create: {
			async handler(ctx: Ctx<Record<string, unknown>>) {
				const input = parseNewBuild(ctx.params);
				const project = await ctx.call<{ id: number } | null, { id: number }>("accounts.projectById", { id: input.project_id });
				if (!project) throw notFound("Project");
				if (input.user_id !== null) {
					const found: UserDoc[] = await ctx.call("accounts.usersByIds", { ids: [input.user_id] });
					if (!found.length) throw notFound("User");
				}
				const build = await this.insertBuild({ ...input, status: "pending", coverage: null, created_at: now(), started_at: null, finished_at: null });
				this.created201(ctx, build);
				return (await this.present(ctx, [build]))[0];
			},
		},

		/**
		 * The internal API in bulk, for `npm run seed` over the broker (no HTTP route): up to
		 * BATCH_MAX builds of one project, each the body of `POST /internal/builds` plus the
		 * state to leave it in (`status`, reached through the same transitions a runner and a
		 * user would make), an optional `coverage` and `trace`. Answers the new ids in order.
		 */
		createBatch: {
			visibility: "public",
			params: { project_id: { type: "any" }, builds: { type: "array", min: 1, max: BATCH_MAX, items: "object" } },
			async handler(ctx: Ctx<{ project_id: unknown; builds: Record<string, unknown>[] }>) {
				const at = now();
				const items = ctx.params.builds.map(item => {
					const input = parseNewBuild({ ...item, project_id: ctx.params.project_id });
					const status = item.status ?? "pending";
					if (!isBuildStatus(status)) throw invalidValue("status");
					const coverage = item.coverage === undefined ? undefined : parseCoverage(item.coverage);
					if (item.trace !== undefined && typeof item.trace !== "string") throw paramError("trace is invalid");
					let state: BuildStateView & { coverage: number | null } = { status: "pending", started_at: null, finished_at: null, coverage: null };
					if (status === "canceled") state = { ...state, ...cancelPatch(state, at) };
					else if (status !== "pending") {
						state = { ...state, ...runnerTransition(state, "running", at) };
						if (status !== "running") state = { ...state, ...runnerTransition(state, status, at, coverage) };
					}
					return { input, state, trace: item.trace as string | undefined };
				});
				const projectId = items[0].input.project_id;
				if (!(await ctx.call("accounts.projectById", { id: projectId }))) throw notFound("Project");
				const userIds = [...new Set(items.map(i => i.input.user_id).filter((id): id is number => id !== null))];
				if (userIds.length) {
					const found: UserDoc[] = await ctx.call("accounts.usersByIds", { ids: userIds });
					if (found.length !== userIds.length) throw notFound("User");
				}
				const builds: BuildDoc[] = await this.insertBuilds(
					projectId,
					items.map(({ input, state }) => ({ ...input, ...state, created_at: at })),
				);
				for (const [i, b] of builds.entries()) if (items[i].trace) await this.store.appendTrace(projectId, b.id, items[i].trace!);
				return { ids: builds.map(b => b.id) };
			},
		},

		/** `PUT /internal/builds/:build_id` `{status: running|success|failed, coverage?}`. 200. */
		updateState: {
			async handler(ctx: Ctx<{ build_id: unknown; status?: unknown; coverage?: unknown }>) {
				const buildId = parseId(ctx.params.build_id, "build_id");
				const { status, coverage } = parseRunnerUpdate(ctx.params);
				const build = await untilSet(
					await this.anyBuild(buildId),
					() => this.anyBuild(buildId),
					async b => {
						const patch = runnerTransition(b, status, now(), coverage);
						return Object.keys(patch).length ? ((await this.applyStatePatch(b, patch)) ?? "changed") : b;
					},
				);
				return (await this.present(ctx, [build]))[0];
			},
		},

		/** `PATCH /internal/builds/:build_id/trace` with a text/plain body: appended. 200 `{id, trace_size}`. */
		appendTrace: {
			async handler(ctx: Ctx<{ build_id: unknown; text?: unknown }>) {
				const buildId = parseId(ctx.params.build_id, "build_id");
				const { text } = ctx.params;
				if (text === undefined || text === null) throw paramError("trace is missing");
				if (typeof text !== "string") throw paramError("trace is invalid");
				const build = await this.anyBuild(buildId);
				if (build.erased_at) throw forbidden("Build has been erased");
				const size = text.length ? await this.store.appendTrace(build.project_id, build.id, text) : await this.store.traceSize(build.project_id, build.id);
				return { id: build.id, trace_size: size };
			},
		},

		/**
		 * `PUT /internal/builds/:build_id/artifacts?filename=NAME`, the raw bytes streamed in
		 * `ctx.stream` (never buffered). Replaces any previous artifacts only once the new file
		 * is complete. 200 with the build.
		 */
		uploadArtifacts: {
			async handler(ctx: Ctx<{ build_id: unknown; filename?: unknown }>) {
				const source = ctx.stream as Readable | null;
				if (!source) throw badRequest('400 (Bad request) "file" not given');
				let finished!: () => void;
				const upload = { source, done: new Promise<void>(resolve => (finished = resolve)) };
				this.uploadsInFlight.add(upload);
				/** The new file until the build record points at it. */
				let orphan: { projectId: number; buildId: number; file: string } | null = null;
				try {
					const buildId = parseId(ctx.params.build_id, "build_id");
					const filename = parseArtifactsFilename(ctx.params.filename);
					let build = await this.anyBuild(buildId);
					if (build.erased_at) throw forbidden("Build has been erased");
					const stored = await this.store.writeArtifact(build.project_id, build.id, source, { expectedBytes: ctx.meta.contentLength });
					orphan = { projectId: build.project_id, buildId: build.id, file: stored.file };
					const artifacts: ArtifactsDoc = { filename, size: stored.size, file: stored.file };
					build = await untilSet(
						build,
						() => this.anyBuild(buildId),
						async b => {
							if (b.erased_at) throw forbidden("Build has been erased");
							return (await this.db.builds.update({ id: b.id, erased_at: null, ...sameArtifacts(b) }, { artifacts })) ? b : "changed";
						},
					);
					orphan = null;
					if (build.artifacts) await this.store.removeArtifact(build.project_id, build.id, build.artifacts.file);
					await this.cleanProjectCache(build.project_id);
					return (await this.present(ctx, [{ ...build, artifacts }]))[0];
				} catch (err) {
					drain(source);
					if (orphan) await this.store.removeArtifact(orphan.projectId, orphan.buildId, orphan.file);
					if (err instanceof ArtifactTooLarge) throw tooLarge();
					if (err instanceof ArtifactIncomplete || err instanceof ArtifactInterrupted) throw badRequest(`400 (Bad request) ${err.message}`);
					throw err;
				} finally {
					this.uploadsInFlight.delete(upload);
					finished();
				}
			},
		},
	},

	methods: {
		/** The caller may read builds (reporter+, or public builds on a public/internal project), else 403. */
		requireReadBuilds(ctx: Ctx): ProjectAccess {
			const access: ProjectAccess = this.access(ctx);
			if (!canReadBuilds(access, !!ctx.meta.user)) throw forbidden();
			return access;
		},

		/** Permission first (403), then the build of this project (404), as GitLab orders them. */
		async readableBuild(ctx: Ctx<{ build_id: unknown }>): Promise<BuildDoc> {
			const access = this.requireReadBuilds(ctx);
			return this.projectBuild(access, ctx.params.build_id);
		},

		async projectBuild(access: ProjectAccess, rawId: unknown): Promise<BuildDoc> {
			const id = parseId(rawId, "build_id");
			const build: BuildDoc | null = await this.db.builds.findOne({ id, project_id: access.project.id });
			if (!build) throw notFound();
			return build;
		},

		/** The internal API addresses builds by id alone. */
		async anyBuild(id: number): Promise<BuildDoc> {
			const build: BuildDoc | null = await this.db.builds.findOne({ id });
			if (!build) throw notFound();
			return build;
		},

		/** Unfiltered page: one index range over the project's build numbers; the total is the counter. */
		async projectPage(projectId: number, page: PageRequest): Promise<{ rows: BuildDoc[]; total: number }> {
			const total = await (this.numbers as BuildNumbers<BuildDoc>).total(projectId);
			const range = seqRange(total, page.page, page.perPage);
			if (!range) return { rows: [], total };
			const rows: BuildDoc[] = await this.db.builds.find(
				{ project_seq: { $gte: seqKey(projectId, range.lo), $lte: seqKey(projectId, range.hi) } },
				{ sort: NEWEST_FIRST },
			);
			return { rows, total };
		},

		/** A filtered page through one of the filter indexes. */
		async filteredPage(query: Doc, page: PageRequest): Promise<{ rows: BuildDoc[]; total: number }> {
			const [rows, total] = await Promise.all([
				this.db.builds.find(query, { sort: NEWEST_FIRST, ...pageWindow(page) }) as Promise<BuildDoc[]>,
				this.db.builds.count(query) as Promise<number>,
			]);
			return { rows, total };
		},

		/**
		 * Stores new builds (their states already worked out) under the project's next numbers
		 * (lib/build-numbers.ts: a crash never leaves a gap). One project's creations take turns
		 * in this process, so that they never race each other for a number (only other replicas'
		 * can, and then cost a retry).
		 */
		async insertBuilds(projectId: number, fields: NewBuildFields[]): Promise<BuildDoc[]> {
			const locks: Map<number, Promise<unknown>> = this.allocationLocks;
			const previous = locks.get(projectId) ?? Promise.resolve();
			const mine = previous.then(() =>
				(this.numbers as BuildNumbers<BuildDoc>).insert(projectId, fields.length, (_id, _seq, i) => {
					const f = fields[i];
					return {
						...f,
						project_status: statusKey(f.project_id, f.status),
						project_sha: shaKey(f.project_id, f.commit.id),
						artifacts: null,
						erased_at: null,
						erased_by: null,
					};
				}),
			);
			const settled = mine.catch(() => {});
			locks.set(projectId, settled);
			settled.then(() => {
				if (locks.get(projectId) === settled) locks.delete(projectId);
			});
			let builds: BuildDoc[];
			try {
				builds = await mine;
			} catch (err) {
				if (err instanceof NumberingBusy) throw busy();
				throw err;
			}
			await this.cleanProjectCache(projectId);
			return builds;
		},

		async insertBuild(fields: NewBuildFields): Promise<BuildDoc> {
			return (await this.insertBuilds(fields.project_id, [fields]))[0];
		},

		/** Compare-and-set on the status that was read; the new build, or null when it had changed. */
		async applyStatePatch(build: BuildDoc, patch: StatePatch): Promise<BuildDoc | null> {
			const set: Doc = { ...patch };
			if (patch.status) set.project_status = statusKey(build.project_id, patch.status);
			const matched = await this.db.builds.update({ id: build.id, status: build.status }, set);
			if (!matched) return null;
			await this.cleanProjectCache(build.project_id);
			return { ...build, ...set } as BuildDoc;
		},

		/** 201 for POSTs, with a Location for the build (moleculer-web expects one with a 201). */
		created201(ctx: Ctx, build: BuildDoc) {
			ctx.meta.$statusCode = 201;
			ctx.meta.$location = `${config.gitlabUrl}/api/v3/projects/${build.project_id}/builds/${build.id}`;
		},

		/** The builds' users, fetched from accounts in one call. */
		async users(ctx: Ctx, builds: BuildDoc[]): Promise<Map<number, UserDoc>> {
			const ids = [...new Set(builds.map(b => b.user_id).filter((id): id is number => typeof id === "number"))];
			const users: UserDoc[] = ids.length ? await ctx.call("accounts.usersByIds", { ids }) : [];
			return new Map(users.map(u => [u.id, u]));
		},

		async present(ctx: Ctx, builds: BuildDoc[]) {
			const byId = await this.users(ctx, builds);
			return builds.map(b => presentBuild(b, b.user_id === null ? null : (byId.get(b.user_id) ?? null), config.gitlabUrl));
		},
	},
};

export default BuildsService;
