/**
 * Artifacts and traces as the gateway moves them (docs/architecture.md#artifacts): gateway, accounts
 * and builds as separate processes over the real NATS; builds authorizes, the gateway streams the
 * bytes between the client and the artifact store, and builds commits an upload. A 1 GiB artifact
 * goes up and comes down byte-identical while neither process grows by more than 64 MB; ranges are
 * exact, `curl -C -` resumes, and an interrupted upload leaves nothing. The e2e-s3 project runs it
 * again on an S3 bucket (jest.config.js); the store is checked through `cluster.stored`.
 */
import crypto from "crypto";
import fs from "fs";
import http from "http";
import path from "path";
import { startCluster, type Cluster } from "../../support/cluster";
import { runCommand } from "../../support/commands";
import { createProject, createUser } from "../../support/fixtures";
import { client, waitFor } from "../../support/http";
import { currentRss, internalApi, peakRss, resetPeakRss, streamDownload, streamUpload, type InternalApi } from "../../support/builds";

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
/** The goal of docs/architecture.md#artifacts: each process within 64 MB of its rest while 1 GiB goes through. */
const FLAT = 64 * MiB;
/** What the processes move before their rest is measured (see below). */
const WARM_UP = 64 * MiB;

let cluster: Cluster;
let ci: InternalApi;
let token: string;
let projectId: number;

beforeAll(async () => {
	cluster = await startCluster({ nodes: { api: "api", accounts: "accounts", builds: "builds" }, env: { MAX_ARTIFACT_BYTES: String(GiB + MiB) } });
	ci = internalApi(cluster.url, cluster.internalSecret);
	const owner = await createUser(cluster.api());
	token = owner.token;
	projectId = (await createProject(client(cluster.url, token))).id;
	await cluster.waitForRoute("GET", `/projects/${projectId}/builds`, token);
}, 120000);

afterAll(async () => {
	await cluster?.stop();
	if (cluster) fs.rmSync(cluster.dataDir, { recursive: true, force: true });
});

const pid = (node: string) => cluster.nodes.get(node)!.child.pid!;
const artifactsUrl = (buildId: number) => `${cluster.url}/projects/${projectId}/builds/${buildId}/artifacts`;

/** The one stored artifacts file of a build (the ground truth for ranges, once its hash is checked). */
async function storedFile(buildId: number): Promise<string> {
	const files = (await cluster.stored.buildFiles(projectId, buildId)).filter(f => f.startsWith("artifacts-"));
	expect(files).toHaveLength(1);
	return files[0];
}

async function readRange(buildId: number, file: string, start: number, length: number): Promise<Buffer> {
	const bytes = await cluster.stored.readRange(projectId, buildId, file, start, length);
	expect(bytes.length).toBe(length);
	return bytes;
}

async function sha256File(file: string): Promise<string> {
	const hash = crypto.createHash("sha256");
	for await (const chunk of fs.createReadStream(file, { highWaterMark: MiB })) hash.update(chunk as Buffer);
	return hash.digest("hex");
}

