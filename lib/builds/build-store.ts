/**
 * Builds as stored (models/build.ts), for the builds service: reads by project, pages that cost
 * the same at 100 builds or 1,000,000, numbering that no crash can leave with a gap
 * (./build-numbers.ts), and every change a compare-and-set on the state that was read, so racing
 * updates never both win. No broker, no HTTP: unit-tested on its own.
 *
 * Pages: every build has a dense per-project number (`seq`, 1…total in creation and id order),
 * so page N of the unfiltered list is one range scan of the unique `project_seq` index and the
 * total is the counter. Scope and commit filters walk the `project_status` and `project_sha`
 * indexes in `seq` order; the embedded store counts a scope's builds per status as it writes them
 * (models/build.ts), so its X-Total is a look-up too.
 *
 * Every build belongs to the pipeline of its commit and ref (./pipeline-store.ts), whose status
 * follows its builds': a new build, a change of state and a retry refresh it. The build's write
 * marks it as owing that refresh until the refresh is done, so a process that stops between the
 * two leaves the mark for `settleDue` (docs/architecture.md#pipeline-status).
 */
import { randomUUID } from "node:crypto";
import {
	BUILD_STATUSES,
	pipelineStatusKey,
	RETRIED_KEY,
	seqKey,
	shaKey,
	statusKey,
	type ArtifactsDoc,
	type BuildCounterDoc,
	type BuildDoc,
	type BuildStatus,
} from "../../models/build";
import type { PipelineDoc } from "../../models/pipeline";
import { pageWindow, type PageRequest } from "../api/pagination";
import type { Collection, Doc } from "../store/collection";
import { seqRange } from "./build-input";
import { BuildNumbers, NumberingBusy } from "./build-numbers";
import type { StatePatch } from "./build-state";
import type { PipelineStore } from "./pipeline-store";

/** What a new build is made of; the store adds its numbers, its pipeline and index keys. */
export type NewBuild = Omit<
	BuildDoc,
	| "id"
	| "seq"
	| "project_seq"
	| "project_status"
	| "project_sha"
	| "artifacts"
	| "erased_at"
	| "erased_by"
	| "pipeline_id"
	| "pipeline_status"
	| "retried"
	| "pipeline_refresh_due"
>;

export interface BuildPage {
	rows: BuildDoc[];
	total: number;
}

/** A write that kept losing to others (numbers taken, states changed): the caller may try again. */
export class BuildBusy extends Error {
	constructor(reason: string) {
		super(reason);
		this.name = "BuildBusy";
	}
}

/** Newest first: `seq` follows the id within a project. */
const NEWEST_FIRST = ["-seq"];
/** Compare-and-set rounds before giving up on a build that keeps changing under us. */
const CAS_ATTEMPTS = 20;
/** Builds read at a time by `settleDue`, and its rounds at most in one call (the next sweep goes on). */
const DUE_BATCH = 500;
const DUE_ROUNDS = 20;
const REFRESH_DUE = "pipeline_refresh_due";

/**
 * A compare-and-set with re-reads: `attempt` acts on the build as read and answers "changed" when
 * its conditional write matched nothing; then the build is read again and the attempt repeated,
 * CAS_ATTEMPTS times at most. Resolves with what the successful attempt returned.
 */
export async function untilSet<T>(build: BuildDoc, reread: () => Promise<BuildDoc>, attempt: (b: BuildDoc) => Promise<T | "changed">): Promise<T> {
	for (let round = 0; ; round++) {
		const outcome = await attempt(build);
		if (outcome !== "changed") return outcome;
		if (round >= CAS_ATTEMPTS) throw new BuildBusy(`build ${build.id} kept changing`);
		build = await reread();
	}
}

/** The store query that matches the artifacts a build had when it was read. */
function sameArtifacts(b: BuildDoc): Doc {
	return b.artifacts ? { "artifacts.file": b.artifacts.file } : { artifacts: null };
}

export class BuildStore {
	private readonly numbers: BuildNumbers<BuildDoc>;
	/** One project's creations take turns in this process: they never race each other for a number. */
	private readonly projectTurns = new Map<number, Promise<unknown>>();

