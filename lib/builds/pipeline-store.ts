/**
 * Pipelines as stored (models/pipeline.ts), for the builds service: the pipeline of a commit and
 * ref, made with its first build (a unique index: racing builds share one), its status worked out
 * again from its builds' after each change of one (lib/builds/pipeline-status.ts: one index look-up
 * per status, so the cost does not grow with the pipeline), and its pages. No broker, no HTTP.
 */
import { BUILD_STATUSES, pipelineStatusKey, type BuildDoc, type BuildStatus } from "../../models/build";
import { pipelineKey, refKey, type PipelineCounterDoc, type PipelineDoc } from "../../models/pipeline";
import { pageWindow, type PageRequest } from "../api/pagination";
import { UniqueViolation, type Collection, type Doc } from "../store/collection";
import { isFinished } from "./build-state";
import { compositeStatus } from "./pipeline-status";

/** What a pipeline is made from: its first build. */
export type PipelineSeed = Pick<BuildDoc, "project_id" | "ref" | "tag" | "user_id" | "created_at"> & { sha: string };

export interface PipelinePage {
	rows: PipelineDoc[];
	total: number;
}

/** Filters of a pipelines list (GitLab's `status`, `ref`, `sha`, and `scope`'s states and tags), and its order. */
export interface PipelineFilters {
	statuses?: readonly BuildStatus[];
	ref?: string;
	sha?: string;
	tag?: boolean;
	order?: { field: "id" | "status" | "ref" | "updated_at" | "user_id"; direction: "asc" | "desc" };
}

/** A pipeline's new status with its times. */
function statusChange(pipeline: PipelineDoc, status: BuildStatus | null): Partial<PipelineDoc> {
	const at = new Date().toISOString();
	return {
		status,
		updated_at: at,
		started_at: pipeline.started_at ?? (status && status !== "pending" ? at : null),
		finished_at: isFinished(status) ? at : null,
	};
}

/** Rounds of a status refresh or a number claim before giving up on a record that keeps changing. */
const ROUNDS = 20;
const NEWEST_FIRST = ["-id"];

export class PipelineStore {
	constructor(
		private readonly pipelines: Collection<PipelineDoc>,
		private readonly counters: Collection<PipelineCounterDoc>,
		private readonly builds: Collection<BuildDoc>,
	) {}

	inProject(projectId: number, id: number): Promise<PipelineDoc | null> {
		return this.pipelines.findOne({ id, project_id: projectId });
	}

	byIds(ids: number[]): Promise<PipelineDoc[]> {
		return ids.length ? this.pipelines.find({ id: { $in: ids } }) : Promise.resolve([]);
	}

	/** The pipeline of the seed's commit and ref, made when there is none yet. */
	async ensure(seed: PipelineSeed): Promise<PipelineDoc> {
		return (await this.ensureMade(seed)).pipeline;
	}

	/** As `ensure`, saying whether this call made it (then no build of another writer is in it yet, but racing ones). */
	async ensureMade(seed: PipelineSeed): Promise<{ pipeline: PipelineDoc; made: boolean }> {
		const key = pipelineKey(seed.project_id, seed.sha, seed.ref);
		const found = await this.pipelines.findOne({ project_sha_ref: key });
		if (found) return { pipeline: found, made: false };
		const iid = await this.nextIid(seed.project_id);
		try {
			const pipeline = await this.pipelines.insert({
				project_id: seed.project_id,
				iid,
				sha: seed.sha,
				ref: seed.ref,
				tag: !!seed.tag,
				user_id: seed.user_id,
				status: null,
				created_at: seed.created_at,
				updated_at: seed.created_at,
				started_at: null,
				finished_at: null,
				project_sha_ref: key,
				project_ref: refKey(seed.project_id, seed.ref),
			});
			return { pipeline, made: true };
		} catch (err) {
			// Another build of the same commit and ref made it a moment ago (its number is a gap).
			if (!(err instanceof UniqueViolation)) throw err;
			const made = await this.pipelines.findOne({ project_sha_ref: key });
			if (!made) throw err;
			return { pipeline: made, made: false };
		}
	}

