/**
 * Pipelines as stored (docs/api.md#v4-pipelines): one per project, commit and ref that builds ran
 * for (a unique index), made with its first build. Each has a number in its project (GitLab's
 * `iid`: increasing, with a gap where a process died between taking it and storing the pipeline),
 * and a status worked out from its builds' (lib/builds/pipeline-status.ts) after every change of
 * one of them.
 */
import type { BuildStatus } from "./build";

export interface PipelineDoc {
	id: number;
	project_id: number;
	/** Its number in the project (v4's `iid`), from 1. */
	iid: number;
	sha: string;
	ref: string;
	tag: boolean;
	/** The user of its first build. */
	user_id: number | null;
	/** Null until its first build is stored (a pipeline left by a crash before then is never shown). */
	status: BuildStatus | null;
	created_at: string;
	updated_at: string;
	started_at: string | null;
	finished_at: string | null;
	/** pipelineKey(project_id, sha, ref): unique, one pipeline per commit and ref. */
	project_sha_ref: string;
	/** refKey(project_id, ref): the pipelines of a ref, for its latest successful one. */
	project_ref: string;
}

export const pipelineKey = (projectId: number, sha: string, ref: string) => `${projectId}|${sha}|${ref}`;
export const refKey = (projectId: number, ref: string) => `${projectId}|${ref}`;

export const pipelinesCollection = {
	indexes: [{ fields: { project_sha_ref: 1 }, unique: true }, { fields: { project_ref: 1, status: 1, id: -1 } }, { fields: { project_id: 1, id: -1 } }],
} as const;

/** A project's last pipeline number. */
export interface PipelineCounterDoc {
	/** The project's id. */
	id: number;
	seq: number;
}

export const pipelineCountersCollection = {} as const;
