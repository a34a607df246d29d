/**
 * Builds on one in-process broker (the all-in-one `npm start` shape: local calls, the request
 * itself as the upload stream, the memory cacher): races that the compare-and-set writes must
 * settle, download grants and upload commits, the batch API the seed uses.
 */
import fs from "fs";
import http from "http";
import net from "net";
import path from "path";
import { config } from "../../../config";
import { Readable } from "stream";
import type { UploadInFlight } from "../../../gateway/files/artifact-upload";
import { CacheReads } from "../../../lib/cache/cache-reads";
import { ArtifactStore } from "../../../lib/builds/artifact-store";
import { MAX_TRACE_BYTES } from "../../../lib/builds/artifact-storage";
import type { DownloadGrant } from "../../../lib/builds/transfer-grants";
import AccountsService from "../../../services/accounts.service";
import ApiService from "../../../services/api.service";
import BuildsService from "../../../services/builds.service";
import { BATCH_MAX } from "../../../services/modules/builds/internal";
import { filesUnder, internalApi, SHA_A, sha256Of, streamDownload, streamUpload, type InternalApi } from "../../support/builds";
import { startLocal, type LocalStack } from "../../support/broker";
import { createProject, createUser } from "../../support/fixtures";

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
	it("downloads a multi-MiB artifact byte for byte, whole and by range", async () => {
		const size = 9 * MiB + 12345;
		const id = await ci.build({ project_id: projectId });
		const up = await streamUpload(
			`${stack.url}/internal/builds/${id}/artifacts?filename=multi.bin`,
			{ "Gitlab-Shared-Secret": config.internalApiSecret },
			size,
		);
		expect(up.status).toBe(200);
		const url = `${stack.url}/projects/${projectId}/builds/${id}/artifacts`;
		const down = await streamDownload(url, { "PRIVATE-TOKEN": token });
		expect([down.status, down.bytes, down.sha256, down.headers["content-length"]]).toEqual([200, size, sha256Of(size), String(size)]);
		expect(down.headers["x-content-type-options"]).toBe("nosniff");
		expect(down.headers["content-security-policy"]).toBe("default-src 'none'; sandbox");
		const part = await fetch(url, { headers: { "PRIVATE-TOKEN": token, Range: `bytes=${size - 10}-` } });
		const partAnswer = [part.status, part.headers.get("content-range"), part.headers.get("content-length")];
		expect(partAnswer).toEqual([206, `bytes ${size - 10}-${size - 1}/${size}`, "10"]);
		expect((await part.arrayBuffer()).byteLength).toBe(10);
	});

	const meta = () => ({
		user: { id: 1, username: "root", is_admin: true },
		access: {
			project: { id: projectId, path_with_namespace: "x/y", visibility_level: 0, public_builds: false, creator_id: 1 },
			level: 50,
			admin: true,
		},
	});

	it("grants a download with the store's key, size and an ETag that changes with every upload", async () => {
		const id = await ci.build({ project_id: projectId });
		await ci.upload(id, Buffer.alloc(5000, 1), "a.bin");
		const params = { id: String(projectId), build_id: String(id) };
		const first = await stack.broker.call<DownloadGrant, object>("builds.artifactsGrant", params, { meta: meta() });
		expect(first).toMatchObject({
			key: expect.stringMatching(new RegExp(`^${projectId}/${id}/artifacts-[a-z0-9]+-[0-9a-f]{16}$`)),
			size: 5000,
			etag: expect.stringMatching(/^"[a-z0-9]+-[0-9a-f]{16}"$/),
			contentType: "application/octet-stream",
			headers: { "Content-Disposition": "attachment; filename=a.bin", "Content-Transfer-Encoding": "binary" },
		});
		await ci.upload(id, Buffer.alloc(6000, 2), "b.bin");
		const second = await stack.broker.call<DownloadGrant, object>("builds.artifactsGrant", params, { meta: meta() });
		expect(second.size).toBe(6000);
		expect(second.etag).not.toBe(first.etag);
		// The first grant's file is gone: serving it is a 404, never the other file's bytes.
		expect(fs.existsSync(path.join(config.artifactsDir, first.key!))).toBe(false);
		const trace = await stack.broker.call<DownloadGrant, object>("builds.traceGrant", params, { meta: meta() });
		expect(trace).toEqual({
			key: null,
			size: 0,
			etag: `"trace-${id}-0"`,
			contentType: "text/plain",
			headers: { "Content-Disposition": `infile; filename="${id}.log"` },
		});
	});

	it("commits only an upload of that build, whole, and removes it when it refuses", async () => {
		const id = await ci.build({ project_id: projectId });
		const other = await ci.build({ project_id: projectId });
		const store = new ArtifactStore(config.artifactsDir, config.maxArtifactBytes);
		const pending = await store.writeUpload({ projectId, buildId: other }, Readable.from([Buffer.from("not yours")]));
		// An upload of another build, a path of the client's, or a size that does not match: refused.
		await expect(stack.broker.call("builds.commitArtifactsUpload", { build_id: id, filename: "x.zip", upload: pending.upload, size: 9 })).rejects.toThrow(
			/not an upload of this build/,
		);
		for (const upload of ["../../../etc/passwd", `.tmp/${id}-../../x.part`, "/etc/passwd"])
			await expect(stack.broker.call("builds.commitArtifactsUpload", { build_id: id, filename: "x.zip", upload, size: 1 })).rejects.toThrow(
				/not an upload of this build/,
			);
		const mine = await store.writeUpload({ projectId, buildId: id }, Readable.from([Buffer.from("twelve bytes")]));
		const commit = (upload: string, size: number) => stack.broker.call("builds.commitArtifactsUpload", { build_id: id, filename: "x.zip", upload, size });
		await expect(commit(mine.upload, 13)).rejects.toMatchObject({ code: 400 });
		expect(filesUnder(buildDir(id))).toEqual([]);
		expect(fs.existsSync(path.join(config.artifactsDir, mine.upload))).toBe(false);
		await expect(commit(mine.upload, 12)).rejects.toMatchObject({
			code: 400,
			data: { body: { message: "400 (Bad request) upload is gone" } },
		});
		expect((await stack.api(token).get(`/projects/${projectId}/builds/${id}`)).body.artifacts_file).toBeNull();
		await store.discardUpload(pending.upload);
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

	it("serves a trace of several MiB whole", async () => {
		const id = await ci.build({ project_id: projectId });
		const line = "x".repeat(1023) + "\n";
		const chunk = line.repeat(900); // ~900 KiB, under the body limit
		for (let i = 0; i < 6; i++) expect((await ci.trace(id, chunk)).status).toBe(200);
		const res = await stack.api(token).get(`/projects/${projectId}/builds/${id}/trace`);
		expect(res.status).toBe(200);
		expect(res.headers.get("x-content-type-options")).toBe("nosniff");
		expect(res.headers.get("content-security-policy")).toBe("default-src 'none'; sandbox");
		expect(res.text.length).toBe(chunk.length * 6);
		expect(res.text === chunk.repeat(6)).toBe(true);
	});
});

