/**
 * API v4 without a token (docs/api.md#v4-anonymous), on one in-process broker with the all-in-one's
 * in-memory cache (so the fast path of cached reads answers too): public projects listed and shown,
 * and what they let anyone read (labels, public snippets, jobs, pipelines, traces and artifacts where
 * builds are public); `404 Project Not Found` for every other project where v3 asks to sign in (401);
 * 401 for whatever needs a token; anonymous answers counted per address and never a member's view.
 */
import { config } from "../../../config";
import { storedZip } from "../../../scripts/zip";
import AccountsService from "../../../services/accounts.service";
import ApiService from "../../../services/api.service";
import BuildsService from "../../../services/builds.service";
import IntegrationsService from "../../../services/integrations.service";
import DeployKeysService from "../../../services/deploy-keys.service";
import LabelsService from "../../../services/labels.service";
import SnippetsService from "../../../services/snippets.service";
import { internalApi, SHA_A } from "../../support/builds";
import { startLocal, type LocalStack } from "../../support/broker";
import { createUser, type TestUser } from "../../support/fixtures";
import type { Client } from "../../support/http";

let stack: LocalStack;
let owner: TestUser;
let v4: Client;
let anonymous: Client;
/** Projects by visibility: `open` public with public jobs, `closedJobs` public without, and an internal and a private one. */
const projects: Record<"open" | "closedJobs" | "internal" | "secret", { id: number; path_with_namespace: string }> = {} as never;
let job: number;
let pipeline: number;
let publicSnippet: number;
let privateSnippet: number;

const NOT_FOUND = { message: "404 Project Not Found" };

beforeAll(async () => {
	stack = await startLocal([ApiService, AccountsService, LabelsService, SnippetsService, BuildsService, DeployKeysService, IntegrationsService], {
		cacher: { type: "MemoryLRU", options: { max: 1000 } },
	});
	owner = await createUser(stack.api());
	v4 = stack.v4(owner.token);
	anonymous = stack.v4(null);
	const make = async (name: string, visibility: string, publicJobs = true) => {
		const res = await v4.post("/projects", { body: { name, visibility, public_jobs: publicJobs } });
		expect(res.status).toBe(201);
		return res.body as { id: number; path_with_namespace: string };
	};
	projects.open = await make("anon-open", "public");
	projects.closedJobs = await make("anon-closed-jobs", "public", false);
	projects.internal = await make("anon-internal", "internal");
	projects.secret = await make("anon-secret", "private");
	for (const p of Object.values(projects)) {
		expect((await v4.post(`/projects/${p.id}/labels`, { body: { name: "needs review", color: "#fff" } })).status).toBe(201);
		expect((await v4.post(`/projects/${p.id}/labels`, { body: { name: "bug", color: "#d9534f", description: "review it" } })).status).toBe(201);
	}
	const snippet = async (visibility: string) =>
		(
			await v4.post(`/projects/${projects.open.id}/snippets`, {
				body: { title: visibility, visibility, file_name: "a.txt", content: `${visibility} text` },
			})
		).body.id;
	publicSnippet = await snippet("public");
	privateSnippet = await snippet("private");
	const ci = internalApi(stack.url, config.internalApiSecret);
	for (const p of [projects.open, projects.closedJobs, projects.secret]) {
		const id = await ci.build({ project_id: p.id, name: "build", sha: SHA_A });
		await ci.drive(id, "success");
		if (p === projects.open) job = id;
	}
	expect((await ci.trace(job, "the log\n")).status).toBe(200);
	expect((await ci.upload(job, storedZip([{ name: "out.txt", data: Buffer.from("built") }]), "out.zip")).status).toBe(200);
	pipeline = (await v4.get(`/projects/${projects.open.id}/jobs/${job}`)).body.pipeline.id;
});

afterAll(() => stack?.stop());