	constructor(
		private readonly builds: Collection<BuildDoc>,
		counters: Collection<BuildCounterDoc>,
		readonly pipelines: PipelineStore,
	) {
		this.numbers = new BuildNumbers(builds, counters);
	}

	/** Start-up: counters checked against the builds (./build-numbers.ts); resolves with the projects renumbered. */
	repair(log: (message: string) => void): Promise<number[]> {
		return this.numbers.repair(log);
	}

	inProject(projectId: number, id: number): Promise<BuildDoc | null> {
		return this.builds.findOne({ id, project_id: projectId });
	}

	/** The internal API addresses builds by id alone. */
	byId(id: number): Promise<BuildDoc | null> {
		return this.builds.findOne({ id });
	}

	/** Unfiltered page: one index range over the project's build numbers; the total is the counter. */
	async projectPage(projectId: number, page: PageRequest): Promise<BuildPage> {
		const total = await this.numbers.total(projectId);
		const range = seqRange(total, page.page, page.perPage);
		if (!range) return { rows: [], total };
		const rows = await this.builds.find({ project_seq: { $gte: seqKey(projectId, range.lo), $lte: seqKey(projectId, range.hi) } }, { sort: NEWEST_FIRST });
		return { rows, total };
	}

	/**
	 * A keyset page, newest first, of the builds numbered below `before` (null: from the newest).
	 * Unfiltered it is one exact range of `project_seq`, as an offset page is, whatever the page;
	 * filtered by state it goes through the `project_status` index (docs/performance.md#builds-list).
	 * `more`: whether builds remain after it.
	 */
	async keysetPage(
		projectId: number,
		statuses: readonly BuildStatus[] | null,
		before: number | null,
		perPage: number,
	): Promise<{ rows: BuildDoc[]; more: boolean }> {
		if (statuses) {
			const query: Doc = { project_status: { $in: statuses.map(s => statusKey(projectId, s)) } };
			if (before !== null) query.seq = { $lt: before };
			const rows = await this.builds.find(query, { sort: NEWEST_FIRST, limit: perPage + 1 });
			return { rows: rows.slice(0, perPage), more: rows.length > perPage };
		}
		const hi = (before ?? (await this.numbers.total(projectId)) + 1) - 1;
		const lo = Math.max(1, hi - perPage + 1);
		if (hi < 1) return { rows: [], more: false };
		const rows = await this.builds.find({ project_seq: { $gte: seqKey(projectId, lo), $lte: seqKey(projectId, hi) } }, { sort: NEWEST_FIRST });
		return { rows, more: lo > 1 };
	}

	/** The builds in some states, through the `project_status` index. */
	scopePage(projectId: number, statuses: readonly BuildStatus[], page: PageRequest): Promise<BuildPage> {
		return this.filteredPage({ project_status: { $in: statuses.map(s => statusKey(projectId, s)) } }, page);
	}

	/**
	 * The full id of the one commit of this project's builds whose id starts with `prefix`
	 * (lower-case hex): "none" when no build's commit does, "ambiguous" when several commits do.
	 * Two look-ups on the `project_sha` index, each a range scan that stops at its first match.
	 */
	async commitByPrefix(projectId: number, prefix: string): Promise<{ found: string } | "none" | "ambiguous"> {
		// Every commit id is lower-case hex, so the ids with this prefix sort between it and it + "g".
		const range = { $gte: shaKey(projectId, prefix), $lt: shaKey(projectId, `${prefix}g`) };
		const [first] = await this.builds.find({ project_sha: range }, { limit: 1 });
		if (!first) return "none";
		const [other] = await this.builds.find({ project_sha: { ...range, $ne: first.project_sha } }, { limit: 1 });
		return other ? "ambiguous" : { found: first.commit.id };
	}

	/** One commit's builds (in some states), through the `project_sha` index. */
	commitPage(projectId: number, sha: string, statuses: readonly BuildStatus[] | null, page: PageRequest): Promise<BuildPage> {
		const query: Doc = { project_sha: shaKey(projectId, sha) };
		if (statuses) query.status = { $in: statuses };
		return this.filteredPage(query, page);
	}

