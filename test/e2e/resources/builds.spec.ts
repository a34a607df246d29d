/**
 * Builds end to end: the gateway, accounts and builds as three processes over the real NATS,
 * Redis as cacher; the CI side drives builds through the internal API, users through /api/v3.
 * The e2e-mongo and e2e-s3 projects run it again on MongoDB and on an S3 bucket (jest.config.js);
 * the artifact store is checked through `cluster.stored`.
 */
import fs from "fs";
import http from "http";
import path from "path";
import { seedBuilds } from "../../../scripts/seed";
import { runCommand } from "../../support/commands";
import { startCluster, type Cluster } from "../../support/cluster";
import { NATS_URL } from "../../support/servers";
import { client, waitFor, type Reply } from "../../support/http";
import { addMember, createProject, createUser, roleMatrix, type TestUser } from "../../support/fixtures";
import { internalApi, peakRss, resetPeakRss, SHA_A, SHA_B, sha256Of, streamDownload, streamUpload, type InternalApi } from "../../support/builds";

const MiB = 1024 * 1024;
/** The large artifact: far more than any process may grow by while it streams through. */
const LARGE = 256 * MiB;
const MAX_ARTIFACT = LARGE + 4 * MiB;
/** How much a process may grow while a large artifact goes through it. */
const FLAT = 160 * MiB;

let cluster: Cluster;
let ci: InternalApi;
const as = (token: string | null) => client(cluster.url, token ?? undefined);
/** Every answer the tests got, to check at the end that none was a 5xx. */
const seen: { what: string; status: number }[] = [];
function track<T extends { status: number }>(what: string, res: T): T {
	seen.push({ what, status: res.status });
	return res;
}

const ISO_Z = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

beforeAll(async () => {
	cluster = await startCluster({ nodes: { api: "api", accounts: "accounts", builds: "builds" }, env: { MAX_ARTIFACT_BYTES: String(MAX_ARTIFACT) } });
	ci = internalApi(cluster.url, cluster.internalSecret);
	await cluster.waitForRoute("GET", "/projects/1/builds");
	await waitFor(
		"the internal builds API",
		async () => (await ci.raw.put("/internal/builds/999999", { headers: ci.headers, body: { status: "running" } })).status === 404,
	);
}, 120000);

afterAll(async () => {
	await cluster?.stop();
});

afterAll(() => {
	expect(seen.filter(s => s.status >= 500)).toEqual([]);
});

function pid(node: string): number {
	return cluster.nodes.get(node)!.child.pid!;
}

/** What the store holds of a build (its artifacts files, its trace). */
const buildFiles = (projectId: number, buildId: number) => cluster.stored.buildFiles(projectId, buildId);

