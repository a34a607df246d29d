/**
 * API v4's jobs (services/modules/builds/jobs.v4.ts) on one in-process broker, over the builds the
 * internal API makes: the Job entity with its pipeline, `scope[]`, offset and keyset pages (the
 * Link to the next page, 405 for an order GitLab does not offer), read_build, and the controls.
 */
import { config } from "../../../config";
import AccountsService from "../../../services/accounts.service";
import ApiService from "../../../services/api.service";
import BuildsService from "../../../services/builds.service";
import { internalApi, SHA_A, SHA_B, type InternalApi } from "../../support/builds";
import { startLocal, type LocalStack } from "../../support/broker";
import { addMember, createProject, createUser, type TestUser } from "../../support/fixtures";
import type { Client } from "../../support/http";

let stack: LocalStack;
let ci: InternalApi;
let owner: TestUser;
let guest: TestUser;
let project: { id: number; path_with_namespace: string };
let v4: Client;
const jobs = () => `/projects/${project.id}/jobs`;
const ids = (body: { id: number }[]) => body.map(j => j.id);

/** ids[0] is the oldest. */
let made: number[] = [];

beforeAll(async () => {
	stack = await startLocal([ApiService, AccountsService, BuildsService]);
	ci = internalApi(stack.url, config.internalApiSecret);
	owner = await createUser(stack.api());
	guest = await createUser(stack.api());
	project = await createProject(stack.api(owner.token));
	await addMember(stack.api(owner.token), project.id, guest.id, 10);
	v4 = stack.v4(owner.token);
	made = [];
	for (let i = 0; i < 7; i++) made.push(await ci.build({ project_id: project.id, name: `job${i}`, sha: i < 4 ? SHA_A : SHA_B, user_id: owner.id }));
	await ci.drive(made[0], "success");
	await ci.drive(made[1], "failed");
	await ci.drive(made[5], "running");
});

afterAll(() => stack?.stop());

it("shows GitLab v4's Job entity, with its pipeline", async () => {
	const res = await v4.get(`${jobs()}/${made[1]}`);
	expect(res.status).toBe(200);
	const web = `${config.gitlabUrl}/${project.path_with_namespace}`;
	expect(res.body).toEqual({
		id: made[1],
		status: "failed",
		stage: "test",
		name: "job1",
		ref: "master",
		tag: false,
		coverage: null,
		allow_failure: false,
		created_at: expect.any(String),
		started_at: expect.any(String),
		finished_at: expect.any(String),
		erased_at: null,
		duration: expect.any(Number),
		queued_duration: expect.any(Number),
		user: expect.objectContaining({ id: owner.id, username: owner.username, public_email: null }),
		commit: expect.objectContaining({ id: SHA_A, short_id: SHA_A.slice(0, 8), parent_ids: [], web_url: `${web}/-/commit/${SHA_A}` }),
		pipeline: {
			id: expect.any(Number),
			iid: 1,
			project_id: project.id,
			sha: SHA_A,
			ref: "master",
			status: "running",
			source: "push",
			created_at: expect.any(String),
			updated_at: expect.any(String),
			web_url: expect.stringMatching(new RegExp(`^${web}/-/pipelines/\\d+$`)),
		},
		failure_reason: "unknown_failure",
		web_url: `${web}/-/jobs/${made[1]}`,
		project: { ci_job_token_scope_enabled: false },
		artifacts: [],
		runner: null,
		runner_manager: null,
		artifacts_expire_at: null,
		archived: false,
		tag_list: [],
	});
	const bad = await v4.get(`${jobs()}/abc`);
	expect([bad.status, bad.body]).toEqual([400, { error: "job_id is invalid" }]);
	expect((await v4.get(`${jobs()}/999999`)).status).toBe(404);
});

it("lists newest first in offset pages with the headers, filtered by scope[]", async () => {
	const page = await v4.get(jobs(), { query: { per_page: 3, page: 2 } });
	expect(ids(page.body)).toEqual([made[3], made[2], made[1]]);
	expect([page.headers.get("x-total"), page.headers.get("x-total-pages"), page.headers.get("x-next-page")]).toEqual(["7", "3", "3"]);
	const scoped = await v4.get(jobs(), { query: { "scope[]": ["running", "failed"] } });
	expect(ids(scoped.body)).toEqual([made[5], made[1]]);
	// GitLab's states that builds never have here match nothing.
	const manual = await v4.get(jobs(), { query: { scope: "manual" } });
	expect([manual.status, manual.body, manual.headers.get("x-total")]).toEqual([200, [], "0"]);
	const bad = await v4.get(jobs(), { query: { "scope[]": ["nope"] } });
	expect([bad.status, bad.body]).toEqual([400, { error: "scope does not have a valid value" }]);
});

