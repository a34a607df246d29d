/**
 * A build's write and its pipeline's status refresh are two writes (docs/architecture.md#pipeline-status):
 * the build's write marks it as owing the refresh, the refresh takes the mark off, and a mark
 * left by a process that stopped between the two is settled at the builds service's next start
 * (and by its periodic sweep): the pipeline's status follows its builds again.
 */
import type { Service } from "moleculer";
import { config } from "../../../config";
import type { BuildStore } from "../../../lib/builds/build-store";
import { pipelineStatusKey, RETRIED_KEY, statusKey } from "../../../models/build";
import AccountsService from "../../../services/accounts.service";
import ApiService from "../../../services/api.service";
import BuildsService from "../../../services/builds.service";
import type { BuildsVars } from "../../../services/modules/builds/shared";
import { internalApi, SHA_A } from "../../support/builds";
import { startLocal, type LocalStack } from "../../support/broker";
import { createProject, createUser } from "../../support/fixtures";

type RunningBuilds = Service & BuildsVars & { builds: BuildStore; pipelinesSettled: Promise<unknown>; cleanProjectCache(id: number): Promise<void> };

let stack: LocalStack;

beforeAll(async () => {
	stack = await startLocal([ApiService, AccountsService, BuildsService]);
});

afterAll(() => stack?.stop());

const buildsService = () => stack.broker.getLocalService("builds") as RunningBuilds;
const marked = () => buildsService().db.builds.count({ pipeline_refresh_due: { $gt: "" } });

async function projectWithBuild(): Promise<{ token: string; projectId: number; buildId: number; ci: ReturnType<typeof internalApi> }> {
	const ci = internalApi(stack.url, config.internalApiSecret);
	const owner = await createUser(stack.api());
	const projectId = (await createProject(stack.api(owner.token))).id;
	const buildId = await ci.build({ project_id: projectId, sha: SHA_A });
	return { token: owner.token, projectId, buildId, ci };
}

async function pipelineStatuses(token: string, projectId: number): Promise<string[]> {
	const res = await stack.v4(token).get(`/projects/${projectId}/pipelines`);
	expect(res.status).toBe(200);
	return res.body.map((p: { status: string }) => p.status);
}

it("takes each write's mark off once its pipeline is refreshed: a new build, a change of state, a retry", async () => {
	const { token, projectId, buildId, ci } = await projectWithBuild();
	expect(await marked()).toBe(0);
	expect(await pipelineStatuses(token, projectId)).toEqual(["pending"]);
	await ci.drive(buildId, "failed");
	expect(await marked()).toBe(0);
	expect(await pipelineStatuses(token, projectId)).toEqual(["failed"]);
	const retry = await stack.api(token).post(`/projects/${projectId}/builds/${buildId}/retry`);
	expect(retry.status).toBe(201);
	expect(retry.body).not.toHaveProperty("pipeline_refresh_due");
	expect(await marked()).toBe(0);
	expect(await pipelineStatuses(token, projectId)).toEqual(["pending"]);
	const build = await stack.api(token).get(`/projects/${projectId}/builds/${retry.body.id}`);
	expect(build.body).not.toHaveProperty("pipeline_refresh_due");
});

it("settles at the next start a change whose refresh never ran, and in a sweep a retry whose refresh never ran", async () => {
	const { token, projectId, buildId, ci } = await projectWithBuild();
	await ci.drive(buildId, "success");
	expect(await pipelineStatuses(token, projectId)).toEqual(["success"]);
	const service = buildsService();
	const [stored] = await service.db.builds.find({ id: buildId });
	const pipelineId = stored.pipeline_id as number;

	// As a process that stopped right after the build's write leaves it: the build failed and
	// marked, its pipeline still "success".
	await service.db.builds.update(
		{ id: buildId },
		{
			status: "failed",
			project_status: statusKey(projectId, "failed"),
			pipeline_status: pipelineStatusKey(pipelineId, "failed"),
			pipeline_refresh_due: "stopped-write",
		},
	);
	await service.cleanProjectCache(projectId);
	expect(await pipelineStatuses(token, projectId)).toEqual(["success"]);

	await stack.broker.destroyService(service);
	const restarted: RunningBuilds = stack.broker.createService(BuildsService);
	await stack.broker.waitForServices("builds");
	await restarted.pipelinesSettled;
	expect(await marked()).toBe(0);
	expect(await pipelineStatuses(token, projectId)).toEqual(["failed"]);

	// The periodic sweep's work, on a retry whose refresh never ran: the failed build replaced,
	// the new one pending, the pipeline still "failed".
	await restarted.db.builds.update(
		{ id: buildId },
		{ retried: true, pipeline_status: pipelineStatusKey(pipelineId, RETRIED_KEY), pipeline_refresh_due: "stopped-retry" },
	);
	const retried = await restarted.db.builds.insert({
		...stored,
		id: undefined,
		seq: stored.seq + 1000,
		project_seq: `${stored.project_seq}-retry`,
		status: "pending",
		project_status: statusKey(projectId, "pending"),
		pipeline_status: pipelineStatusKey(pipelineId, "pending"),
		pipeline_refresh_due: "stopped-retry",
	});
	expect(await pipelineStatuses(token, projectId)).toEqual(["failed"]);
	expect(await restarted.builds.settleDue()).toEqual({ builds: 2, projects: [projectId] });
	await restarted.cleanProjectCache(projectId);
	expect(await pipelineStatuses(token, projectId)).toEqual(["pending"]);
	expect(await restarted.db.builds.count({ id: retried.id, pipeline_refresh_due: { $gt: "" } })).toBe(0);
	expect(await restarted.builds.settleDue()).toEqual({ builds: 0, projects: [] });
});