describe("the internal API creates builds and moves them through their states", () => {
	let owner: TestUser;
	let projectId: number;

	beforeAll(async () => {
		owner = await createUser(cluster.api());
		projectId = (await createProject(as(owner.token))).id;
	});

	it("creates a pending build: 201 with the Build entity of docs/api.md#build-entity", async () => {
		const res = track("create", await ci.create({ project_id: projectId, name: "rubocop", stage: "test", ref: "master", user_id: owner.id }));
		expect(res.status).toBe(201);
		expect(res.body).toEqual({
			id: expect.any(Number),
			name: "rubocop",
			stage: "test",
			ref: "master",
			tag: false,
			status: "pending",
			coverage: null,
			created_at: expect.stringMatching(ISO_Z),
			started_at: null,
			finished_at: null,
			runner: null,
			commit: {
				id: SHA_A,
				short_id: SHA_A.slice(0, 8),
				title: "Test the CI integration.",
				message: "Test the CI integration.\n\nWith a body.",
				author_name: "Dmitriy Zaporozhets",
				author_email: "dmitriy.zaporozhets@gmail.com",
				created_at: "2015-12-24T16:51:14.000+01:00",
				// No committer sent: the author committed.
				committer_name: "Dmitriy Zaporozhets",
				committer_email: "dmitriy.zaporozhets@gmail.com",
			},
			user: {
				id: owner.id,
				username: owner.username,
				name: `User ${owner.username}`,
				state: "active",
				is_admin: false,
				avatar_url: expect.stringMatching(/^https:\/\/www\.gravatar\.com\/avatar\/[0-9a-f]{32}\?s=80&d=identicon$/),
				web_url: `http://localhost/${owner.username}`,
				website_url: "",
				created_at: expect.stringMatching(ISO_Z),
				bio: null,
				location: null,
				linkedin: "",
				skype: "",
				twitter: "",
				organization: null,
			},
			artifacts_file: null,
		});
		const got = await as(owner.token).get(`/projects/${projectId}/builds/${res.body.id}`);
		expect(got.status).toBe(200);
		expect(got.body).toEqual(res.body);
	});

	it("shows the committer the CI side names, apart from the author", async () => {
		const committer = { committer_name: "Release Bot", committer_email: "release-bot@example.com" };
		const body = {
			project_id: projectId,
			name: "deploy",
			ref: "master",
			commit: { id: SHA_B, message: "Deploy", author_name: "Ada", author_email: "ada@example.com", created_at: "2016-01-11T10:13:33Z", ...committer },
		};
		const res = track("create with committer", await ci.raw.post("/internal/builds", { headers: ci.headers, body }));
		expect(res.status).toBe(201);
		expect(res.body.commit).toMatchObject({ author_name: "Ada", author_email: "ada@example.com", ...committer });
		const got = await as(owner.token).get(`/projects/${projectId}/builds/${res.body.id}`);
		expect(got.body.commit).toEqual(res.body.commit);
		const bad = track(
			"bad committer",
			await ci.raw.post("/internal/builds", { headers: ci.headers, body: { ...body, commit: { ...body.commit, committer_email: "nobody" } } }),
		);
		expect([bad.status, bad.body]).toEqual([400, { error: "commit[committer_email] is invalid" }]);
	});

	it("running sets started_at; success sets finished_at and coverage; re-sending a status changes nothing", async () => {
		const id = await ci.build({ project_id: projectId });
		const running = track("running", await ci.state(id, "running"));
		expect(running.status).toBe(200);
		expect(running.body).toMatchObject({ id, status: "running", started_at: expect.stringMatching(ISO_Z), finished_at: null, user: null });
		const again = track("running again", await ci.state(id, "running"));
		expect(again.status).toBe(200);
		expect(again.body.started_at).toBe(running.body.started_at);
		const done = track("success", await ci.state(id, "success", 87.5));
		expect(done.status).toBe(200);
		expect(done.body).toMatchObject({ status: "success", coverage: 87.5, started_at: running.body.started_at, finished_at: expect.stringMatching(ISO_Z) });
		// Reads see every change at once (each one cleans the project's cached reads).
		const got = await as(owner.token).get(`/projects/${projectId}/builds/${id}`);
		expect(got.body).toMatchObject({ status: "success", coverage: 87.5, finished_at: done.body.finished_at });
	});

	it("a pending build may fail without running (started_at stays null)", async () => {
		const id = await ci.build({ project_id: projectId });
		const res = track("drop", await ci.state(id, "failed"));
		expect(res.status).toBe(200);
		expect(res.body).toMatchObject({ status: "failed", started_at: null, finished_at: expect.stringMatching(ISO_Z) });
	});

	it.each([
		["success", "running"],
		["failed", "success"],
	] as const)("refuses %s → %s with a 400 naming both, and changes nothing", async (from, to) => {
		const id = await ci.build({ project_id: projectId });
		await ci.drive(id, from);
		const before = (await as(owner.token).get(`/projects/${projectId}/builds/${id}`)).body;
		const res = track("illegal", await ci.state(id, to));
		expect(res.status).toBe(400);
		expect(res.body).toEqual({ message: `Cannot transition build status from ${from} to ${to}` });
		expect((await as(owner.token).get(`/projects/${projectId}/builds/${id}`)).body).toEqual(before);
	});

	it("refuses a canceled build's runner updates", async () => {
		const id = await ci.build({ project_id: projectId });
		expect((await as(owner.token).post(`/projects/${projectId}/builds/${id}/cancel`)).status).toBe(201);
		const res = track("after cancel", await ci.state(id, "running"));
		expect(res.status).toBe(400);
		expect(res.body).toEqual({ message: "Cannot transition build status from canceled to running" });
	});

	it.each([
		[{}, { error: "status is missing" }],
		[{ status: "canceled" }, { error: "status does not have a valid value" }],
		[{ status: "pending" }, { error: "status does not have a valid value" }],
		[{ status: { $ne: "x" } }, { error: "status does not have a valid value" }],
		[{ status: "success", coverage: "lots" }, { error: "coverage is invalid" }],
		[{ status: "success", coverage: 101 }, { error: "coverage is invalid" }],
	])("state update %j → 400 %j", async (body, error) => {
		const id = await ci.build({ project_id: projectId });
		const res = track("bad state", await ci.raw.put(`/internal/builds/${id}`, { headers: ci.headers, body }));
		expect(res.status).toBe(400);
		expect(res.body).toEqual(error);
		expect((await as(owner.token).get(`/projects/${projectId}/builds/${id}`)).body.status).toBe("pending");
	});

	it("appends to the trace (text/plain) and serves it back as text/plain", async () => {
		const id = await ci.build({ project_id: projectId });
		expect(track("trace", await ci.trace(id, "$ bundle exec rspec\n")).body).toEqual({ id, trace_size: 20 });
		const second = track("trace", await ci.trace(id, "Finished in 1.2s ✓\n"));
		expect(second.status).toBe(200);
		const res = await as(owner.token).get(`/projects/${projectId}/builds/${id}/trace`);
		expect(res.status).toBe(200);
		expect(res.headers.get("content-type")).toBe("text/plain");
		expect(res.headers.get("content-disposition")).toBe(`infile; filename="${id}.log"`);
		expect(res.text).toBe("$ bundle exec rspec\nFinished in 1.2s ✓\n");
		const empty = await as(owner.token).get(`/projects/${projectId}/builds/${await ci.build({ project_id: projectId })}/trace`);
		expect(empty.status).toBe(200);
		expect(empty.text).toBe("");
	});

	it.each([
		["a missing field", { name: "x" }, 400, { error: "project_id is missing" }],
		["an operator object", { project_id: { $gt: 0 }, name: "x" }, 400, { error: "project_id is invalid" }],
		[
			"a bad commit id",
			{
				project_id: 1,
				name: "x",
				ref: "m",
				commit: { id: "nothex", message: "m", author_name: "a", author_email: "a@b.c", created_at: "2016-01-01T00:00:00Z" },
			},
			400,
			{ error: "commit[id] is invalid" },
		],
		["no commit", { project_id: 1, name: "x", ref: "m" }, 400, { error: "commit is missing" }],
		[
			"a bad date",
			{ project_id: 1, name: "x", ref: "m", commit: { id: SHA_A, message: "m", author_name: "a", author_email: "a@b.c", created_at: "yesterday" } },
			400,
			{ error: "commit[created_at] is invalid" },
		],
		[
			"an unknown project",
			{
				project_id: 987654,
				name: "x",
				ref: "m",
				commit: { id: SHA_A, message: "m", author_name: "a", author_email: "a@b.c", created_at: "2016-01-01T00:00:00Z" },
			},
			404,
			{ message: "404 Project Not Found" },
		],
	])("refuses a new build with %s", async (_what, body, status, error) => {
		const res = track("bad create", await ci.raw.post("/internal/builds", { headers: ci.headers, body }));
		expect(res.status).toBe(status);
		expect(res.body).toEqual(error);
	});

	it("refuses an unknown user, and an unknown build on every internal endpoint", async () => {
		const unknownUser = track("bad user", await ci.create({ project_id: projectId, user_id: 987654 }));
		expect(unknownUser.status).toBe(404);
		expect(unknownUser.body).toEqual({ message: "404 User Not Found" });
		for (const res of [await ci.state(987654, "running"), await ci.trace(987654, "x"), await ci.upload(987654, Buffer.from("x"))]) {
			track("unknown build", res);
			expect(res.status).toBe(404);
			expect(res.body).toEqual({ message: "404 Not Found" });
		}
	});

	it("guards the internal API with the shared secret: 401 without it or with a wrong one", async () => {
		for (const headers of [{}, { "Gitlab-Shared-Secret": "wrong" }] as Record<string, string>[]) {
			const res = track("secret", await ci.raw.post("/internal/builds", { headers, body: { project_id: projectId } }));
			expect(res.status).toBe(401);
			expect(res.body).toEqual({ message: "401 Unauthorized" });
		}
		const upload = await fetch(`${cluster.url}/internal/builds/1/artifacts?filename=a.zip`, { method: "PUT", body: "x" });
		expect(upload.status).toBe(401);
	});

	it("answers malformed and oversized bodies with 400 and 413", async () => {
		const broken = track(
			"broken json",
			await ci.raw.post("/internal/builds", { headers: { ...ci.headers, "Content-Type": "application/json" }, body: "{not json" }),
		);
		expect(broken.status).toBe(400);
		const huge = track("huge", await ci.raw.post("/internal/builds", { headers: ci.headers, body: { project_id: projectId, name: "x".repeat(2 * MiB) } }));
		expect(huge.status).toBe(413);
		expect(huge.body).toEqual({ message: "413 Request Entity Too Large" });
		const id = await ci.build({ project_id: projectId });
		const bigTrace = track("huge trace", await ci.trace(id, "y".repeat(2 * MiB)));
		expect(bigTrace.status).toBe(413);
		const binaryTrace = track("binary trace", await ci.trace(id, "abc", "application/octet-stream"));
		expect(binaryTrace.status).toBe(400);
		expect(binaryTrace.body).toEqual({ error: "trace is missing" });
	});
});