describe("the cache", () => {
	it("stores a scoped list in one spelling of its states only, and answers the others the same", async () => {
		const reads = new CacheReads(stack.broker.cacher as never);
		const list = stack.broker.registry.getActionList({}).find(a => a.name === "builds.list")!.action as never;
		const meta = { user: { id: 1, username: "root", is_admin: true }, projectKey: String(projectId) };
		const cached = (scope: unknown) => reads.read(list, { id: String(projectId), scope }, meta);
		const get = (query: string) => stack.api(token).get(`/projects/${projectId}/builds?${query}`);
		const [failed, running] = [await ci.build({ project_id: projectId }), await ci.build({ project_id: projectId })];
		await ci.drive(failed, "failed");
		await ci.drive(running, "running");
		const canonical = await get("scope[]=running&scope[]=failed");
		expect(canonical.status).toBe(200);
		expect((canonical.body as { id: number }[]).map(b => b.id).slice(0, 2)).toEqual([running, failed]);
		expect(await cached(["running", "failed"])).toBeDefined();
		for (const [query, scope] of [
			["scope[]=failed&scope[]=running", ["failed", "running"]],
			["scope[]=running&scope[]=failed&scope[]=failed", ["running", "failed", "failed"]],
			["scope[]=failed", ["failed"]],
		] as const) {
			const res = await get(query);
			expect([query, res.status]).toEqual([query, 200]);
			if (scope.length > 1) expect(res.body).toEqual(canonical.body);
			expect([query, await cached(scope)]).toEqual([query, undefined]);
		}
	});
});

