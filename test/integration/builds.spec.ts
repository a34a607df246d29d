/**
 * Builds on one in-process broker (the all-in-one `npm start` shape: local calls, the request
 * itself as the upload stream, the memory cacher): races that the compare-and-set writes must
 * settle, downloads that span several windows, the batch API the seed uses.
 */
import fs from "fs";
import http from "http";
import path from "path";
import { config } from "../../config";
import type { DownloadInfo } from "../../lib/builds/file-window";
import AccountsService from "../../services/accounts.service";
import ApiService from "../../services/api.service";
import BuildsService from "../../services/builds.service";
import { BATCH_MAX } from "../../services/modules/builds/internal";
import { filesUnder, internalApi, SHA_A, sha256Of, streamDownload, streamUpload, type InternalApi } from "../support/builds";
import { startLocal, type LocalStack } from "../support/broker";
import { createProject, createUser } from "../support/fixtures";

const MiB = 1024 * 1024;
let stack: LocalStack;
let ci: InternalApi;
let projectId: number;
let token: string;

beforeAll(async () => {
	stack = await startLocal([ApiService, AccountsService, BuildsService]);
	ci = internalApi(stack.url, config.internalApiSecret);
	const owner = await createUser(stack.api());
	token = owner.token;
	projectId = (await createProject(stack.api(token))).id;
});

afterAll(async () => {
	await stack?.stop();
});

const buildDir = (id: number) => path.join(config.artifactsDir, String(projectId), String(id));

