/**
 * `npm run seed -- --via store`: builds written straight into the embedded store under DATA_DIR,
 * through the builds service's own BuildStore (the same numbering, states, pipelines and index keys), 500 at
 * a time. The service may be running on the same DATA_DIR: SQLite's locks order the writes
 * (docs/architecture.md#embedded-store); a project's lists it has cached before the seed stay as
 * they were until that cache drops them. Records only: no traces, no artifacts. What the
 * benchmarks use for their largest projects (a million builds in about a minute).
 */
import { ServiceBroker } from "moleculer";
import { parseNewBuild } from "../lib/builds/build-input";
import { stateReached } from "../lib/builds/build-state";
import { BuildStore } from "../lib/builds/build-store";
import { PipelineStore } from "../lib/builds/pipeline-store";
import { Collection } from "../lib/store/collection";
import { buildCountersCollection, buildsCollection, type BuildCounterDoc, type BuildDoc, type BuildStatus } from "../models/build";
import { pipelineCountersCollection, pipelinesCollection, type PipelineCounterDoc, type PipelineDoc } from "../models/pipeline";

/** What one build is, as the internal API takes it, and the state to leave it in. */
export interface PlannedBuild {
	body: Record<string, unknown>;
	status: BuildStatus;
	coverage?: number;
}

const BATCH = 500;

/** Stores `count` planned builds of a project; `record` hears of each one stored. */
export async function seedIntoStore(
	dataDir: string,
	projectId: number,
	count: number,
	plan: (i: number) => PlannedBuild,
	record: (status: string, id: number) => void,
): Promise<void> {
	const broker = new ServiceBroker({ logger: false });
	// The builds service's collections (services/builds.service.ts).
	const where = { dataDir, mongoUri: "" };
	const builds = new Collection<BuildDoc>("builds", buildsCollection, where);
	const counters = new Collection<BuildCounterDoc>("build_counters", buildCountersCollection, where);
	const pipelines = new Collection<PipelineDoc>("pipelines", pipelinesCollection, where);
	const pipelineCounters = new Collection<PipelineCounterDoc>("pipeline_counters", pipelineCountersCollection, where);
	const collections = [builds, counters, pipelines, pipelineCounters];
	for (const c of collections) await c.connect(broker);
	try {
		const store = new BuildStore(builds, counters, new PipelineStore(pipelines, pipelineCounters, builds));
		for (let from = 0; from < count; from += BATCH) {
			const at = new Date().toISOString();
			const plans = Array.from({ length: Math.min(BATCH, count - from) }, (_, k) => plan(from + k));
			const stored = await store.insert(
				projectId,
				plans.map(p => ({ ...parseNewBuild({ ...p.body, project_id: projectId }), ...stateReached(p.status, at, p.coverage), created_at: at })),
			);
			for (const [k, b] of stored.entries()) record(plans[k].status, b.id);
		}
	} finally {
		for (const c of collections) await c.disconnect();
	}
}