describe("cancel, retry and erase", () => {
	let dev: ReturnType<typeof as>;
	let projectId: number;
	let developer: TestUser;

	beforeAll(async () => {
		const owner = await createUser(cluster.api());
		developer = await createUser(cluster.api());
		projectId = (await createProject(as(owner.token))).id;
		await addMember(as(owner.token), projectId, developer.id, 30);
		dev = as(developer.token);
	});

	it.each(["pending", "running"] as const)("cancels a %s build: 201, canceled, finished_at set", async from => {
		const id = await ci.build({ project_id: projectId });
		await ci.drive(id, from);
		const res = track("cancel", await dev.post(`/projects/${projectId}/builds/${id}/cancel`));
		expect(res.status).toBe(201);
		expect(res.body).toMatchObject({ id, status: "canceled", finished_at: expect.stringMatching(ISO_Z), artifacts_file: null });
		expect((await dev.get(`/projects/${projectId}/builds/${id}`)).body.status).toBe("canceled");
	});

	it.each(["success", "failed"] as const)("cancel of a %s build changes nothing and still answers 201", async from => {
		const id = await ci.build({ project_id: projectId });
		await ci.drive(id, from);
		const before = (await dev.get(`/projects/${projectId}/builds/${id}`)).body;
		const res = track("cancel finished", await dev.post(`/projects/${projectId}/builds/${id}/cancel`));
		expect(res.status).toBe(201);
		expect(res.body).toEqual(before);
	});

	it("retries a finished build into a new pending one and keeps the old one: the retry history", async () => {
		const id = await ci.build({ project_id: projectId, name: "spinach", stage: "deploy", ref: "v1.0", tag: true });
		await ci.drive(id, "failed");
		const first = track("retry", await dev.post(`/projects/${projectId}/builds/${id}/retry`));
		expect(first.status).toBe(201);
		expect(first.body).toMatchObject({
			name: "spinach",
			stage: "deploy",
			ref: "v1.0",
			tag: true,
			status: "pending",
			started_at: null,
			finished_at: null,
			coverage: null,
			artifacts_file: null,
		});
		expect(first.body.id).toBeGreaterThan(id);
		expect(first.body.user).toMatchObject({ id: developer.id, username: developer.username });
		expect(first.body.commit.id).toBe(SHA_A);
		await ci.drive(first.body.id, "failed");
		const second = track("retry again", await dev.post(`/projects/${projectId}/builds/${first.body.id}/retry`));
		expect(second.status).toBe(201);
		// The old builds are kept as they were; the list shows all three, newest first.
		expect((await dev.get(`/projects/${projectId}/builds/${id}`)).body.status).toBe("failed");
		const list = await dev.get(`/projects/${projectId}/builds`, { query: { per_page: 3 } });
		expect(list.body.map((b: { id: number; status: string }) => [b.id, b.status])).toEqual([
			[second.body.id, "pending"],
			[first.body.id, "failed"],
			[id, "failed"],
		]);
	});

	it.each(["pending", "running"] as const)("refuses to retry a %s build: 403 'Build is not retryable'", async from => {
		const id = await ci.build({ project_id: projectId });
		await ci.drive(id, from);
		const total = (await dev.get(`/projects/${projectId}/builds`)).headers.get("x-total");
		const res = track("retry unfinished", await dev.post(`/projects/${projectId}/builds/${id}/retry`));
		expect(res.status).toBe(403);
		expect(res.body).toEqual({ message: "403 Forbidden  - Build is not retryable" });
		expect((await dev.get(`/projects/${projectId}/builds`)).headers.get("x-total")).toBe(total);
	});

	it("erases a finished build: 201 with the erased record, files deleted, artifacts and trace gone", async () => {
		const id = await ci.build({ project_id: projectId });
		await ci.drive(id, "running");
		await ci.trace(id, "some output\n");
		expect((await ci.upload(id, Buffer.from([0x50, 0x4b, 3, 4, 0xff, 0]))).status).toBe(200);
		await ci.state(id, "failed");
		expect(await buildFiles(projectId, id)).toHaveLength(2);
		const res = track("erase", await dev.post(`/projects/${projectId}/builds/${id}/erase`));
		expect(res.status).toBe(201);
		expect(res.body).toEqual({
			id,
			name: "rspec",
			stage: "test",
			ref: "master",
			tag: false,
			status: "failed",
			coverage: null,
			created_at: expect.stringMatching(ISO_Z),
			started_at: expect.stringMatching(ISO_Z),
			finished_at: expect.stringMatching(ISO_Z),
			runner: null,
			commit: expect.objectContaining({ id: SHA_A }),
			user: null,
			download_url: null,
		});
		expect(res.body).not.toHaveProperty("artifacts_file");
		expect(await cluster.stored.buildGone(projectId, id)).toBe(true);
		expect((await dev.get(`/projects/${projectId}/builds/${id}`)).body.artifacts_file).toBeNull();
		const artifacts = await dev.get(`/projects/${projectId}/builds/${id}/artifacts`);
		expect(artifacts.status).toBe(404);
		expect((await dev.get(`/projects/${projectId}/builds/${id}/trace`)).text).toBe("");
		// Nothing is left to erase, and an erased build takes no more trace or artifacts.
		const again = track("erase again", await dev.post(`/projects/${projectId}/builds/${id}/erase`));
		expect(again.status).toBe(403);
		expect(again.body).toEqual({ message: "403 Forbidden  - Build is not erasable!" });
		expect(track("trace erased", await ci.trace(id, "late\n")).status).toBe(403);
		expect(track("upload erased", await ci.upload(id, Buffer.from("late"))).status).toBe(403);
	});

	it("refuses to erase an unfinished build (even with a trace) and a finished one with nothing to erase", async () => {
		const running = await ci.build({ project_id: projectId });
		await ci.drive(running, "running");
		await ci.trace(running, "output\n");
		const empty = await ci.build({ project_id: projectId });
		await ci.drive(empty, "success");
		for (const id of [running, empty]) {
			const res = track("erase refused", await dev.post(`/projects/${projectId}/builds/${id}/erase`));
			expect(res.status).toBe(403);
			expect(res.body).toEqual({ message: "403 Forbidden  - Build is not erasable!" });
		}
		expect((await dev.get(`/projects/${projectId}/builds/${running}/trace`)).text).toBe("output\n");
	});
});