it("lists the public projects only, as BasicProjectDetails, counted against the caller's address", async () => {
	const list = await anonymous.get("/projects", { query: { per_page: 100 } });
	expect(list.status).toBe(200);
	expect(list.body.map((p: { id: number }) => p.id).sort()).toEqual([projects.open.id, projects.closedJobs.id].sort());
	const open = list.body.find((p: { id: number }) => p.id === projects.open.id);
	expect(open).toMatchObject({ id: projects.open.id, path_with_namespace: projects.open.path_with_namespace, default_branch: "master" });
	for (const field of ["permissions", "_links", "visibility", "owner"]) expect(open).not.toHaveProperty(field);
	expect(list.headers.get("x-total")).toBe("2");
	// An anonymous caller is nobody's member and owns nothing.
	for (const narrow of ["membership", "owned"]) {
		const none = await anonymous.get("/projects", { query: { [narrow]: "true" } });
		expect([narrow, none.status, none.body, none.headers.get("x-total")]).toEqual([narrow, 200, [], "0"]);
	}
	const first = Number(list.headers.get("x-rate-limit-remaining"));
	const second = await anonymous.get("/projects");
	expect(second.headers.get("x-rate-limit-limit")).toBe(String(config.rateLimitPerMinute));
	expect(Number(second.headers.get("x-rate-limit-remaining"))).toBeLessThan(first);
	// A token has a budget of its own, which anonymous requests leave alone.
	const before = Number((await v4.get("/projects")).headers.get("x-rate-limit-remaining"));
	await anonymous.get("/projects");
	expect(Number((await v4.get("/projects")).headers.get("x-rate-limit-remaining"))).toBe(before - 1);
});

it("shows a public project without permissions, and answers 404 Project Not Found for any other, where v3 asks to sign in", async () => {
	const shown = await anonymous.get(`/projects/${projects.open.id}`);
	expect(shown.status).toBe(200);
	expect(shown.body).toMatchObject({ id: projects.open.id, visibility: "public", public_jobs: true, _links: expect.any(Object) });
	expect(shown.body).not.toHaveProperty("permissions");
	expect((await anonymous.get(`/projects/${encodeURIComponent(projects.open.path_with_namespace)}`)).body.id).toBe(projects.open.id);
	for (const ref of [projects.internal.id, projects.secret.id, 999999, encodeURIComponent(projects.secret.path_with_namespace), "x".repeat(300)]) {
		const v4Answer = await anonymous.get(`/projects/${ref}`);
		expect([ref, v4Answer.status, v4Answer.body]).toEqual([ref, 404, NOT_FOUND]);
		const labels = await anonymous.get(`/projects/${ref}/labels`);
		expect([ref, labels.status, labels.body]).toEqual([ref, 404, NOT_FOUND]);
		const v3Answer = await stack.api(null).get(`/projects/${ref}/snippets`);
		expect([ref, v3Answer.status, v3Answer.body]).toEqual([ref, 401, { message: "401 Unauthorized" }]);
	}
	// A signed-in caller who may not read it is answered alike.
	const stranger = await createUser(stack.api());
	expect((await stack.v4(stranger.token).get(`/projects/${projects.secret.id}`)).body).toEqual(NOT_FOUND);
});

it("reads a public project's labels, searched, and nothing that needs a token", async () => {
	const base = `/projects/${projects.open.id}/labels`;
	const found = await anonymous.get(base, { query: { search: "review", with_counts: "true" } });
	expect(found.status).toBe(200);
	expect(found.body.map((l: { name: string; subscribed: boolean }) => [l.name, l.subscribed])).toEqual([
		["bug", false],
		["needs review", false],
	]);
	expect(found.body[0]).toMatchObject({ open_issues_count: 0, closed_issues_count: 0, open_merge_requests_count: 0 });
	expect((await anonymous.get(`${base}/bug`)).body).toMatchObject({ name: "bug", subscribed: false });
	for (const [method, path] of [
		["POST", base],
		["PUT", `${base}/bug`],
		["DELETE", `${base}/bug`],
		["POST", `${base}/bug/subscribe`],
		["GET", `/projects/${projects.open.id}/members`],
		["GET", `/projects/${projects.open.id}/deploy_keys`],
		["GET", `/projects/${projects.open.id}/integrations`],
		["GET", "/user"],
	]) {
		const res = await anonymous.request(method, path, method === "GET" ? {} : { body: { new_name: "x", name: "x", color: "#000" } });
		expect([method, path, res.status, res.body]).toEqual([method, path, 401, { message: "401 Unauthorized" }]);
	}
	// v3's list asks for a token, as GitLab 8.16's did.
	expect((await stack.api(null).get(base)).status).toBe(401);
});