describe("traces, erases and clients that leave, step by step", () => {
	type BuildsThis = { anyBuild: (id: number) => Promise<unknown>; artifacts: ArtifactStore };
	const builds = () => stack.broker.getLocalService("builds") as unknown as BuildsThis;
	const erase = (id: number) => stack.api(token).post(`/projects/${projectId}/builds/${id}/erase`);
	const traceFile = (id: number) => path.join(buildDir(id), "trace.log");

	/** A finished build with a trace, ready to be erased. */
	async function erasable(): Promise<number> {
		const id = await ci.build({ project_id: projectId });
		expect((await ci.trace(id, "first\n")).status).toBe(200);
		await ci.drive(id, "success");
		return id;
	}

	afterEach(() => {
		jest.restoreAllMocks();
	});

	it("refuses a trace append past MAX_TRACE_BYTES with a 413, and keeps the trace as it was", async () => {
		const id = await ci.build({ project_id: projectId });
		expect((await ci.trace(id, "x")).status).toBe(200);
		// A sparse file stands for a trace 5 bytes short of the limit.
		await fs.promises.truncate(traceFile(id), MAX_TRACE_BYTES - 5);
		const over = await ci.trace(id, "123456");
		expect([over.status, over.body]).toEqual([413, { message: "413 Request Entity Too Large" }]);
		expect(fs.statSync(traceFile(id)).size).toBe(MAX_TRACE_BYTES - 5);
		const upTo = await ci.trace(id, "12345");
		expect([upTo.status, upTo.body]).toEqual([200, { id, trace_size: MAX_TRACE_BYTES }]);
	});

	it("an append overtaken by an erase before it writes answers 403 and leaves no trace", async () => {
		const id = await erasable();
		const store = builds().artifacts;
		const append = store.appendTrace.bind(store);
		jest.spyOn(store, "appendTrace").mockImplementationOnce(async (...args) => {
			expect((await erase(id)).status).toBe(201);
			return append(...args);
		});
		const res = await ci.trace(id, "late\n");
		expect([res.status, res.body]).toEqual([403, { message: "403 Forbidden  - Build has been erased" }]);
		expect(fs.existsSync(buildDir(id))).toBe(false);
	});

	it("an append whose directory an erase removes under it answers 403, not 500", async () => {
		const id = await erasable();
		const appendFile = fs.promises.appendFile;
		jest.spyOn(fs.promises, "appendFile").mockImplementation(async (file, ...rest) => {
			if (file === traceFile(id)) expect((await erase(id)).status).toBe(201);
			return appendFile(file, ...rest);
		});
		const res = await ci.trace(id, "late\n");
		expect([res.status, res.body]).toEqual([403, { message: "403 Forbidden  - Build has been erased" }]);
		expect(fs.existsSync(buildDir(id))).toBe(false);
	});

	it("a commit whose build an erase removes before the move answers 403, and leaves nothing", async () => {
		const id = await erasable();
		const pending = await new ArtifactStore(config.artifactsDir, config.maxArtifactBytes).writeUpload(
			{ projectId, buildId: id },
			Readable.from([Buffer.from("zip")]),
		);
		const rename = fs.promises.rename;
		jest.spyOn(fs.promises, "rename").mockImplementation(async (from, to) => {
			if (String(to).startsWith(buildDir(id) + path.sep)) expect((await erase(id)).status).toBe(201);
			return rename(from, to);
		});
		await expect(
			stack.broker.call("builds.commitArtifactsUpload", { build_id: id, filename: "a.zip", upload: pending.upload, size: 3 }),
		).rejects.toMatchObject({ code: 403, data: { body: { message: "403 Forbidden  - Build has been erased" } } });
		expect(fs.existsSync(buildDir(id))).toBe(false);
		expect(fs.existsSync(path.join(config.artifactsDir, pending.upload))).toBe(false);
	});

	it("an upload whose client leaves while it is being authorized settles and leaves no file", async () => {
		const id = await ci.build({ project_id: projectId });
		const gateway = stack.broker.getLocalService("api") as unknown as { server: http.Server; uploadsInFlight: Set<UploadInFlight> };
		const client = new net.Socket();
		// The gateway's side of the connection: closed once it has seen the client leave.
		const serverSideClosed = new Promise<void>(resolve => gateway.server.once("connection", (socket: net.Socket) => socket.on("close", () => resolve())));
		const svc = builds();
		const anyBuild = svc.anyBuild;
		let inFlight: UploadInFlight | undefined;
		jest.spyOn(svc, "anyBuild").mockImplementationOnce(async buildId => {
			inFlight = [...gateway.uploadsInFlight][0];
			client.destroy();
			await serverSideClosed;
			return anyBuild(buildId);
		});
		const { port } = new URL(stack.url);
		client.connect(Number(port), "127.0.0.1", () => {
			client.write(
				`PUT /api/v3/internal/builds/${id}/artifacts?filename=gone.zip HTTP/1.1\r\nHost: x\r\n` +
					`Gitlab-Shared-Secret: ${config.internalApiSecret}\r\nContent-Length: 100000\r\n\r\n`,
			);
		});
		client.on("error", () => {});
		await new Promise<void>(resolve => client.on("close", () => resolve()));
		await serverSideClosed;
		while (!inFlight) await new Promise(r => setImmediate(r));
		await inFlight.done;
		expect(gateway.uploadsInFlight.has(inFlight)).toBe(false);
		expect(filesUnder(path.join(config.artifactsDir, ".tmp"))).toEqual([]);
		expect((await stack.api(token).get(`/projects/${projectId}/builds/${id}`)).body.artifacts_file).toBeNull();
	});
});