describe("permissions", () => {
	const reads = (pid: number, id: number) => [
		`/projects/${pid}/builds/${id}`,
		`/projects/${pid}/builds/${id}/trace`,
		`/projects/${pid}/builds/${id}/artifacts`,
		`/projects/${pid}/repository/commits/${SHA_A}/builds`,
	];

	async function projectWithBuild(visibility: number, publicBuilds: boolean) {
		const owner = await createUser(cluster.api());
		const project = await createProject(as(owner.token), { visibility_level: visibility, public_builds: publicBuilds });
		const id = await ci.build({ project_id: project.id });
		await ci.drive(id, "success");
		await ci.upload(id, Buffer.from([0x50, 0x4b, 3, 4, 0xfe]));
		return { owner, projectId: project.id, id };
	}

	it("follows GitLab's role matrix on a private project", async () => {
		const { project, roles } = await roleMatrix(cluster.api(), token => as(token));
		const p = project.id;
		const expectations: Record<string, { list: number; read: number; write: number }> = {
			guest: { list: 200, read: 403, write: 403 },
			reporter: { list: 200, read: 200, write: 403 },
			developer: { list: 200, read: 200, write: 201 },
			master: { list: 200, read: 200, write: 201 },
			owner: { list: 200, read: 200, write: 201 },
			stranger: { list: 404, read: 404, write: 404 },
		};
		for (const [role, want] of Object.entries(expectations)) {
			const api = as(roles[role].token);
			const id = await ci.build({ project_id: p });
			await ci.drive(id, "failed");
			await ci.upload(id, Buffer.from([0x50, 0x4b, 0xff]));
			expect([role, track("list", await api.get(`/projects/${p}/builds`)).status]).toEqual([role, want.list]);
			for (const url of reads(p, id)) expect([role, url, track(url, await api.get(url)).status]).toEqual([role, url, want.read]);
			for (const action of ["cancel", "retry", "erase"]) {
				const res = track(action, await api.post(`/projects/${p}/builds/${id}/${action}`));
				expect([role, action, res.status]).toEqual([role, action, want.write]);
				if (want.write === 403) expect(res.body).toEqual({ message: "403 Forbidden" });
				if (want.write === 404) expect(res.body).toEqual({ message: "404 Project Not Found" });
			}
		}
		// Anonymous: 401 everywhere.
		for (const url of [`/projects/${p}/builds`, ...reads(p, 1)]) expect(track("anon", await as(null).get(url)).status).toBe(401);
		expect(track("anon", await as(null).post(`/projects/${p}/builds/1/cancel`)).status).toBe(401);
	});

	it("checks the permission before looking the build up (403, not 404), and 404s an unknown build for readers", async () => {
		const { project, roles } = await roleMatrix(cluster.api(), token => as(token));
		expect(track("guest unknown", await as(roles.guest.token).get(`/projects/${project.id}/builds/987654`)).status).toBe(403);
		const unknown = track("reporter unknown", await as(roles.reporter.token).get(`/projects/${project.id}/builds/987654`));
		expect(unknown.status).toBe(404);
		expect(unknown.body).toEqual({ message: "404 Not Found" });
		// A build of another project is not found either.
		const other = await ci.build({ project_id: (await createProject(as(roles.owner.token))).id });
		expect(track("other project", await as(roles.reporter.token).get(`/projects/${project.id}/builds/${other}`)).status).toBe(404);
		expect(track("cancel other", await as(roles.owner.token).post(`/projects/${project.id}/builds/${other}/cancel`)).status).toBe(404);
	});

	it.each([
		[20, true, 200],
		[10, true, 200],
		[20, false, 403],
		[10, false, 403],
	])("visibility %i with public_builds %s: a non-member reads builds with %i, never writes", async (visibility, publicBuilds, read) => {
		const { projectId, id } = await projectWithBuild(visibility, publicBuilds);
		const stranger = as((await createUser(cluster.api())).token);
		expect(track("stranger list", await stranger.get(`/projects/${projectId}/builds`)).status).toBe(200);
		for (const url of reads(projectId, id)) expect([url, track(url, await stranger.get(url)).status]).toEqual([url, read]);
		for (const action of ["cancel", "retry", "erase"])
			expect(track(action, await stranger.post(`/projects/${projectId}/builds/${id}/${action}`)).status).toBe(403);
	});

	it("public_builds on a private project lets no non-member in (404)", async () => {
		const { projectId, id } = await projectWithBuild(0, true);
		const stranger = as((await createUser(cluster.api())).token);
		expect(track("private", await stranger.get(`/projects/${projectId}/builds/${id}`)).status).toBe(404);
	});

	it("lets an admin do everything on any project", async () => {
		const { projectId, id } = await projectWithBuild(0, false);
		expect((await cluster.api().get(`/projects/${projectId}/builds/${id}/artifacts`)).status).toBe(200);
		expect(track("admin retry", await cluster.api().post(`/projects/${projectId}/builds/${id}/retry`)).status).toBe(201);
	});
});