it("reads a public project's public snippets only: another is 404 Snippet Not Found, where v3 answers 401", async () => {
	const base = `/projects/${projects.open.id}/snippets`;
	const list = await anonymous.get(base);
	expect([list.status, list.body.map((s: { id: number }) => s.id), list.headers.get("x-total")]).toEqual([200, [publicSnippet], "1"]);
	expect((await anonymous.get(`${base}/${publicSnippet}/raw`)).text).toBe("public text");
	for (const path of [`${base}/${privateSnippet}`, `${base}/${privateSnippet}/raw`, `${base}/${privateSnippet}/files/main/a.txt/raw`, `${base}/999`]) {
		const res = await anonymous.get(path);
		expect([path, res.status, res.body]).toEqual([path, 404, { message: "404 Snippet Not Found" }]);
	}
	expect((await stack.api(null).get(`${base}/${privateSnippet}`)).status).toBe(401);
	expect((await anonymous.post(base, { body: { title: "t", visibility: "public", content: "x", file_name: "x" } })).status).toBe(401);
});

it("reads jobs, their log and artifacts, and pipelines where builds are public; 403 where they are not", async () => {
	const base = `/projects/${projects.open.id}`;
	const jobs = await anonymous.get(`${base}/jobs`);
	expect([jobs.status, jobs.body.map((j: { id: number }) => j.id)]).toEqual([200, [job]]);
	expect((await anonymous.get(`${base}/jobs/${job}`)).body).toMatchObject({ id: job, status: "success" });
	const trace = await anonymous.get(`${base}/jobs/${job}/trace`);
	expect([trace.status, trace.text]).toEqual([200, "the log\n"]);
	const archive = await anonymous.get(`${base}/jobs/${job}/artifacts`);
	expect([archive.status, archive.headers.get("content-disposition")]).toEqual([200, "attachment; filename=out.zip"]);
	const byRef = await anonymous.get(`${base}/jobs/artifacts/master/raw/out.txt`, { query: { job: "build" } });
	expect([byRef.status, byRef.text]).toEqual([200, "built"]);
	expect((await anonymous.get(`${base}/pipelines`)).body.map((p: { id: number }) => p.id)).toEqual([pipeline]);
	expect((await anonymous.get(`${base}/pipelines/${pipeline}`)).body).toMatchObject({ id: pipeline, status: "success" });
	expect((await anonymous.get(`${base}/pipelines/latest`)).body).toMatchObject({ id: pipeline, ref: "master" });
	expect((await anonymous.get(`${base}/pipelines/${pipeline}/jobs`)).body.map((j: { id: number }) => j.id)).toEqual([job]);
	for (const [method, path] of [
		["POST", `${base}/jobs/${job}/retry`],
		["POST", `${base}/jobs/${job}/artifacts/keep`],
		["DELETE", `${base}/jobs/${job}/artifacts`],
	]) {
		const res = await anonymous.request(method, path);
		expect([method, path, res.status]).toEqual([method, path, 401]);
	}

	const closed = `/projects/${projects.closedJobs.id}`;
	for (const path of [`${closed}/jobs`, `${closed}/pipelines`, `${closed}/pipelines/latest`, `${closed}/jobs/artifacts/master/download?job=build`]) {
		const res = await anonymous.get(path);
		expect([path, res.status, res.body]).toEqual([path, 403, { message: "403 Forbidden" }]);
	}
	const secret = `/projects/${projects.secret.id}`;
	for (const path of [`${secret}/jobs`, `${secret}/pipelines/latest`, `${secret}/jobs/1/trace`, `${secret}/jobs/1/artifacts`]) {
		const res = await anonymous.get(path);
		expect([path, res.status, res.body]).toEqual([path, 404, NOT_FOUND]);
	}
	// v3's builds ask for a token.
	expect((await stack.api(null).get(`${base}/builds`)).status).toBe(401);
});

it("never answers an anonymous caller with a member's cached view, nor a member with an anonymous one", async () => {
	const labels = `/projects/${projects.open.id}/labels`;
	expect((await v4.post(`${labels}/bug/subscribe`)).status).toBe(201);
	for (let round = 0; round < 2; round++) {
		expect((await v4.get(labels)).body.find((l: { name: string }) => l.name === "bug").subscribed).toBe(true);
		expect((await anonymous.get(labels)).body.find((l: { name: string }) => l.name === "bug").subscribed).toBe(false);
	}
	const snippets = `/projects/${projects.open.id}/snippets`;
	for (let round = 0; round < 2; round++) {
		expect((await anonymous.get(snippets)).body.map((s: { id: number }) => s.id)).toEqual([publicSnippet]);
		expect((await v4.get(snippets)).body.map((s: { id: number }) => s.id)).toEqual([privateSnippet, publicSnippet]);
		expect((await anonymous.get(`${snippets}/${privateSnippet}`)).status).toBe(404);
		expect((await v4.get(`${snippets}/${privateSnippet}`)).status).toBe(200);
	}
});