describe("a 1 GiB artifact through the split stack", () => {
	let buildId: number;
	let sha256: string;
	let etag: string;

	it("goes up and comes down byte-identical, each process within 64 MB of its rest", async () => {
		buildId = await ci.build({ project_id: projectId });
		const nodes = ["api", "builds"];
		// Rest: after the processes have moved an artifact once. A fresh gateway grows by some 60 MB on
		// its first transfer (V8 frees the socket's read buffers once its external memory passes its
		// 64 MB soft limit, and malloc keeps the pages for the next ones) and no further after that,
		// whatever the size: that steady state is what must not grow with the file.
		const warmUp = await ci.build({ project_id: projectId });
		expect((await streamUpload(`${cluster.url}/internal/builds/${warmUp}/artifacts?filename=warm.bin`, ci.headers, WARM_UP)).status).toBe(200);
		expect((await streamDownload(artifactsUrl(warmUp), { "PRIVATE-TOKEN": token })).bytes).toBe(WARM_UP);
		const rest = Object.fromEntries(nodes.map(n => [n, currentRss(pid(n))]));
		for (const n of nodes) resetPeakRss(pid(n));

		const up = await streamUpload(`${cluster.url}/internal/builds/${buildId}/artifacts?filename=large.bin`, ci.headers, GiB);
		expect(up.status).toBe(200);
		expect(JSON.parse(up.body).artifacts_file).toEqual({ filename: "large.bin", size: GiB });
		sha256 = up.sha256;
		for (const n of nodes)
			expect({ node: n, phase: "upload", withinFlat: peakRss(pid(n)) - rest[n] < FLAT }).toEqual({ node: n, phase: "upload", withinFlat: true });
		expect(await cluster.stored.pendingUploads()).toEqual([]);

		for (const n of nodes) resetPeakRss(pid(n));
		const down = await streamDownload(artifactsUrl(buildId), { "PRIVATE-TOKEN": token });
		expect(down.status).toBe(200);
		expect(down.headers["content-length"]).toBe(String(GiB));
		expect(down.headers["content-type"]).toBe("application/octet-stream");
		expect(down.headers["content-disposition"]).toBe("attachment; filename=large.bin");
		expect(down.headers["accept-ranges"]).toBe("bytes");
		expect(down.headers.etag).toMatch(/^"[a-z0-9]+-[0-9a-f]{16}"$/);
		etag = down.headers.etag!;
		expect(down.bytes).toBe(GiB);
		expect(down.sha256).toBe(sha256);
		for (const n of nodes)
			expect({ node: n, phase: "download", withinFlat: peakRss(pid(n)) - rest[n] < FLAT }).toEqual({ node: n, phase: "download", withinFlat: true });
		expect(await cluster.stored.sha256(projectId, buildId, await storedFile(buildId))).toBe(sha256);
	}, 300000);

	it("answers a Range with 206 and exactly those bytes, anywhere in the file", async () => {
		const file = await storedFile(buildId);
		for (const [header, start, end] of [
			["bytes=0-0", 0, 0],
			["bytes=1000-1999", 1000, 1999],
			[`bytes=${512 * MiB + 12345}-${512 * MiB + 12345 + 3 * MiB - 1}`, 512 * MiB + 12345, 512 * MiB + 12345 + 3 * MiB - 1],
			[`bytes=${GiB - 10}-`, GiB - 10, GiB - 1],
			["bytes=-77", GiB - 77, GiB - 1],
			[`bytes=${GiB - 5}-${2 * GiB}`, GiB - 5, GiB - 1],
		] as const) {
			const res = await fetch(artifactsUrl(buildId), { headers: { "PRIVATE-TOKEN": token, Range: header } });
			const body = Buffer.from(await res.arrayBuffer());
			expect([header, res.status, res.headers.get("content-range"), res.headers.get("content-length")]).toEqual([
				header,
				206,
				`bytes ${start}-${end}/${GiB}`,
				String(end - start + 1),
			]);
			expect(res.headers.get("etag")).toBe(etag);
			expect(body.equals(await readRange(buildId, file, start, end - start + 1))).toBe(true);
		}
	});

	it("answers 416 with the size for a range past the end, and 304 for the ETag it has", async () => {
		const res = await fetch(artifactsUrl(buildId), { headers: { "PRIVATE-TOKEN": token, Range: `bytes=${GiB}-` } });
		expect([res.status, res.headers.get("content-range"), await res.json()]).toEqual([
			416,
			`bytes */${GiB}`,
			{ message: "416 Requested Range Not Satisfiable" },
		]);
		const cached = await fetch(artifactsUrl(buildId), { headers: { "PRIVATE-TOKEN": token, "If-None-Match": etag } });
		expect([cached.status, cached.headers.get("etag"), (await cached.arrayBuffer()).byteLength]).toEqual([304, etag, 0]);
		// If-Range with another version: the whole file, not a range of it.
		const stale = await fetch(artifactsUrl(buildId), { headers: { "PRIVATE-TOKEN": token, Range: "bytes=0-9", "If-Range": '"other"' } });
		expect([stale.status, stale.headers.get("content-length")]).toEqual([200, String(GiB)]);
		await stale.body!.cancel();
		// Several ranges: the whole file (docs/api.md#builds).
		const multi = await fetch(artifactsUrl(buildId), { headers: { "PRIVATE-TOKEN": token, Range: "bytes=0-9,20-29" } });
		expect([multi.status, multi.headers.get("content-length")]).toEqual([200, String(GiB)]);
		await multi.body!.cancel();
	});

	it("answers `curl -I` (HEAD) with the download's headers and no body", async () => {
		const head = await runCommand("curl", ["-sS", "-I", "-H", `PRIVATE-TOKEN: ${token}`, artifactsUrl(buildId)]);
		expect(head.status).toBe(0);
		const [statusLine, ...headerLines] = head.stdout.trim().split(/\r?\n/);
		const headers = Object.fromEntries(headerLines.map(l => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]));
		expect([statusLine, headers["content-length"], headers.etag, headers["accept-ranges"]]).toEqual(["HTTP/1.1 200 OK", String(GiB), etag, "bytes"]);
		const part = await fetch(artifactsUrl(buildId), { method: "HEAD", headers: { "PRIVATE-TOKEN": token, Range: "bytes=100-199" } });
		expect([part.status, part.headers.get("content-range"), part.headers.get("content-length"), (await part.arrayBuffer()).byteLength]).toEqual([
			206,
			`bytes 100-199/${GiB}`,
			"100",
			0,
		]);
	});

	// The real curl binary (the CI image has it), as a user resuming a 2 GiB download would run it.
	it("lets `curl -C -` resume a download cut short, byte-identical", async () => {
		const out = path.join(cluster.dataDir, "resumed.bin");
		const curl = (...args: string[]) =>
			runCommand("curl", ["-sS", "-H", `PRIVATE-TOKEN: ${token}`, "-o", out, "-w", "%{http_code}", ...args, artifactsUrl(buildId)]);
		// The first 300 MiB and a bit, as a download that stopped there would leave them.
		const first = await curl("-r", `0-${300 * MiB + 4242}`);
		expect([first.status, first.stdout]).toEqual([0, "206"]);
		expect(fs.statSync(out).size).toBe(300 * MiB + 4243);
		const resumed = await curl("-C", "-");
		expect([resumed.status, resumed.stdout, resumed.stderr]).toEqual([0, "206", ""]);
		expect(fs.statSync(out).size).toBe(GiB);
		expect(await sha256File(out)).toBe(sha256);
		fs.unlinkSync(out);
	}, 120000);
});

