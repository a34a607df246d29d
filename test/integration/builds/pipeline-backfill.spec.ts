/**
 * Builds stored before pipelines were kept get theirs (lib/builds/pipeline-backfill.ts): made
 * here through the internal API, then stripped of their pipelines as an earlier version stored
 * them, then given them back once, a retried build marked so, every status worked out.
 */
import type { Service } from "moleculer";
import { config } from "../../../config";
import { backfillPipelines, PIPELINES_MIGRATION } from "../../../lib/builds/pipeline-backfill";
import type { BuildStore } from "../../../lib/builds/build-store";
import AccountsService from "../../../services/accounts.service";
import ApiService from "../../../services/api.service";
import BuildsService from "../../../services/builds.service";
import type { BuildsVars } from "../../../services/modules/builds/shared";
import { internalApi, SHA_A, SHA_B } from "../../support/builds";
import { startLocal, type LocalStack } from "../../support/broker";
import { createProject, createUser } from "../../support/fixtures";

let stack: LocalStack;

beforeAll(async () => {
	stack = await startLocal([ApiService, AccountsService, BuildsService]);
});

afterAll(() => stack?.stop());

it("gives every older build its pipeline once, and marks the builds a retry replaced", async () => {
	const ci = internalApi(stack.url, config.internalApiSecret);
	const owner = await createUser(stack.api());
	const projectId = (await createProject(stack.api(owner.token))).id;
	const failed = await ci.build({ project_id: projectId, sha: SHA_A });
	await ci.drive(failed, "failed");
	const retry = (await stack.api(owner.token).post(`/projects/${projectId}/builds/${failed}/retry`)).body.id;
	await ci.drive(retry, "success");
	const other = await ci.build({ project_id: projectId, sha: SHA_B, ref: "feature" });

	const builds = stack.broker.getLocalService("builds") as Service & BuildsVars & { builds: BuildStore; cleanProjectCache(id: number): Promise<void> };
	await (builds as unknown as { pipelinesBackfilled: Promise<unknown> }).pipelinesBackfilled;
	const { db } = builds;
	// As an earlier version left them.
	await db.builds.update({ project_id: projectId }, {}, ["pipeline_id", "pipeline_status", "retried"]);
	await db.pipelines.remove({ project_id: projectId });
	await db.build_migrations.remove({ id: PIPELINES_MIGRATION });
	expect((await stack.v4(owner.token).get(`/projects/${projectId}/pipelines`)).body).toEqual([]);

	const stores = {
		builds: db.builds,
		counters: db.build_counters,
		migrations: db.build_migrations,
		pipelines: builds.builds.pipelines,
		stopping: () => false,
	};
	expect(await backfillPipelines(stores)).toBeGreaterThanOrEqual(3);
	await builds.cleanProjectCache(projectId);
	const pipelines = await stack.v4(owner.token).get(`/projects/${projectId}/pipelines`);
	expect(pipelines.body.map((p: { ref: string; status: string }) => `${p.ref}:${p.status}`)).toEqual(["feature:pending", "master:success"]);
	const master = pipelines.body[1].id;
	const jobs = (query = {}) =>
		stack
			.v4(owner.token)
			.get(`/projects/${projectId}/pipelines/${master}/jobs`, { query })
			.then(r => r.body.map((j: { id: number }) => j.id));
	expect(await jobs()).toEqual([retry]);
	expect(await jobs({ include_retried: "true" })).toEqual([retry, failed]);
	expect((await stack.v4(owner.token).get(`/projects/${projectId}/jobs/${other}`)).body.pipeline.ref).toBe("feature");
	// Once: the migration is recorded.
	expect(await backfillPipelines(stores)).toBe(0);
});
