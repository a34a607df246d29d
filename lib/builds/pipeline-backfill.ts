/**
 * Builds stored before pipelines were kept get theirs (docs/api.md#v4-pipelines), once per data
 * directory: every project's builds are walked in pages of their numbers, each build without a
 * pipeline is given its commit and ref's, a build a retry replaced is marked so, and every
 * pipeline touched has its status worked out. A migration record says it is done; a run cut short
 * (a stop, a crash) is run again at the next start and skips what it did.
 */
import { pipelineStatusKey, RETRIED_KEY, seqKey, type BuildCounterDoc, type BuildDoc, type BuildMigrationDoc } from "../../models/build";
import type { Collection } from "../store/collection";
import type { PipelineStore } from "./pipeline-store";

/** The migration's number in `build_migrations`. */
export const PIPELINES_MIGRATION = 1;
const PAGE = 1000;

export interface BackfillStores {
	builds: Collection<BuildDoc>;
	counters: Collection<BuildCounterDoc>;
	migrations: Collection<BuildMigrationDoc>;
	pipelines: PipelineStore;
	/** True once the service is stopping: the run ends after the page under way, and goes on at the next start. */
	stopping: () => boolean;
}

/** Resolves with the builds given a pipeline (0 when it had run before). */
export async function backfillPipelines(s: BackfillStores): Promise<number> {
	if (await s.migrations.findOne({ id: PIPELINES_MIGRATION })) return 0;
	let given = 0;
	for (let after = 0; ;) {
		const projects = await s.counters.find({ id: { $gt: after } }, { sort: ["id"], limit: PAGE });
		if (!projects.length) break;
		after = projects[projects.length - 1].id;
		for (const p of projects) {
			if (s.stopping()) return given;
			given += await backfillProject(s, p);
		}
	}
	await s.migrations.insert({ id: PIPELINES_MIGRATION, done_at: new Date().toISOString() }).catch(() => undefined);
	return given;
}

async function backfillProject(s: BackfillStores, counter: BuildCounterDoc): Promise<number> {
	const touched = new Set<number>();
	const retried = new Set<number>();
	let given = 0;
	for (let lo = 1; lo <= counter.seq && !s.stopping(); lo += PAGE) {
		const range = { $gte: seqKey(counter.id, lo), $lte: seqKey(counter.id, lo + PAGE - 1) };
		for (const b of await s.builds.find({ project_seq: range }, { sort: ["seq"] })) {
			if (b.retried_from) retried.add(b.retried_from);
			if (b.pipeline_id !== undefined) continue;
			const pipeline = await s.pipelines.ensure({
				project_id: b.project_id,
				sha: b.commit.id,
				ref: b.ref,
				tag: b.tag,
				user_id: b.user_id,
				created_at: b.created_at,
			});
			await s.builds.update({ id: b.id }, { pipeline_id: pipeline.id, pipeline_status: pipelineStatusKey(pipeline.id, b.status) });
			touched.add(pipeline.id);
			given++;
		}
	}
	for (const id of retried) {
		const old = await s.builds.findOne({ id });
		if (old?.pipeline_id === undefined || old.retried) continue;
		await s.builds.update({ id }, { retried: true, pipeline_status: pipelineStatusKey(old.pipeline_id, RETRIED_KEY) });
		touched.add(old.pipeline_id);
	}
	for (const id of touched) await s.pipelines.refresh(id);
	return given;
}