describe("lists: scope, order, pagination and commit builds", () => {
	let api: ReturnType<typeof as>;
	let projectId: number;
	const ids: Record<string, number[]> = { pending: [], running: [], success: [], failed: [], canceled: [] };
	const ofCommitB: number[] = [];
	let all: number[];

	beforeAll(async () => {
		const owner = await createUser(cluster.api());
		api = as(owner.token);
		projectId = (await createProject(api)).id;
		const plan = ["pending", "running", "success", "failed", "canceled", "success", "failed", "pending", "success", "running", "success"] as const;
		for (const [i, status] of plan.entries()) {
			const id = await ci.build({ project_id: projectId, sha: i % 3 === 0 ? SHA_B : SHA_A, name: `job${i}` });
			if (i % 3 === 0) ofCommitB.unshift(id);
			if (status === "canceled") await api.post(`/projects/${projectId}/builds/${id}/cancel`);
			else await ci.drive(id, status);
			ids[status].push(id);
		}
		all = Object.values(ids)
			.flat()
			.sort((a, b) => b - a);
	});

	const idsOf = (res: Reply) => res.body.map((b: { id: number }) => b.id);

	it("lists every build newest first with GitLab's pagination headers", async () => {
		const res = track("list", await api.get(`/projects/${projectId}/builds`));
		expect(res.status).toBe(200);
		expect(idsOf(res)).toEqual(all);
		expect(res.headers.get("x-total")).toBe("11");
		expect(res.headers.get("x-total-pages")).toBe("1");
		expect(res.headers.get("x-per-page")).toBe("20");
		expect(res.headers.get("x-page")).toBe("1");
		expect(res.headers.get("x-next-page")).toBe("");
		expect(res.headers.get("x-prev-page")).toBe("");
	});

	it("pages: page 2 of 4 per page, the last page, and past the end", async () => {
		const page2 = track("page2", await api.get(`/projects/${projectId}/builds`, { query: { page: 2, per_page: 4 } }));
		expect(idsOf(page2)).toEqual(all.slice(4, 8));
		expect(page2.headers.get("x-total-pages")).toBe("3");
		expect(page2.headers.get("x-next-page")).toBe("3");
		expect(page2.headers.get("x-prev-page")).toBe("1");
		expect(page2.headers.get("link")).toBe(
			`<${cluster.url}/projects/${projectId}/builds?page=1&per_page=4>; rel="prev", ` +
				`<${cluster.url}/projects/${projectId}/builds?page=3&per_page=4>; rel="next", ` +
				`<${cluster.url}/projects/${projectId}/builds?page=1&per_page=4>; rel="first", ` +
				`<${cluster.url}/projects/${projectId}/builds?page=3&per_page=4>; rel="last"`,
		);
		expect(idsOf(await api.get(`/projects/${projectId}/builds`, { query: { page: 3, per_page: 4 } }))).toEqual(all.slice(8));
		const past = track("past", await api.get(`/projects/${projectId}/builds`, { query: { page: 9, per_page: 4 } }));
		expect(past.status).toBe(200);
		expect(past.body).toEqual([]);
		expect(past.headers.get("x-total")).toBe("11");
		const capped = await api.get(`/projects/${projectId}/builds`, { query: { per_page: 1000 } });
		expect(capped.headers.get("x-per-page")).toBe("100");
		// Integers as Grape's `type: Integer`: below 1 the defaults, anything but an integer a 400 naming it.
		const lenient = await api.get(`/projects/${projectId}/builds`, { query: { page: "0", per_page: "-3" } });
		expect([lenient.status, lenient.headers.get("x-page"), lenient.headers.get("x-per-page")]).toEqual([200, "1", "20"]);
		const invalid = await api.get(`/projects/${projectId}/builds`, { query: { page: "abc", per_page: "1.5" } });
		expect([invalid.status, invalid.body]).toEqual([400, { error: "page is invalid, per_page is invalid" }]);
	});

	it.each([
		[{ scope: "pending" }, ["pending"]],
		[{ scope: "success" }, ["success"]],
		[{ "scope[]": ["pending", "running"] }, ["pending", "running"]],
		[{ "scope[0]": "failed", "scope[1]": "canceled" }, ["failed", "canceled"]],
		[{ scope: "" }, ["pending", "running", "success", "failed", "canceled"]],
	])("filters by scope %j", async (query, statuses) => {
		const res = track("scope", await api.get(`/projects/${projectId}/builds`, { query: query }));
		expect(res.status).toBe(200);
		const want = statuses.flatMap(s => ids[s]).sort((a, b) => b - a);
		expect(idsOf(res)).toEqual(want);
		expect(res.headers.get("x-total")).toBe(String(want.length));
		expect(new Set(res.body.map((b: { status: string }) => b.status))).toEqual(new Set(statuses.filter(s => ids[s].length)));
	});

	it("pages a filtered list", async () => {
		const res = await api.get(`/projects/${projectId}/builds`, { query: { scope: "success", per_page: 2, page: 2 } });
		expect(idsOf(res)).toEqual([...ids.success].sort((a, b) => b - a).slice(2, 4));
		expect([res.headers.get("x-total"), res.headers.get("x-total-pages")]).toEqual(["4", "2"]);
	});

	it.each([[{ scope: "unknown" }], [{ "scope[]": ["pending", "unknown_status"] }], [{ scope: "created" }]])("refuses scope %j with 400", async query => {
		const res = track("bad scope", await api.get(`/projects/${projectId}/builds`, { query: query }));
		expect(res.status).toBe(400);
		expect(res.body).toEqual({ error: "scope does not have a valid value" });
	});

	it("lists a commit's builds (exact sha, any case), with scope and pagination; an unknown sha is []", async () => {
		const res = track("commit", await api.get(`/projects/${projectId}/repository/commits/${SHA_B}/builds`));
		expect(res.status).toBe(200);
		const wantB = ofCommitB;
		expect(wantB).toHaveLength(4);
		expect(idsOf(res)).toEqual(wantB);
		expect(res.body.every((b: { commit: { id: string } }) => b.commit.id === SHA_B)).toBe(true);
		expect(res.headers.get("x-total")).toBe(String(wantB.length));
		const upper = await api.get(`/projects/${projectId}/repository/commits/${SHA_B.toUpperCase()}/builds`);
		expect(idsOf(upper)).toEqual(wantB);
		const scoped = await api.get(`/projects/${projectId}/repository/commits/${SHA_B}/builds`, { query: { scope: "success" } });
		expect(scoped.body.every((b: { status: string; commit: { id: string } }) => b.status === "success" && b.commit.id === SHA_B)).toBe(true);
		const paged = await api.get(`/projects/${projectId}/repository/commits/${SHA_B}/builds`, { query: { per_page: 1, page: 2 } });
		expect(idsOf(paged)).toEqual(wantB.slice(1, 2));
		for (const sha of ["deadbeef", "master", "x".repeat(300)]) {
			const none = track("unknown sha", await api.get(`/projects/${projectId}/repository/commits/${sha}/builds`));
			expect([none.status, none.body]).toEqual([200, []]);
		}
		const badScope = track("commit bad scope", await api.get(`/projects/${projectId}/repository/commits/${SHA_B}/builds`, { query: { scope: "nope" } }));
		expect([badScope.status, badScope.body]).toEqual([400, { error: "scope does not have a valid value" }]);
	});

	it("finds a commit's builds by an abbreviated id of 7 characters or more; one shared by two commits is a 404", async () => {
		const owner = await createUser(cluster.api());
		const pid = (await createProject(as(owner.token))).id;
		const a = [await ci.build({ project_id: pid, sha: SHA_A }), await ci.build({ project_id: pid, sha: SHA_A })];
		const b = await ci.build({ project_id: pid, sha: SHA_B });
		const commits = (sha: string) => as(owner.token).get(`/projects/${pid}/repository/commits/${sha}/builds`);
		for (const short of [SHA_A.slice(0, 7), SHA_A.slice(0, 12), SHA_A.slice(0, 39).toUpperCase()]) {
			const res = track("short sha", await commits(short));
			expect([short, res.status, idsOf(res), res.headers.get("x-total")]).toEqual([short, 200, [...a].reverse(), "2"]);
			expect(res.body.every((x: { commit: { id: string } }) => x.commit.id === SHA_A)).toBe(true);
		}
		expect(idsOf(await commits(SHA_B.slice(0, 8)))).toEqual([b]);
		// Six characters are too few to name a commit: matched as they are, so nothing.
		expect((await commits(SHA_A.slice(0, 6))).body).toEqual([]);
		expect((await commits("abcdef0")).body).toEqual([]);
		// A second commit that starts the same way makes the short id ambiguous; a longer one still names one commit.
		const twin = SHA_A.slice(0, 7) + "c".repeat(33);
		const t = await ci.build({ project_id: pid, sha: twin });
		const ambiguous = track("ambiguous sha", await commits(SHA_A.slice(0, 7)));
		expect([ambiguous.status, ambiguous.body]).toEqual([404, { message: "404 Not Found" }]);
		expect(idsOf(await commits(SHA_A.slice(0, 8)))).toEqual([...a].reverse());
		expect(idsOf(await commits(twin.slice(0, 8)))).toEqual([t]);
	});

	it("sees a new build and a state change at once (the cached list is cleaned)", async () => {
		const before = await api.get(`/projects/${projectId}/builds`, { query: { per_page: 1 } });
		const id = await ci.build({ project_id: projectId });
		const after = await api.get(`/projects/${projectId}/builds`, { query: { per_page: 1 } });
		expect(idsOf(after)).toEqual([id]);
		expect(after.headers.get("x-total")).toBe(String(Number(before.headers.get("x-total")) + 1));
		await ci.drive(id, "running");
		expect((await api.get(`/projects/${projectId}/builds`, { query: { scope: "running" } })).body.map((b: { id: number }) => b.id)).toContain(id);
	});

	it.each([
		["abc", 400, { error: "build_id is invalid" }],
		["-1", 400, { error: "build_id is invalid" }],
		["1.5", 400, { error: "build_id is invalid" }],
		["99999999999999999999999", 404, { message: "404 Not Found" }],
		["0", 404, { message: "404 Not Found" }],
	])("answers build id %s with %i on every endpoint", async (raw, status, body) => {
		for (const res of [
			await api.get(`/projects/${projectId}/builds/${raw}`),
			await api.get(`/projects/${projectId}/builds/${raw}/trace`),
			await api.get(`/projects/${projectId}/builds/${raw}/artifacts`),
			await api.post(`/projects/${projectId}/builds/${raw}/cancel`),
			await api.post(`/projects/${projectId}/builds/${raw}/retry`),
			await api.post(`/projects/${projectId}/builds/${raw}/erase`),
			await ci.state(raw, "running"),
		]) {
			track(`id ${raw}`, res);
			expect([res.status, res.body]).toEqual([status, body]);
		}
	});
});