describe("concurrent writes", () => {
	it("numbers concurrent creates densely, in id order, with no id twice", async () => {
		const before = Number((await stack.api(token).get(`/projects/${projectId}/builds`)).headers.get("x-total"));
		const ids = await Promise.all(Array.from({ length: 40 }, () => ci.build({ project_id: projectId })));
		expect(new Set(ids).size).toBe(40);
		const list = await stack.api(token).get(`/projects/${projectId}/builds`, { query: { per_page: 100 } });
		expect(list.headers.get("x-total")).toBe(String(before + 40));
		const listed: number[] = list.body.map((b: { id: number }) => b.id);
		expect(listed).toEqual([...listed].sort((a, b) => b - a));
		expect(listed.slice(0, 40).sort()).toEqual([...ids].sort());
		// Every page is exactly one slice of that order.
		const pages = await Promise.all([1, 2, 3].map(page => stack.api(token).get(`/projects/${projectId}/builds`, { query: { per_page: 15, page } })));
		expect(pages.flatMap(p => p.body.map((b: { id: number }) => b.id))).toEqual(listed.slice(0, 45));
	});

	it("lets exactly one of a cancel and a runner's success win", async () => {
		for (let round = 0; round < 10; round++) {
			const id = await ci.build({ project_id: projectId });
			await ci.drive(id, "running");
			const [cancel, success] = await Promise.all([stack.api(token).post(`/projects/${projectId}/builds/${id}/cancel`), ci.state(id, "success")]);
			expect(cancel.status).toBe(201);
			const final = (await stack.api(token).get(`/projects/${projectId}/builds/${id}`)).body.status;
			if (success.status === 200) {
				// The runner got there first: the cancel found a finished build and left it.
				expect([final, cancel.body.status]).toEqual(["success", "success"]);
			} else {
				expect([success.status, success.body]).toEqual([400, { message: "Cannot transition build status from canceled to success" }]);
				expect([final, cancel.body.status]).toEqual(["canceled", "canceled"]);
			}
		}
	});

	it("keeps one artifacts file, the one the record names, when uploads race", async () => {
		const id = await ci.build({ project_id: projectId });
		const results = await Promise.all(Array.from({ length: 6 }, (_, i) => ci.upload(id, Buffer.alloc(1000 + i, i), `v${i}.zip`)));
		expect(results.map(r => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
		const record = (await stack.api(token).get(`/projects/${projectId}/builds/${id}`)).body.artifacts_file;
		const i = Number(/^v(\d)\.zip$/.exec(record.filename)![1]);
		expect(record.size).toBe(1000 + i);
		expect(filesUnder(buildDir(id))).toHaveLength(1);
		const served = await fetch(`${stack.url}/projects/${projectId}/builds/${id}/artifacts`, { headers: { "PRIVATE-TOKEN": token } });
		expect(Buffer.from(await served.arrayBuffer()).equals(Buffer.alloc(1000 + i, i))).toBe(true);
	});

	it("erases once when two erases race", async () => {
		const id = await ci.build({ project_id: projectId });
		await ci.upload(id, Buffer.from("zip"));
		await ci.drive(id, "success");
		const both = await Promise.all([1, 2].map(() => stack.api(token).post(`/projects/${projectId}/builds/${id}/erase`)));
		expect(both.map(r => r.status).sort()).toEqual([201, 403]);
		expect(fs.existsSync(buildDir(id))).toBe(false);
	});
});

describe("files in one process", () => {
	it("downloads an artifact spanning several windows byte for byte", async () => {
		const size = 9 * MiB + 12345;
		const id = await ci.build({ project_id: projectId });
		const up = await streamUpload(
			`${stack.url}/internal/builds/${id}/artifacts?filename=multi.bin`,
			{ "Gitlab-Shared-Secret": config.internalApiSecret },
			size,
		);
		expect(up.status).toBe(200);
		const down = await streamDownload(`${stack.url}/projects/${projectId}/builds/${id}/artifacts`, { "PRIVATE-TOKEN": token });
		expect([down.status, down.bytes, down.sha256, down.headers["content-length"]]).toEqual([200, size, sha256Of(size), String(size)]);
	});

	it("never mixes two files: a window of a replaced artifacts file is a 404", async () => {
		const id = await ci.build({ project_id: projectId });
		await ci.upload(id, Buffer.alloc(5000, 1), "a.bin");
		const meta = {
			user: { id: 1, username: "root", is_admin: true },
			access: {
				project: { id: projectId, path_with_namespace: "x/y", visibility_level: 0, public_builds: false, creator_id: 1 },
				level: 50,
				admin: true,
			},
		};
		const params = { id: String(projectId), build_id: String(id) };
		const info = await stack.broker.call<DownloadInfo, object>("builds.artifactsInfo", params, { meta });
		expect(info).toMatchObject({ size: 5000, contentType: "application/octet-stream" });
		await ci.upload(id, Buffer.alloc(6000, 2), "b.bin");
		await expect(stack.broker.call("builds.artifactsRange", { ...params, version: info.version, start: 0, end: 4999 }, { meta })).rejects.toMatchObject({
			code: 404,
		});
		const fresh = await stack.broker.call<DownloadInfo, object>("builds.artifactsInfo", params, { meta });
		const stream = await stack.broker.call<NodeJS.ReadableStream, object>(
			"builds.artifactsRange",
			{ ...params, version: fresh.version, start: 10, end: 19 },
			{ meta },
		);
		const parts: Buffer[] = [];
		for await (const chunk of stream) parts.push(chunk as Buffer);
		expect(Buffer.concat(parts)).toEqual(Buffer.alloc(10, 2));
		// A window outside the file, or too large, is refused.
		await expect(stack.broker.call("builds.artifactsRange", { ...params, version: fresh.version, start: 0, end: 6000 }, { meta })).rejects.toMatchObject({
			code: 400,
		});
	});

	it("an upload cut off by its client in the same process leaves nothing behind", async () => {
		const id = await ci.build({ project_id: projectId });
		await new Promise<void>(resolve => {
			const req = http.request(`${stack.url}/internal/builds/${id}/artifacts?filename=cut.zip`, {
				method: "PUT",
				headers: { "Gitlab-Shared-Secret": config.internalApiSecret, "Content-Length": String(32 * MiB) },
			});
			req.on("error", () => resolve());
			req.write(Buffer.alloc(4 * MiB, 3), () => setTimeout(() => (req.destroy(), resolve()), 100));
		});
		const tmp = path.join(config.artifactsDir, ".tmp");
		for (let i = 0; i < 100 && filesUnder(tmp).length; i++) await new Promise(r => setTimeout(r, 50));
		expect(filesUnder(tmp)).toEqual([]);
		expect(filesUnder(buildDir(id))).toEqual([]);
		expect((await stack.api(token).get(`/projects/${projectId}/builds/${id}`)).body.artifacts_file).toBeNull();
	});

	it("serves a trace of several windows whole", async () => {
		const id = await ci.build({ project_id: projectId });
		const line = "x".repeat(1023) + "\n";
		const chunk = line.repeat(900); // ~900 KiB, under the body limit
		for (let i = 0; i < 6; i++) expect((await ci.trace(id, chunk)).status).toBe(200);
		const res = await stack.api(token).get(`/projects/${projectId}/builds/${id}/trace`);
		expect(res.status).toBe(200);
		expect(res.text.length).toBe(chunk.length * 6);
		expect(res.text === chunk.repeat(6)).toBe(true);
	});
});

describe("builds.createBatch (the seed's bulk path)", () => {
	it("creates builds in the asked states through the same transitions, numbered in order", async () => {
		const statuses = ["pending", "running", "success", "failed", "canceled"];
		const builds = Array.from({ length: 12 }, (_, i) => ({
			name: `b${i}`,
			ref: "master",
			status: statuses[i % 5],
			coverage: i % 5 === 2 ? 50 + i : undefined,
			trace: i % 3 === 0 ? `trace ${i}\n` : undefined,
			commit: { id: SHA_A, message: "m", author_name: "a", author_email: "a@b.c", created_at: "2016-01-01T00:00:00Z" },
		}));
		const { ids } = await stack.broker.call<{ ids: number[] }, object>("builds.createBatch", { project_id: projectId, builds });
		expect(ids).toEqual([...ids].sort((a, b) => a - b));
		const got = await Promise.all(ids.map(id => stack.api(token).get(`/projects/${projectId}/builds/${id}`)));
		for (const [i, res] of got.entries()) {
			const status = statuses[i % 5];
			expect(res.body).toMatchObject({ name: `b${i}`, status, coverage: i % 5 === 2 ? 50 + i : null });
			expect([status, res.body.started_at === null]).toEqual([status, status === "pending" || status === "canceled"]);
			expect([status, res.body.finished_at === null]).toEqual([status, status === "pending" || status === "running"]);
		}
		expect((await stack.api(token).get(`/projects/${projectId}/builds/${ids[3]}/trace`)).text).toBe("trace 3\n");
		const list = await stack.api(token).get(`/projects/${projectId}/builds`, { query: { per_page: 12 } });
		expect(list.body.map((b: { id: number }) => b.id)).toEqual([...ids].reverse());
	});

	it("refuses the whole batch when one build is wrong, and over BATCH_MAX", async () => {
		const total = (await stack.api(token).get(`/projects/${projectId}/builds`)).headers.get("x-total");
		const good = { name: "ok", ref: "m", commit: { id: SHA_A, message: "m", author_name: "a", author_email: "a@b.c", created_at: "2016-01-01T00:00:00Z" } };
		await expect(stack.broker.call("builds.createBatch", { project_id: projectId, builds: [good, { ...good, status: "done" }] })).rejects.toMatchObject({
			code: 400,
		});
		await expect(stack.broker.call("builds.createBatch", { project_id: projectId, builds: [good, { ...good, name: "" }] })).rejects.toMatchObject({
			code: 400,
		});
		await expect(stack.broker.call("builds.createBatch", { project_id: 987654, builds: [good] })).rejects.toMatchObject({ code: 404 });
		await expect(stack.broker.call("builds.createBatch", { project_id: projectId, builds: Array(BATCH_MAX + 1).fill(good) })).rejects.toMatchObject({
			code: 422,
		});
		expect((await stack.api(token).get(`/projects/${projectId}/builds`)).headers.get("x-total")).toBe(total);
	});
});
