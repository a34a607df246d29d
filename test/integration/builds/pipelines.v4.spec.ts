/**
 * API v4's pipelines (services/modules/builds/pipelines.v4.ts, lib/builds/pipeline-store.ts) on one
 * in-process broker: one pipeline per commit and ref the builds ran for, its status following its
 * builds', the lists' filters and order, a pipeline read by id, its jobs with and without retried ones.
 */
import { config } from "../../../config";
import AccountsService from "../../../services/accounts.service";
import ApiService from "../../../services/api.service";
import BuildsService from "../../../services/builds.service";
import { internalApi, SHA_A, SHA_B, type InternalApi } from "../../support/builds";
import { startLocal, type LocalStack } from "../../support/broker";
import { createProject, createUser, type TestUser } from "../../support/fixtures";
import type { Client } from "../../support/http";

let stack: LocalStack;
let ci: InternalApi;
let owner: TestUser;
let project: { id: number; path_with_namespace: string };
let v4: Client;
const pipelines = () => `/projects/${project.id}/pipelines`;
const pipelineOfJob = async (id: number) => (await v4.get(`/projects/${project.id}/jobs/${id}`)).body.pipeline;

beforeAll(async () => {
	stack = await startLocal([ApiService, AccountsService, BuildsService]);
	ci = internalApi(stack.url, config.internalApiSecret);
	owner = await createUser(stack.api());
	project = await createProject(stack.api(owner.token));
	v4 = stack.v4(owner.token);
});

afterAll(() => stack?.stop());

it("makes one pipeline per commit and ref, whose status follows its builds'", async () => {
	const a1 = await ci.build({ project_id: project.id, name: "a1", sha: SHA_A, user_id: owner.id });
	const a2 = await ci.build({ project_id: project.id, name: "a2", sha: SHA_A });
	const tag = await ci.build({ project_id: project.id, name: "t", sha: SHA_A, ref: "v1.0", tag: true });
	const p = await pipelineOfJob(a1);
	expect(await pipelineOfJob(a2)).toEqual(p);
	expect((await pipelineOfJob(tag)).id).not.toBe(p.id);
	expect(p.status).toBe("pending");
	await ci.drive(a1, "running");
	expect((await pipelineOfJob(a1)).status).toBe("running");
	await ci.drive(a1, "success");
	expect((await pipelineOfJob(a1)).status).toBe("running");
	await ci.drive(a2, "success");
	expect((await pipelineOfJob(a1)).status).toBe("success");

	const read = await v4.get(`${pipelines()}/${p.id}`);
	expect(read.status).toBe(200);
	expect(read.body).toMatchObject({
		id: p.id,
		iid: 1,
		project_id: project.id,
		sha: SHA_A,
		ref: "master",
		status: "success",
		source: "push",
		before_sha: "0".repeat(40),
		tag: false,
		yaml_errors: null,
		user: { id: owner.id, username: owner.username },
		started_at: expect.any(String),
		finished_at: expect.any(String),
		duration: expect.any(Number),
		coverage: null,
		detailed_status: { icon: "status_success", text: "passed", group: "success", details_path: `/${project.path_with_namespace}/-/pipelines/${p.id}` },
	});
	const failed = await ci.build({ project_id: project.id, name: "b", sha: SHA_B });
	await ci.drive(failed, "failed");
	const canceled = await ci.build({ project_id: project.id, name: "c", sha: SHA_B, ref: "feature" });
	await v4.post(`/projects/${project.id}/jobs/${canceled}/cancel`);
	expect((await pipelineOfJob(failed)).status).toBe("failed");
	expect((await pipelineOfJob(canceled)).status).toBe("canceled");
});