describe("artifacts", () => {
	let api: ReturnType<typeof as>;
	let token: string;
	let projectId: number;

	beforeAll(async () => {
		const owner = await createUser(cluster.api());
		token = owner.token;
		api = as(token);
		projectId = (await createProject(api)).id;
	});

	it("uploads and downloads byte for byte with GitLab's headers", async () => {
		const id = await ci.build({ project_id: projectId });
		const bytes = Buffer.from(Array.from({ length: 70000 }, (_, i) => (i * 7919) & 0xff));
		const up = track("upload", await ci.upload(id, bytes, "ci_build_artifacts.zip"));
		expect(up.status).toBe(200);
		expect(up.body).toMatchObject({ id, artifacts_file: { filename: "ci_build_artifacts.zip", size: 70000 } });
		expect((await api.get(`/projects/${projectId}/builds/${id}`)).body.artifacts_file).toEqual({ filename: "ci_build_artifacts.zip", size: 70000 });
		const res = await fetch(`${cluster.url}/projects/${projectId}/builds/${id}/artifacts`, { headers: { "PRIVATE-TOKEN": token } });
		expect(res.status).toBe(200);
		expect(res.headers.get("content-type")).toBe("application/octet-stream");
		expect(res.headers.get("content-disposition")).toBe("attachment; filename=ci_build_artifacts.zip");
		expect(res.headers.get("content-length")).toBe("70000");
		expect(res.headers.get("content-transfer-encoding")).toBe("binary");
		expect(Buffer.from(await res.arrayBuffer()).equals(bytes)).toBe(true);
	});

	it("serves any file name as a valid Content-Disposition", async () => {
		const id = await ci.build({ project_id: projectId });
		expect((await ci.upload(id, Buffer.from([1, 2, 3]), 'build "résumé" 1.zip')).status).toBe(200);
		const res = await fetch(`${cluster.url}/projects/${projectId}/builds/${id}/artifacts`, { headers: { "PRIVATE-TOKEN": token } });
		expect(res.status).toBe(200);
		expect(res.headers.get("content-disposition")).toBe(
			`attachment; filename="build _r_sum__ 1.zip"; filename*=UTF-8''build%20%22r%C3%A9sum%C3%A9%22%201.zip`,
		);
	});

	it("answers 404 for a build without artifacts and for an unknown build (docs/api.md#builds)", async () => {
		const id = await ci.build({ project_id: projectId });
		for (const url of [`/projects/${projectId}/builds/${id}/artifacts`, `/projects/${projectId}/builds/987654/artifacts`]) {
			const res = track("no artifacts", await api.get(url));
			expect([res.status, res.body]).toEqual([404, { message: "404 Not Found" }]);
		}
	});

	it.each([
		[null, { error: "filename is missing" }],
		["../../etc/passwd", { error: "filename is invalid" }],
		["a\\b.zip", { error: "filename is invalid" }],
		["..", { error: "filename is invalid" }],
		["x".repeat(300), { error: "filename is invalid" }],
	])("refuses the upload file name %j with 400 and stores nothing", async (filename, error) => {
		const id = await ci.build({ project_id: projectId });
		const res = track("bad filename", await ci.upload(id, Buffer.from("data"), filename));
		expect([res.status, res.body]).toEqual([400, error]);
		expect(await buildFiles(projectId, id)).toEqual([]);
		expect(await cluster.stored.pendingUploads()).toEqual([]);
	});

	it("replaces the previous artifacts and deletes the old file", async () => {
		const id = await ci.build({ project_id: projectId });
		await ci.upload(id, Buffer.from("first version"), "a.zip");
		const [oldFile] = await buildFiles(projectId, id);
		const res = await ci.upload(id, Buffer.from("second, longer version"), "b.zip");
		expect(res.body.artifacts_file).toEqual({ filename: "b.zip", size: 22 });
		const files = await buildFiles(projectId, id);
		expect(files).toHaveLength(1);
		expect(files[0]).not.toBe(oldFile);
		expect((await api.get(`/projects/${projectId}/builds/${id}/artifacts`)).text).toBe("second, longer version");
	});

	it("refuses an announced oversized upload with 413 before reading it, and keeps the previous artifacts", async () => {
		const id = await ci.build({ project_id: projectId });
		await ci.upload(id, Buffer.from("keep me"), "keep.zip");
		const status = await new Promise<number>((resolve, reject) => {
			const req = http.request(`${cluster.url}/internal/builds/${id}/artifacts?filename=big.zip`, {
				method: "PUT",
				headers: { ...ci.headers, "Content-Length": String(MAX_ARTIFACT + 1) },
			});
			req.on("response", res => (res.resume(), resolve(res.statusCode!)));
			req.on("error", reject);
			req.flushHeaders();
		});
		track("oversized", { status });
		expect(status).toBe(413);
		expect((await api.get(`/projects/${projectId}/builds/${id}/artifacts`)).text).toBe("keep me");
	});

	it("an interrupted upload leaves no partial file and the previous artifacts untouched", async () => {
		const id = await ci.build({ project_id: projectId });
		await ci.upload(id, Buffer.from("previous"), "prev.zip");
		await new Promise<void>(resolve => {
			const req = http.request(`${cluster.url}/internal/builds/${id}/artifacts?filename=cut.zip`, {
				method: "PUT",
				headers: { ...ci.headers, "Content-Length": String(64 * MiB) },
			});
			req.on("error", () => resolve());
			req.write(Buffer.alloc(8 * MiB, 1), () => {
				// Wait until the builds node has started writing, then drop the connection.
				waitFor("the upload to reach the store", async () => (await cluster.stored.pendingUploads()).length > 0, 20000, 20).then(
					() => (req.destroy(), resolve()),
					() => (req.destroy(), resolve()),
				);
			});
		});
		await waitFor("the partial upload to be removed", async () => (await cluster.stored.pendingUploads()).length === 0, 30000);
		expect(await buildFiles(projectId, id)).toHaveLength(1);
		const res = await api.get(`/projects/${projectId}/builds/${id}`);
		expect(res.body.artifacts_file).toEqual({ filename: "prev.zip", size: 8 });
		expect((await api.get(`/projects/${projectId}/builds/${id}/artifacts`)).text).toBe("previous");
	});

	it(`streams a ${LARGE / MiB} MiB artifact up and down byte for byte while every process stays flat`, async () => {
		const id = await ci.build({ project_id: projectId });
		const nodes = ["api", "builds"];
		for (const n of nodes) resetPeakRss(pid(n));
		const base = Object.fromEntries(nodes.map(n => [n, peakRss(pid(n))]));
		const up = await streamUpload(`${cluster.url}/internal/builds/${id}/artifacts?filename=large.bin`, ci.headers, LARGE);
		track("large upload", up);
		expect(up.status).toBe(200);
		expect(JSON.parse(up.body).artifacts_file).toEqual({ filename: "large.bin", size: LARGE });
		for (const n of nodes) expect([n, "upload", peakRss(pid(n)) - base[n] < FLAT]).toEqual([n, "upload", true]);

		for (const n of nodes) resetPeakRss(pid(n));
		const down = await streamDownload(`${cluster.url}/projects/${projectId}/builds/${id}/artifacts`, { "PRIVATE-TOKEN": token });
		expect(down.status).toBe(200);
		expect(down.headers["content-length"]).toBe(String(LARGE));
		expect(down.bytes).toBe(LARGE);
		expect(down.sha256).toBe(up.sha256);
		expect(up.sha256).toBe(sha256Of(LARGE));
		for (const n of nodes) expect([n, "download", peakRss(pid(n)) - base[n] < FLAT]).toEqual([n, "download", true]);

		// A client that stops reading for a while, then reads slowly: the gateway reads the file at
		// the client's pace (backpressure), never ahead of it.
		resetPeakRss(pid("api"));
		const apiBase = peakRss(pid("api"));
		let chunks = 0;
		const slow = await streamDownload(
			`${cluster.url}/projects/${projectId}/builds/${id}/artifacts`,
			{ "PRIVATE-TOKEN": token },
			{
				beforeReading: () => new Promise(r => setTimeout(r, 3000)),
				perChunk: async () => {
					if (++chunks % 64 === 0 && chunks < 64 * 40) await new Promise(r => setTimeout(r, 20));
				},
			},
		);
		expect(slow.sha256).toBe(up.sha256);
		expect(peakRss(pid("api")) - apiBase).toBeLessThan(FLAT);
	}, 240000);

	it("refuses a chunked upload that grows past the limit with 413 and keeps nothing", async () => {
		const id = await ci.build({ project_id: projectId });
		const res = await streamUpload(`${cluster.url}/internal/builds/${id}/artifacts?filename=huge.bin`, ci.headers, MAX_ARTIFACT + 1, { chunked: true });
		track("chunked oversized", res);
		expect(res.status).toBe(413);
		expect(JSON.parse(res.body)).toEqual({ message: "413 Request Entity Too Large" });
		await waitFor("no upload left in progress", async () => (await cluster.stored.pendingUploads()).length === 0);
		expect(await buildFiles(projectId, id)).toEqual([]);
		expect((await api.get(`/projects/${projectId}/builds/${id}`)).body.artifacts_file).toBeNull();
	}, 120000);
});

