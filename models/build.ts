/**
 * Builds as stored, with one-field keys that every back end indexes alike: pages of a project are
 * ranges of `project_seq`, the filters go through `project_status` and `project_sha` (each with
 * `seq`, so a page walks its index in order). The per-project counters of
 * lib/builds/build-numbers.ts live beside them.
 */

export const BUILD_STATUSES = ["pending", "running", "failed", "success", "canceled"] as const;
export type BuildStatus = (typeof BUILD_STATUSES)[number];

export interface CommitDoc {
	id: string;
	short_id: string;
	title: string;
	message: string;
	author_name: string;
	author_email: string;
	/** The committer when the CI side names one; absent (older records too) means the author. */
	committer_name?: string;
	committer_email?: string;
	/** As the CI side sent it; shown with a numeric UTC offset. */
	created_at: string;
}

export interface ArtifactsDoc {
	/** The name the upload gave, shown and sent back in Content-Disposition. */
	filename: string;
	size: number;
	/** The stored file's name under the build's directory (a new one per upload). */
	file: string;
}

export interface BuildDoc {
	id: number;
	project_id: number;
	/** Position in its project, 1-based and dense: pages are ranges of it. */
	seq: number;
	/** seqKey(project_id, seq): unique; a page of the project is a range of it. */
	project_seq: string;
	/** statusKey(project_id, status) and shaKey(project_id, commit id): the filters' indexes. */
	project_status: string;
	project_sha: string;
	name: string;
	stage: string;
	ref: string;
	tag: boolean;
	status: BuildStatus;
	coverage: number | null;
	created_at: string;
	started_at: string | null;
	finished_at: string | null;
	commit: CommitDoc;
	user_id: number | null;
	artifacts: ArtifactsDoc | null;
	erased_at: string | null;
	erased_by: number | null;
	/** The build this one retried, when it is a retry. */
	retried_from?: number | null;
	/** Its pipeline (models/pipeline.ts: one per project, commit and ref); absent on builds not yet given one. */
	pipeline_id?: number;
	/**
	 * pipelineStatusKey(pipeline_id, status), or (pipeline_id, "retried") once a retry replaced it:
	 * the index a pipeline's status and its jobs are read through.
	 */
	pipeline_status?: string;
	/** A retry replaced it: it no longer counts in its pipeline's status (GitLab's `retried`). */
	retried?: boolean;
	/**
	 * Set (a token of the write) by the write that changed what the build counts for in its
	 * pipeline, removed once the pipeline's status has been worked out again after it: a build that
	 * still has one owes its pipeline a refresh (docs/architecture.md#pipeline-status).
	 */
	pipeline_refresh_due?: string;
}

/** A project's counter: the highest number known to be stored (the builds at 1…seq exist). */
export interface BuildCounterDoc {
	/** The project's id. */
	id: number;
	seq: number;
}

/** Digits of a zero-padded number in `project_seq`, so that string order is number order. */
export const SEQ_DIGITS = 10;
export const seqKey = (projectId: number, seq: number) => `${projectId}|${String(seq).padStart(SEQ_DIGITS, "0")}`;
export const statusKey = (projectId: number, status: string) => `${projectId}|${status}`;
/** A build's place among its pipeline's builds: its status, or RETRIED_KEY once retried. */
export const pipelineStatusKey = (pipelineId: number, status: string) => `${pipelineId}|${status}`;
export const RETRIED_KEY = "retried";
export const shaKey = (projectId: number, sha: string) => `${projectId}|${sha}`;

/** `counted`: a scope's X-Total is one look-up (lib/store/types.ts). */
export const buildsCollection = {
	indexes: [
		{ fields: { project_seq: 1 }, unique: true },
		{ fields: { project_status: 1, seq: -1 }, counted: true },
		{ fields: { project_sha: 1, seq: -1 } },
		{ fields: { pipeline_status: 1, seq: -1 } },
		{ fields: { pipeline_refresh_due: 1 } },
	],
} as const;

export const buildCountersCollection = {} as const;

/** Data migrations the builds service has run to their end (`id`: the migration's number). */
export interface BuildMigrationDoc {
	id: number;
	done_at: string;
}

export const buildMigrationsCollection = {} as const;