it("lists them newest first with the pagination headers, filtered by scope, status, ref and sha", async () => {
	const all = await v4.get(pipelines());
	expect(all.body.map((p: { ref: string; status: string }) => `${p.ref}:${p.status}`)).toEqual([
		"feature:canceled",
		"master:failed",
		"v1.0:pending",
		"master:success",
	]);
	expect(all.headers.get("x-total")).toBe("4");
	const refs = (query: Record<string, string>) =>
		v4.get(pipelines(), { query }).then(r => r.body.map((p: { ref: string; status: string }) => `${p.ref}:${p.status}`));
	expect(await refs({ scope: "finished" })).toEqual(["feature:canceled", "master:failed", "master:success"]);
	expect(await refs({ scope: "pending" })).toEqual(["v1.0:pending"]);
	expect(await refs({ scope: "tags" })).toEqual(["v1.0:pending"]);
	expect(await refs({ scope: "branches", status: "success" })).toEqual(["master:success"]);
	expect(await refs({ ref: "master" })).toEqual(["master:failed", "master:success"]);
	expect(await refs({ sha: SHA_B })).toEqual(["feature:canceled", "master:failed"]);
	expect(await refs({ status: "manual" })).toEqual([]);
	expect(await refs({ order_by: "id", sort: "asc", per_page: "2" })).toEqual(["master:success", "v1.0:pending"]);
	const bad = await v4.get(pipelines(), { query: { scope: "everything" } });
	expect([bad.status, bad.body]).toEqual([400, { error: "scope does not have a valid value" }]);
	for (const id of ["999999"]) expect((await v4.get(`${pipelines()}/${id}`)).body).toEqual({ message: "404 Not found" });
	expect((await v4.get(`${pipelines()}/x`)).body).toEqual({ error: "pipeline_id is invalid" });
});

it("answers a ref's latest pipeline, the default branch's (master) without one, as GET by id answers it", async () => {
	const latest = await v4.get(`${pipelines()}/latest`);
	expect(latest.status).toBe(200);
	expect(latest.body).toMatchObject({ ref: "master", sha: SHA_B, status: "failed", detailed_status: { group: "failed" } });
	expect(latest.body).toEqual((await v4.get(`${pipelines()}/${latest.body.id}`)).body);
	expect((await v4.get(`${pipelines()}/latest`, { query: { ref: "" } })).body.id).toBe(latest.body.id);
	expect((await v4.get(`${pipelines()}/latest`, { query: { ref: "feature" } })).body).toMatchObject({ ref: "feature", status: "canceled" });
	expect((await v4.get(`${pipelines()}/latest`, { query: { ref: "v1.0" } })).body).toMatchObject({ ref: "v1.0", tag: true });
	// A newer pipeline of the ref is the latest at once.
	const newer = await ci.build({ project_id: project.id, name: "again", sha: SHA_A, ref: "feature-2" });
	expect((await v4.get(`${pipelines()}/latest`, { query: { ref: "feature-2" } })).body.id).toBe((await pipelineOfJob(newer)).id);
	const none = await v4.get(`${pipelines()}/latest`, { query: { ref: "nowhere" } });
	expect([none.status, none.body]).toEqual([404, { message: "404 Not found" }]);
	const long = await v4.get(`${pipelines()}/latest`, { query: { ref: "r".repeat(1025) } });
	expect([long.status, long.body]).toEqual([400, { error: "ref is invalid" }]);
});

it("lists a pipeline's jobs, the retried ones only with include_retried", async () => {
	const first = await ci.build({ project_id: project.id, name: "flaky", sha: SHA_A, ref: "retry" });
	await ci.drive(first, "failed");
	const p = await pipelineOfJob(first);
	expect(p.status).toBe("failed");
	const retry = (await v4.post(`/projects/${project.id}/jobs/${first}/retry`)).body.id;
	await ci.drive(retry, "success");
	expect((await pipelineOfJob(first)).status).toBe("success");
	const jobsOf = (query: Record<string, string | string[]> = {}) =>
		v4.get(`${pipelines()}/${p.id}/jobs`, { query }).then(r => r.body.map((j: { id: number }) => j.id));
	expect(await jobsOf()).toEqual([retry]);
	expect(await jobsOf({ include_retried: "True" })).toEqual([retry, first]);
	expect(await jobsOf({ include_retried: "true", "scope[]": ["failed"] })).toEqual([first]);
	expect(await jobsOf({ scope: "failed" })).toEqual([]);
	expect((await v4.get(`${pipelines()}/999999/jobs`)).status).toBe(404);
});