describe("Expect: 100-continue on an artifacts upload", () => {
	/** Sends the request head, then the body once `100 Continue` comes; resolves with all the socket received. */
	function rawUpload(id: number, secret: string, body: string): Promise<string> {
		const { port } = new URL(stack.url);
		return new Promise((resolve, reject) => {
			let received = "";
			let sent = false;
			const socket = net.connect(Number(port), "127.0.0.1", () => {
				socket.write(
					`PUT /api/v3/internal/builds/${id}/artifacts?filename=a.zip HTTP/1.1\r\nHost: x\r\nConnection: close\r\n` +
						`Gitlab-Shared-Secret: ${secret}\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`,
				);
			});
			socket.on("data", (chunk: Buffer) => {
				received += chunk.toString("latin1");
				if (!sent && received.startsWith("HTTP/1.1 100 Continue\r\n\r\n")) {
					sent = true;
					socket.write(body);
				}
			});
			socket.on("error", reject);
			socket.on("end", () => resolve(received));
		});
	}

	it("answers a wrong secret 401 without ever sending 100 Continue", async () => {
		const id = await ci.build({ project_id: projectId });
		const answer = await rawUpload(id, "wrong-secret", "hello");
		expect(answer).toMatch(/^HTTP\/1\.1 401 /);
		expect(answer).not.toContain("100 Continue");
		expect(answer.endsWith('{"message":"401 Unauthorized"}')).toBe(true);
	});

	it("sends 100 Continue to an authorized upload, then stores the body it sends", async () => {
		const id = await ci.build({ project_id: projectId });
		const answer = await rawUpload(id, config.internalApiSecret, "hello");
		const [first, rest] = [answer.slice(0, 25), answer.slice(25)];
		expect(first).toBe("HTTP/1.1 100 Continue\r\n\r\n");
		expect(rest).toMatch(/^HTTP\/1\.1 200 /);
		expect(JSON.parse(rest.slice(rest.indexOf("\r\n\r\n") + 4)).artifacts_file).toEqual({ filename: "a.zip", size: 5 });
	});

	it("still answers an unknown build 404 without 100 Continue", async () => {
		const answer = await rawUpload(987654321, config.internalApiSecret, "hello");
		expect(answer).toMatch(/^HTTP\/1\.1 404 /);
		expect(answer).not.toContain("100 Continue");
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