describe("a real v3 client: the ruby-gitlab gem", () => {
	it("lists with a scope array, reads commit builds, a build and its artifacts, and cancels, retries and erases", async () => {
		const owner = await createUser(cluster.api());
		const projectId = (await createProject(as(owner.token))).id;
		const running = await ci.build({ project_id: projectId, sha: SHA_B });
		await ci.drive(running, "running");
		const pending = await ci.build({ project_id: projectId });
		const done = await ci.build({ project_id: projectId, name: "rubocop", user_id: owner.id });
		await ci.drive(done, "running");
		await ci.upload(done, Buffer.from([0x50, 0x4b, 3, 4, 0xff, 0xfe, 1, 2]), "rubocop-artifacts.zip");
		await ci.state(done, "failed");
		const gem = await runCommand(
			"ruby",
			[path.join(__dirname, "../../support/ruby-gitlab-builds.rb"), cluster.url, owner.token, String(projectId), String(running), String(done), SHA_A],
			{ timeoutMs: 60000 },
		);
		expect([gem.status, gem.stderr]).toEqual([0, ""]);
		const out = JSON.parse(gem.stdout);
		expect(out.scoped).toEqual([
			[pending, "pending"],
			[running, "running"],
		]);
		expect(out.commit).toEqual([done, pending]);
		expect(out.build).toEqual({
			id: done,
			name: "rubocop",
			artifacts: { filename: "rubocop-artifacts.zip", size: 8 },
			short_id: SHA_A.slice(0, 8),
			user: owner.username,
		});
		expect(out.file).toEqual({ filename: "rubocop-artifacts.zip", size: 8 });
		expect(out.cancel).toBe("canceled");
		expect(out.retry[1]).toBe("pending");
		expect(out.retry[0]).toBeGreaterThan(done);
		expect(out.erase).toEqual([done, null]);
	}, 90000);
});