it("walks keyset pages by the Link to the next one, which the last page has not", async () => {
	const seen: number[] = [];
	let url: string | null = `${stack.v4Url}${jobs()}?pagination=keyset&order_by=id&sort=desc&per_page=3`;
	for (let pages = 0; url && pages < 10; pages++) {
		const res = await fetch(url, { headers: { "PRIVATE-TOKEN": owner.token } });
		expect(res.status).toBe(200);
		seen.push(...ids((await res.json()) as { id: number }[]));
		expect(res.headers.get("x-total")).toBeNull();
		const link = res.headers.get("link");
		url = link ? /^<([^>]+)>; rel="next"$/.exec(link)![1] : null;
		if (url) expect(url).toContain("pagination=keyset");
	}
	expect(seen).toEqual([...made].reverse());
	const scoped = await v4.get(jobs(), { query: { pagination: "keyset", per_page: 1, scope: "pending" } });
	expect(ids(scoped.body)).toEqual([made[6]]);
	const next = /cursor=([^&>]+)/.exec(scoped.headers.get("link")!)![1];
	const second = await v4.get(jobs(), { query: { pagination: "keyset", per_page: 1, scope: "pending", cursor: decodeURIComponent(next) } });
	expect(ids(second.body)).toEqual([made[4]]);
	for (const [order_by, sort] of [
		["created_at", "desc"],
		["id", "asc"],
	]) {
		const res = await v4.get(jobs(), { query: { pagination: "keyset", order_by, sort } });
		expect([res.status, res.body]).toEqual([405, { message: "Keyset pagination is not yet available for this type of request" }]);
	}
	const badCursor = await v4.get(jobs(), { query: { pagination: "keyset", cursor: "not-a-cursor" } });
	expect([badCursor.status, badCursor.body]).toEqual([400, { error: "cursor is invalid" }]);
});

it("needs read_build: a guest of a private project gets 403", async () => {
	for (const path of [jobs(), `${jobs()}/${made[0]}`, `${jobs()}/${made[0]}/trace`]) {
		const res = await stack.v4(guest.token).get(path);
		expect([path, res.status, res.body]).toEqual([path, 403, { message: "403 Forbidden" }]);
	}
});

it("cancels (201), retries into the same pipeline (201, the old job leaves its status), erases (201), with v4's messages", async () => {
	const canceled = await v4.post(`${jobs()}/${made[6]}/cancel`);
	expect([canceled.status, canceled.body.status, canceled.headers.get("location")]).toEqual([
		201,
		"canceled",
		`${config.gitlabUrl}/api/v4/projects/${project.id}/jobs/${made[6]}`,
	]);
	const notYet = await v4.post(`${jobs()}/${made[5]}/retry`);
	expect([notYet.status, notYet.body]).toEqual([403, { message: "403 Forbidden  - Job is not retryable" }]);
	const pipelineOf = async (id: number) => (await v4.get(`${jobs()}/${id}`)).body.pipeline;
	const before = await pipelineOf(made[1]);
	await ci.drive(made[2], "success");
	await ci.drive(made[3], "success");
	// job1 failed: its pipeline (job0-3 on SHA_A) failed.
	expect((await pipelineOf(made[1])).status).toBe("failed");
	const retried = await v4.post(`${jobs()}/${made[1]}/retry`);
	expect([retried.status, retried.body.status, retried.body.name, retried.body.pipeline.id]).toEqual([201, "pending", "job1", before.id]);
	// The retry replaced the failure: the pipeline is pending on it, no longer failed.
	expect((await pipelineOf(made[1])).status).toBe("running");
	await ci.drive(retried.body.id, "success");
	expect((await pipelineOf(made[1])).status).toBe("success");
	const notErasable = await v4.post(`${jobs()}/${made[4]}/erase`);
	expect([notErasable.status, notErasable.body]).toEqual([403, { message: "403 Forbidden  - Job is not erasable!" }]);
	await ci.trace(made[0], "log\n");
	const erased = await v4.post(`${jobs()}/${made[0]}/erase`);
	expect([erased.status, erased.body.id, typeof erased.body.erased_at]).toEqual([201, made[0], "string"]);
	expect((await stack.v4(guest.token).post(`${jobs()}/${made[2]}/cancel`)).status).toBe(403);
});

it("streams the log as text/plain", async () => {
	await ci.trace(made[3], "$ make\nok\n");
	const res = await v4.get(`${jobs()}/${made[3]}/trace`);
	expect([res.status, res.text, res.headers.get("content-type")]).toEqual([200, "$ make\nok\n", "text/plain"]);
});