	private async filteredPage(query: Doc, page: PageRequest): Promise<BuildPage> {
		const [rows, total] = await this.builds.findPage(query, pageWindow(page), { sort: NEWEST_FIRST });
		return { rows, total };
	}

	/** Stores new builds of one project (their states already worked out) under its next numbers, in their pipelines. */
	async insert(projectId: number, fields: NewBuild[]): Promise<BuildDoc[]> {
		const previous = this.projectTurns.get(projectId) ?? Promise.resolve();
		const mine = previous.then(async () => {
			const { ids: pipelineIds, made } = await this.pipelinesOf(fields);
			const due = randomUUID();
			const stored = await this.numbers.insert(projectId, fields.length, i => {
				const f = fields[i];
				return {
					...f,
					project_status: statusKey(f.project_id, f.status),
					project_sha: shaKey(f.project_id, f.commit.id),
					pipeline_id: pipelineIds[i],
					pipeline_status: pipelineStatusKey(pipelineIds[i], f.status),
					pipeline_refresh_due: due,
					artifacts: null,
					erased_at: null,
					erased_by: null,
				};
			});
			// A pipeline this batch made takes its first status from the batch's builds (one write, no look-ups).
			for (const id of new Set(pipelineIds)) {
				const pipeline = made.get(id);
				if (pipeline)
					await this.pipelines.settleNew(
						pipeline,
						fields.filter((_, i) => pipelineIds[i] === id).map(f => f.status),
					);
				else await this.pipelines.refresh(id);
			}
			await this.refreshDone(
				stored.map(b => b.id),
				due,
			);
			return stored.map(withoutDue);
		});
		const settled = mine.catch(() => undefined);
		this.projectTurns.set(projectId, settled);
		void settled.then(() => {
			if (this.projectTurns.get(projectId) === settled) this.projectTurns.delete(projectId);
		});
		try {
			return await mine;
		} catch (err) {
			if (err instanceof NumberingBusy) throw new BuildBusy(err.message);
			throw err;
		}
	}

	/** A state change, if the build still has the status that was read; the build as it is now, or null. */
	async applyStatePatch(build: BuildDoc, patch: StatePatch): Promise<BuildDoc | null> {
		const set: Doc = { ...patch };
		if (patch.status) set.project_status = statusKey(build.project_id, patch.status);
		if (patch.status && build.pipeline_id !== undefined && !build.retried) set.pipeline_status = pipelineStatusKey(build.pipeline_id, patch.status);
		const due = patch.status && build.pipeline_id !== undefined ? randomUUID() : null;
		if (!(await this.builds.update({ id: build.id, status: build.status }, due ? { ...set, [REFRESH_DUE]: due } : set))) return null;
		if (due && build.pipeline_id !== undefined) {
			await this.pipelines.refresh(build.pipeline_id);
			await this.refreshDone([build.id], due);
		}
		return withoutDue({ ...build, ...set });
	}

	/** A retry replaced the build: it no longer counts in its pipeline (whose status is worked out again). */
	async markRetried(build: BuildDoc): Promise<void> {
		if (build.pipeline_id === undefined) return;
		const due = randomUUID();
		await this.builds.update({ id: build.id }, { retried: true, pipeline_status: pipelineStatusKey(build.pipeline_id, RETRIED_KEY), [REFRESH_DUE]: due });
		await this.pipelines.refresh(build.pipeline_id);
		await this.refreshDone([build.id], due);
	}

	/**
	 * Refreshes the pipelines of the builds still marked as owing it (their write's process stopped
	 * before the refresh, or the refresh failed) and takes the marks off: how many builds it
	 * settled, and their projects (whose cached pages may show the old status).
	 */
	async settleDue(): Promise<{ builds: number; projects: number[] }> {
		let builds = 0;
		const projects = new Set<number>();
		for (let round = 0; round < DUE_ROUNDS; round++) {
			const due = await this.builds.find({ [REFRESH_DUE]: { $gt: "" } }, { limit: DUE_BATCH });
			if (!due.length) break;
			for (const id of new Set(due.map(b => b.pipeline_id))) if (id !== undefined) await this.pipelines.refresh(id);
			// A mark another write set since it was read stays for that write (or the next sweep).
			for (const b of due) builds += await this.builds.update({ id: b.id, [REFRESH_DUE]: b.pipeline_refresh_due }, {}, [REFRESH_DUE]);
			for (const b of due) projects.add(b.project_id);
		}
		return { builds, projects: [...projects] };
	}