// Last: the seed adds some 1,300 builds, and on FerretDB (the e2e-mongo project) every query but an _id look-up reads
// whole collections (docs/storage.md#ferretdb), so the tests after it would run on a store many times slower.
describe("npm run seed", () => {
	const statusesOf = async (projectId: number, total: number) => {
		const seen: Record<string, number> = {};
		for (let page = 1; page <= Math.ceil(total / 100); page++) {
			const res = await cluster.api().get(`/projects/${projectId}/builds`, { query: { per_page: 100, page } });
			for (const b of res.body as { status: string }[]) seen[b.status] = (seen[b.status] ?? 0) + 1;
		}
		return seen;
	};

	it("seeds a demo project over HTTP from the command line, in every state, with traces and artifacts", async () => {
		// Run without blocking this process: its kept-alive sockets to the gateway stay live (test/support/commands.ts).
		const run = await runCommand(
			process.execPath,
			[
				path.join(__dirname, "../../../dist/scripts/seed.js"),
				"--builds",
				"40",
				"--via",
				"http",
				"--url",
				cluster.url,
				"--token",
				cluster.rootToken,
				"--secret",
				cluster.internalSecret,
				"--concurrency",
				"4",
				"--artifacts",
				"1",
			],
			{ env: { PATH: process.env.PATH ?? "" }, timeoutMs: 120000 },
		);
		// On a failure the seed's own last words say which call failed and how.
		expect({ status: run.status, error: run.status === 0 ? "" : run.stderr.slice(-2000) }).toEqual({ status: 0, error: "" });
		expect(run.stderr).toContain("100%  40/40 builds");
		const m = /^Project (\d+) \(root\/builds-demo-\d+-[0-9a-f]{6}\): 40 builds/m.exec(run.stdout);
		expect(m).not.toBeNull();
		const projectId = Number(m![1]);
		const list = await cluster.api().get(`/projects/${projectId}/builds`, { query: { per_page: 100 } });
		expect(list.headers.get("x-total")).toBe("40");
		expect(await statusesOf(projectId, 40)).toEqual({ pending: 4, running: 4, success: 20, failed: 8, canceled: 4 });
		const withArtifacts = list.body.filter((b: { artifacts_file: unknown }) => b.artifacts_file);
		expect(withArtifacts.length).toBe(28);
		const one = withArtifacts[0];
		const file = await fetch(`${cluster.url}/projects/${projectId}/builds/${one.id}/artifacts`, { headers: { "PRIVATE-TOKEN": cluster.rootToken } });
		const bytes = Buffer.from(await file.arrayBuffer());
		expect([file.status, bytes.length]).toEqual([200, one.artifacts_file.size]);
		// A real zip, as a user would check it.
		const zip = path.join(cluster.dataDir, "downloaded-artifacts.zip");
		fs.writeFileSync(zip, bytes);
		const listed = await runCommand("unzip", ["-l", zip]);
		expect([listed.status, listed.stdout.includes("coverage/data.bin")]).toEqual([0, true]);
		fs.rmSync(zip);
		// A trace on every 5th build that ran: 8 of the 40.
		const traces = await Promise.all(list.body.map((b: { id: number }) => cluster.api().get(`/projects/${projectId}/builds/${b.id}/trace`)));
		expect(traces.filter(t => t.status === 200 && t.text.startsWith("Running with")).length).toBe(8);
	}, 180000);

	// Its timeout is the whole seed's time on the slowest store of the run (FerretDB) on a busy machine: a guard against a hang, not a measure.
	it("seeds in batches over the broker with the same mix, numbered densely", async () => {
		const result = await seedBuilds({
			builds: 1234,
			via: "broker",
			transporter: NATS_URL,
			namespace: cluster.namespace,
			url: cluster.url,
			token: cluster.rootToken,
			secret: cluster.internalSecret,
			artifactsEvery: 50,
			artifactBytes: 1000,
		});
		expect(result.byStatus).toEqual({ pending: 123, running: 123, success: 618, failed: 247, canceled: 123 });
		const first = await cluster.api().get(`/projects/${result.projectId}/builds`, { query: { per_page: 100 } });
		expect([first.headers.get("x-total"), first.headers.get("x-total-pages")]).toEqual(["1234", "13"]);
		const last = await cluster.api().get(`/projects/${result.projectId}/builds`, { query: { per_page: 100, page: 13 } });
		expect(last.body).toHaveLength(34);
		expect(last.body[33].id).toBe(result.firstBuildId);
		expect(await statusesOf(result.projectId, 1234)).toEqual(result.byStatus);
		const running = await cluster.api().get(`/projects/${result.projectId}/builds`, { query: { scope: "running", per_page: 1 } });
		expect(running.headers.get("x-total")).toBe("123");
		expect(running.body[0]).toMatchObject({ status: "running", started_at: expect.stringMatching(ISO_Z), finished_at: null });
	}, 600000);
});