	/**
	 * Works the pipeline's status out from its builds again and stores it, with its times, when it
	 * changed (a compare-and-set on what was read, then read again until it holds: a refresh racing
	 * another build's change ends with the status both changes leave). The pipeline as it is now.
	 */
	async refresh(pipelineId: number): Promise<PipelineDoc | null> {
		for (let round = 0; round < ROUNDS; round++) {
			const pipeline = await this.pipelines.findOne({ id: pipelineId });
			if (!pipeline) return null;
			const status = await this.statusFromBuilds(pipelineId);
			if (status === pipeline.status) return pipeline;
			await this.pipelines.update({ id: pipelineId, status: pipeline.status, updated_at: pipeline.updated_at }, statusChange(pipeline, status));
		}
		return this.pipelines.findOne({ id: pipelineId });
	}

	/**
	 * The first status of a pipeline that a batch of builds has just made, from their statuses in
	 * hand instead of a look-up per status (a seed's batch makes a hundred pipelines); a full
	 * refresh when another writer has set a status meanwhile, since its builds count too.
	 */
	async settleNew(pipeline: PipelineDoc, statuses: readonly BuildStatus[]): Promise<void> {
		const status = compositeStatus(new Set(statuses));
		const first = { id: pipeline.id, status: null, updated_at: pipeline.updated_at };
		if (pipeline.status === null && status !== null && (await this.pipelines.update(first, statusChange(pipeline, status)))) return;
		await this.refresh(pipeline.id);
	}

	/** The project's pipelines that have builds, newest first, filtered. */
	async page(projectId: number, filters: PipelineFilters, page: PageRequest): Promise<PipelinePage> {
		const query: Doc = { project_id: projectId, status: { $in: filters.statuses ?? BUILD_STATUSES } };
		if (filters.ref !== undefined) query.ref = filters.ref;
		if (filters.sha !== undefined) query.sha = filters.sha;
		if (filters.tag !== undefined) query.tag = filters.tag;
		const dir = filters.order?.direction === "asc" ? "" : "-";
		const field = filters.order?.field ?? "id";
		const sort = field === "id" ? [`${dir}id`] : [`${dir}${field}`, `${dir}id`];
		const [rows, total] = await this.pipelines.findPage(query, pageWindow(page), { sort });
		return { rows, total };
	}

	/**
	 * The newest pipeline of a ref that has builds (GitLab's `Project#latest_pipeline`: the ref's head
	 * commit, here the one its newest pipeline ran for), or null.
	 */
	async latest(projectId: number, ref: string): Promise<PipelineDoc | null> {
		const [latest] = await this.pipelines.find({ project_ref: refKey(projectId, ref), status: { $in: BUILD_STATUSES } }, { sort: NEWEST_FIRST, limit: 1 });
		return latest ?? null;
	}

	/** The newest successful pipeline of a ref (GitLab's `latest_successful_for_ref`), or null. */
	async latestSuccessful(projectId: number, ref: string): Promise<PipelineDoc | null> {
		const [latest] = await this.pipelines.find({ project_ref: refKey(projectId, ref), status: "success" }, { sort: NEWEST_FIRST, limit: 1 });
		return latest ?? null;
	}

	/** Which statuses the pipeline's current builds have: one look-up on the `pipeline_status` index each. */
	private async statusFromBuilds(pipelineId: number): Promise<BuildStatus | null> {
		const present = await Promise.all(
			BUILD_STATUSES.map(async s => ((await this.builds.find({ pipeline_status: pipelineStatusKey(pipelineId, s) }, { limit: 1 })).length ? s : null)),
		);
		return compositeStatus(new Set(present.filter((s): s is BuildStatus => s !== null)));
	}

	/** The project's next pipeline number: its counter moved on by a compare-and-set. */
	private async nextIid(projectId: number): Promise<number> {
		for (let round = 0; round < ROUNDS; round++) {
			const counter = await this.counters.findOne({ id: projectId });
			if (!counter) {
				await this.counters.insert({ id: projectId, seq: 0 }).catch(err => {
					if (!(err instanceof UniqueViolation)) throw err;
				});
				continue;
			}
			if (await this.counters.update({ id: projectId, seq: counter.seq }, { seq: counter.seq + 1 })) return counter.seq + 1;
		}
		throw new Error(`project ${projectId}: pipeline numbers kept being taken by other writers`);
	}
}