describe("uploads that do not complete, and files that are not there", () => {
	it("an upload interrupted by its client leaves no artifact and no temporary file", async () => {
		const buildId = await ci.build({ project_id: projectId });
		await new Promise<void>(resolve => {
			const req = http.request(`${cluster.url}/internal/builds/${buildId}/artifacts?filename=cut.zip`, {
				method: "PUT",
				headers: { ...ci.headers, "Content-Type": "application/octet-stream", "Content-Length": String(64 * MiB) },
			});
			req.on("error", () => resolve());
			req.write(Buffer.alloc(8 * MiB, 1), () => {
				// Once the gateway has started writing the temporary file, the client goes away.
				waitFor("the upload to reach the store", async () => (await cluster.stored.pendingUploads()).length > 0, 20000, 20).then(
					() => (req.destroy(), resolve()),
					() => (req.destroy(), resolve()),
				);
			});
		});
		await waitFor("the partial upload to be removed", async () => (await cluster.stored.pendingUploads()).length === 0, 30000);
		expect(await cluster.stored.buildFiles(projectId, buildId)).toEqual([]);
		expect((await client(cluster.url, token).get(`/projects/${projectId}/builds/${buildId}`)).body.artifacts_file).toBeNull();
		const res = await client(cluster.url, token).get(`/projects/${projectId}/builds/${buildId}/artifacts`);
		expect([res.status, res.body]).toEqual([404, { message: "404 Not Found" }]);
	});

	it("an upload to an unknown build is a 404 before a byte of it is stored", async () => {
		const res = await ci.upload(987654, Buffer.alloc(1000, 1), "a.zip");
		expect([res.status, res.body]).toEqual([404, { message: "404 Not Found" }]);
		expect(await cluster.stored.pendingUploads()).toEqual([]);
	});

	it("a missing artifact is a 404 as before, and an empty or short trace is served exactly", async () => {
		const buildId = await ci.build({ project_id: projectId });
		const api = client(cluster.url, token);
		for (const url of [`/projects/${projectId}/builds/${buildId}/artifacts`, `/projects/${projectId}/builds/987654/artifacts`]) {
			const res = await api.get(url);
			expect([url, res.status, res.body]).toEqual([url, 404, { message: "404 Not Found" }]);
		}
		const empty = await fetch(`${cluster.url}/projects/${projectId}/builds/${buildId}/trace`, { headers: { "PRIVATE-TOKEN": token } });
		const emptyAnswer = [empty.status, empty.headers.get("content-type"), empty.headers.get("content-length"), await empty.text()];
		expect(emptyAnswer).toEqual([200, "text/plain", "0", ""]);
		await ci.trace(buildId, "$ make\nok\n");
		const tail = await fetch(`${cluster.url}/projects/${projectId}/builds/${buildId}/trace`, { headers: { "PRIVATE-TOKEN": token, Range: "bytes=7-" } });
		expect([tail.status, tail.headers.get("content-range"), await tail.text()]).toEqual([206, "bytes 7-9/10", "ok\n"]);
	});
});