	/** A pipeline's builds (in some states; with the retried ones, or not), newest first, through the `pipeline_status` index. */
	pipelinePage(pipelineId: number, statuses: readonly BuildStatus[] | null, includeRetried: boolean, page: PageRequest): Promise<BuildPage> {
		const keys = [...(statuses ?? BUILD_STATUSES), ...(includeRetried ? [RETRIED_KEY] : [])].map(s => pipelineStatusKey(pipelineId, s));
		const query: Doc = { pipeline_status: { $in: keys } };
		// A retried build keeps its own status beside its retried key.
		if (includeRetried && statuses) query.status = { $in: statuses };
		return this.filteredPage(query, page);
	}

	/** The newest successful build of a pipeline with this name (v4's artifacts by ref), or null. */
	async latestSuccessful(pipelineId: number, name: string): Promise<BuildDoc | null> {
		const [build] = await this.builds.find({ pipeline_status: pipelineStatusKey(pipelineId, "success"), name }, { sort: NEWEST_FIRST, limit: 1 });
		return build ?? null;
	}

	/**
	 * Takes off the marks these builds' write set once their pipelines are refreshed (not a mark a
	 * later write set). A failure leaves them for `settleDue`: the write and the refresh are done.
	 */
	private async refreshDone(ids: number[], due: string): Promise<void> {
		await this.builds.update({ id: ids.length === 1 ? ids[0] : { $in: ids }, [REFRESH_DUE]: due }, {}, [REFRESH_DUE]).catch(() => 0);
	}

	/** Each build's pipeline id, and the pipelines made for them here. */
	private async pipelinesOf(fields: NewBuild[]): Promise<{ ids: number[]; made: Map<number, PipelineDoc> }> {
		const byKey = new Map<string, number>();
		const made = new Map<number, PipelineDoc>();
		const ids: number[] = [];
		for (const f of fields) {
			const key = `${f.commit.id}|${f.ref}`;
			let id = byKey.get(key);
			if (id === undefined) {
				const ensured = await this.pipelines.ensureMade({
					project_id: f.project_id,
					sha: f.commit.id,
					ref: f.ref,
					tag: f.tag,
					user_id: f.user_id,
					created_at: f.created_at,
				});
				id = ensured.pipeline.id;
				if (ensured.made) made.set(id, ensured.pipeline);
				byKey.set(key, id);
			}
			ids.push(id);
		}
		return { ids, made };
	}

	/** Marks the build erased (artifacts gone), if it is still as it was read. */
	async markErased(build: BuildDoc, at: string, by: number): Promise<boolean> {
		const query = { id: build.id, status: build.status, erased_at: null, ...sameArtifacts(build) };
		return (await this.builds.update(query, { erased_at: at, erased_by: by, artifacts: null })) > 0;
	}

	/** Drops the build's artifacts from its record, if it still has the ones that were read. */
	async dropArtifacts(build: BuildDoc): Promise<boolean> {
		return (await this.builds.update({ id: build.id, ...sameArtifacts(build) }, { artifacts: null })) > 0;
	}

	/** Points the build at new artifacts, if it is not erased and still has the artifacts that were read. */
	async setArtifacts(build: BuildDoc, artifacts: ArtifactsDoc): Promise<boolean> {
		return (await this.builds.update({ id: build.id, erased_at: null, ...sameArtifacts(build) }, { artifacts })) > 0;
	}
}

/** The build as callers see it: the refresh mark is the store's own. */
function withoutDue(build: BuildDoc): BuildDoc {
	if (!(REFRESH_DUE in build)) return build;
	const { pipeline_refresh_due: _due, ...rest } = build;
	return rest;
}
