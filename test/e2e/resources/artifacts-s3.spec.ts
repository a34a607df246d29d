/**
 * The S3 artifact store as an operator meets it (docs/operations.md#artifacts-in-s3): gateway,
 * accounts and builds as separate processes over the real NATS, artifacts and traces in a bucket
 * of a real S3 server (versitygw, test/support/s3-server.ts).
 *
 * - A deployment on the filesystem store moves into the bucket with `npm run artifacts:to-s3`,
 *   killed half way and run again, then serves everything from the bucket.
 * - kill -9 of builds, then of the gateway, in the middle of a multipart upload: nothing becomes
 *   visible, and nothing is left once the gateway has cleaned up or the sweep has run.
 * - The S3 server killed and started again under downloads: every answer is the whole file, a
 *   download cut short, or a 503; none is a 500 or wrong bytes; downloads are whole again after.
 * - Where the operator chooses it, an artifacts download is a 302 to a presigned URL.
 * - One file of an archive is read with ranged GETs; erase and the v4 DELETE remove the objects.
 */
import { spawn, spawnSync } from "child_process";
import path from "path";
import { S3ArtifactStore } from "../../../lib/builds/s3-artifact-store";
import { internalApi, openUpload, sha256Of, streamDownload, streamUpload, type InternalApi } from "../../support/builds";
import { startCluster, type Cluster } from "../../support/cluster";
import { createProject, createUser } from "../../support/fixtures";
import { client, waitFor } from "../../support/http";
import { freePort, ROOT } from "../../support/processes";
import { S3Server } from "../../support/s3-server";
import { bucketStore, type StoredFiles } from "../../support/stored-files";
import { deflatedZip } from "../../support/zips";

const MiB = 1024 * 1024;
const HOUR = 60 * 60 * 1000;

let s3: S3Server;
let bucket: string;
let cluster: Cluster;
let stored: StoredFiles;
let ci: InternalApi;
let token: string;
let projectId: number;
/** The store as the services open it, for the sweep the builds service runs after an hour. */
let store: S3ArtifactStore;

const artifactsUrl = (buildId: number) => `${cluster.url}/projects/${projectId}/builds/${buildId}/artifacts`;
const auth = () => ({ "PRIVATE-TOKEN": token });

beforeAll(async () => {
	s3 = await S3Server.start();
	bucket = await s3.createBucket();
	stored = bucketStore(s3.objects(bucket));
	store = new S3ArtifactStore(s3.settings(bucket), 256 * MiB);
	// On the filesystem store first: the first test moves it into the bucket.
	cluster = await startCluster({ nodes: { api: "api", accounts: "accounts", builds: "builds" }, env: { MAX_ARTIFACT_BYTES: String(256 * MiB) } });
	ci = internalApi(cluster.url, cluster.internalSecret);
	token = (await createUser(cluster.api())).token;
	projectId = (await createProject(client(cluster.url, token))).id;
	await cluster.waitForRoute("GET", `/projects/${projectId}/builds`, token);
}, 120000);

afterAll(async () => {
	await cluster?.stop();
	store?.destroy();
	await s3?.stop();
});

/** The services, stopped or killed, started again on the bucket. */
async function respawn(...names: ("api" | "accounts" | "builds")[]): Promise<void> {
	for (const name of names) await cluster.spawnNode(name, name);
	await cluster.waitForGatewayToSeeAll();
	await cluster.waitForRoute("GET", `/projects/${projectId}/builds`, token);
}

/** Runs `npm run artifacts:to-s3`'s script (compiled by the test run) on the cluster's DATA_DIR and the bucket. */
function migrationEnv(): NodeJS.ProcessEnv {
	return { PATH: process.env.PATH, DATA_DIR: cluster.dataDir, LOG_LEVEL: "warn", ...s3.env(bucket) };
}
const MIGRATION = path.join(ROOT, "dist/scripts/artifacts-to-s3.js");

describe("moving a filesystem deployment into the bucket (npm run artifacts:to-s3)", () => {
	it("copies every artifacts file and trace; killed half way, it is run again; the services then serve them all from the bucket", async () => {
		const large = await ci.build({ project_id: projectId });
		const up = await streamUpload(`${cluster.url}/internal/builds/${large}/artifacts?filename=large.bin`, ci.headers, 48 * MiB);
		expect(up.status).toBe(200);
		const small = await ci.build({ project_id: projectId });
		const zip = await deflatedZip({ "report/summary.txt": "all green\n".repeat(1000), "a.txt": "a\n" });
		expect((await ci.upload(small, zip, "report.zip")).status).toBe(200);
		for (const line of ["$ make\n", "ok\n"]) expect((await ci.trace(small, line)).status).toBe(200);
		expect((await ci.trace(large, "big build\n")).status).toBe(200);
		for (const name of ["api", "builds", "accounts"]) expect(await cluster.kill(name, "SIGTERM")).toBe(0);

		// Killed while it copies the large file (a multipart upload in progress).
		const first = spawn(process.execPath, [MIGRATION], { env: migrationEnv(), stdio: "ignore" });
		const exited = new Promise<NodeJS.Signals | null>(resolve => first.once("exit", (_code, signal) => resolve(signal)));
		await waitFor(
			"the copy of the large file to be under way",
			async () => (await stored.pendingUploads()).some(p => p.includes(`/${large}/artifacts-`)),
			30000,
			20,
		);
		first.kill("SIGKILL");
		expect(await exited).toBe("SIGKILL");
		expect((await stored.buildFiles(projectId, large)).filter(f => f.startsWith("artifacts-"))).toEqual([]);

		const again = spawnSync(process.execPath, [MIGRATION], { env: migrationEnv(), encoding: "utf8" });
		expect([again.status, again.stderr.includes("FAILED")]).toEqual([0, false]);
		expect(again.stdout).toMatch(
			/^Copied \d+ file\(s\) \(\d+ bytes\); \d+ were in the bucket already; 0 trace\(s\) kept as the bucket has them; 0 failed\.\n$/,
		);
		const noMore = spawnSync(process.execPath, [MIGRATION], { env: migrationEnv(), encoding: "utf8" });
		expect([noMore.status, noMore.stdout]).toEqual([
			0,
			"Copied 0 file(s) (0 bytes); 4 were in the bucket already; 0 trace(s) kept as the bucket has them; 0 failed.\n",
		]);
		expect(await stored.buildFiles(projectId, small)).toEqual([expect.stringMatching(/^artifacts-/), "trace/base-0000000000"]);
		// What the killed run left (its multipart upload) goes with the sweep, an hour on.
		expect((await stored.pendingUploads()).length).toBeGreaterThan(0);
		expect(await store.sweepStaleUploads(HOUR, Date.now() + HOUR + 60000)).toBeGreaterThan(0);
		expect(await stored.pendingUploads()).toEqual([]);

		// The services on the bucket: the same bytes, and the traces go on from where they were.
		cluster.baseEnv = { ...cluster.baseEnv, ...s3.env(bucket) };
		await respawn("accounts", "builds", "api");
		const down = await streamDownload(artifactsUrl(large), auth());
		expect([down.status, down.bytes, down.sha256]).toEqual([200, 48 * MiB, up.sha256]);
		const api = client(cluster.url, token);
		expect(Buffer.from(await (await fetch(artifactsUrl(small), { headers: auth() })).arrayBuffer()).equals(zip)).toBe(true);
		expect((await api.get(`/projects/${projectId}/builds/${small}/trace`)).text).toBe("$ make\nok\n");
		expect((await ci.trace(small, "more\n")).body).toEqual({ id: small, trace_size: 15 });
		expect((await api.get(`/projects/${projectId}/builds/${small}/trace`)).text).toBe("$ make\nok\nmore\n");
		// One file of the archive, read with ranged GETs of the object (v4).
		const entry = await fetch(`${cluster.url.replace("/api/v3", "/api/v4")}/projects/${projectId}/jobs/${small}/artifacts/report/summary.txt`, {
			headers: { ...auth(), Range: "bytes=10-19" },
		});
		expect([entry.status, entry.headers.get("content-range"), await entry.text()]).toEqual([206, "bytes 10-19/10000", "all green\n"]);
	}, 300000);
});

describe("kill -9 in the middle of a multipart upload", () => {
	/** A build with a previous artifact, and an upload of the next one half way (32 of 64 MiB sent, parts in the bucket) when it resolves. */
	async function halfWayUpload() {
		const buildId = await ci.build({ project_id: projectId });
		expect((await ci.upload(buildId, Buffer.from("previous artifact"), "prev.zip")).status).toBe(200);
		const [previous] = await stored.buildFiles(projectId, buildId);
		const { request: upload, outcome } = openUpload(`${cluster.url}/internal/builds/${buildId}/artifacts?filename=next.zip`, ci.headers, 64 * MiB);
		upload.write(Buffer.alloc(32 * MiB, 7));
		await waitFor(
			"a multipart upload to be under way",
			async () => (await stored.pendingUploads()).some(p => p.startsWith("multipart upload of ")),
			30000,
			20,
		);
		/** The previous artifact is what the build has and serves, and the only object of the build. */
		const previousIntact = async () => {
			const build = await client(cluster.url, token).get(`/projects/${projectId}/builds/${buildId}`);
			expect(build.body.artifacts_file).toEqual({ filename: "prev.zip", size: 17 });
			expect((await client(cluster.url, token).get(`/projects/${projectId}/builds/${buildId}/artifacts`)).text).toBe("previous artifact");
			expect(await stored.buildFiles(projectId, buildId)).toEqual([previous]);
		};
		return { upload, outcome, previousIntact };
	}

	it("of builds: the commit finds no builds service (503), the gateway removes what it wrote, the previous artifact stays", async () => {
		const { upload, outcome, previousIntact } = await halfWayUpload();
		await cluster.kill("builds", "SIGKILL");
		upload.end(Buffer.alloc(32 * MiB, 7));
		expect(await outcome).toBe("HTTP 503");
		expect(await stored.pendingUploads()).toEqual([]);
		await respawn("builds");
		await previousIntact();
	}, 120000);

	it("of the gateway writing it: nothing becomes visible; its marker and parts stay until the sweep removes them", async () => {
		const { upload, outcome, previousIntact } = await halfWayUpload();
		await cluster.kill("api", "SIGKILL");
		expect(await outcome).toMatch(/^error /);
		upload.destroy();
		const left = await stored.pendingUploads();
		expect(left).toEqual([expect.stringMatching(/^multipart upload of \d+\/\d+\/artifacts-/), expect.stringMatching(/^uploads\/\d+\/\d+\/artifacts-/)]);
		await respawn("api");
		await previousIntact();
		// The builds service's sweep (at its start and every 15 minutes) takes what has been idle an hour: not yet.
		expect(await store.sweepStaleUploads(HOUR)).toBe(0);
		expect(await stored.pendingUploads()).toEqual(left);
		expect(await store.sweepStaleUploads(HOUR, Date.now() + HOUR + 60000)).toBe(1);
		expect(await stored.pendingUploads()).toEqual([]);
		await previousIntact();
	}, 120000);
});

describe("the S3 server killed and started again under downloads", () => {
	it("every answer is the whole file, one cut short, or a 503 (none a 500, none wrong bytes); downloads are whole again once it is back", async () => {
		const size = 64 * MiB;
		const buildId = await ci.build({ project_id: projectId });
		expect((await streamUpload(`${cluster.url}/internal/builds/${buildId}/artifacts?filename=big.bin`, ci.headers, size)).status).toBe(200);
		const whole = sha256Of(size);
		const outcomes: string[] = [];
		let serverBack = false;
		const wholeAfter: boolean[] = [];
		const download = async () => {
			// A connection cut short rejects (an error of Node's own realm: not an instance of this one's Error).
			const res = await streamDownload(artifactsUrl(buildId), auth(), { perChunk: () => new Promise(r => setImmediate(r)) }).catch(() => null);
			if (!res) return "cut";
			if (res.status === 503) return "503";
			if (res.status === 200 && res.bytes === size && res.sha256 === whole) return "whole";
			if (res.status === 200 && res.bytes < size) return "cut";
			return `unexpected ${res.status} of ${res.bytes} bytes`;
		};
		const worker = async () => {
			for (;;) {
				const wasBack = serverBack;
				const outcome = await download();
				outcomes.push(outcome);
				if (wasBack && outcome === "whole") return wholeAfter.push(true);
			}
		};
		const workers = [worker(), worker(), worker()];
		// Under way, a few hundred milliseconds into their first downloads.
		await new Promise(r => setTimeout(r, 500));
		await s3.pause("SIGKILL");
		// Down for a while: downloads asked for meanwhile are 503s; a trace append too.
		const appendWhileDown = await ci.trace(buildId, "while down\n");
		await new Promise(r => setTimeout(r, 1500));
		await s3.resume();
		serverBack = true;
		await Promise.all(workers);
		expect(outcomes.filter(o => !["whole", "cut", "503"].includes(o))).toEqual([]);
		expect(outcomes.some(o => o !== "whole")).toBe(true);
		expect(wholeAfter).toEqual([true, true, true]);
		expect([appendWhileDown.status, appendWhileDown.body]).toEqual([503, { message: "503 Service Unavailable" }]);
		expect((await ci.trace(buildId, "back\n")).status).toBe(200);
		expect(cluster.logs("api")).toContain(`The artifacts bucket ${bucket} is unavailable`);
		expect(cluster.logs("api")).toMatch(new RegExp(`The artifacts bucket ${bucket} answers again`));
	}, 180000);
});

describe("downloads from the bucket itself (ARTIFACTS_S3_PROXY_DOWNLOAD=false)", () => {
	it("an artifacts download is a 302 to a presigned URL with GitLab's headers; its ETag answers 304; traces and entries stay streamed", async () => {
		// A second gateway, on its own port, with downloads redirected.
		const port = await freePort();
		await cluster.spawnNode("api-direct", "api", { PORT: String(port), ARTIFACTS_S3_PROXY_DOWNLOAD: "false" });
		await cluster.waitForGatewayToSeeAll();
		const direct = `http://127.0.0.1:${port}/api/v3`;
		const buildId = await ci.build({ project_id: projectId });
		const zip = await deflatedZip({ "dist/app.js": "console.log(1)\n" });
		expect((await ci.upload(buildId, zip, "dist.zip")).status).toBe(200);
		await ci.trace(buildId, "streamed\n");
		await waitFor("the second gateway to serve", async () => (await fetch(`${direct}/user`, { headers: auth() })).status === 200, 30000);

		const res = await fetch(`${direct}/projects/${projectId}/builds/${buildId}/artifacts`, { headers: auth(), redirect: "manual" });
		expect([res.status, res.headers.get("cache-control")]).toEqual([302, "no-store"]);
		const location = res.headers.get("location")!;
		expect(location).toMatch(new RegExp(`^${s3.endpoint}/${bucket}/${projectId}/${buildId}/artifacts-[a-z0-9]+-[0-9a-f]{16}\\?.*X-Amz-Expires=300`));
		const fetched = await fetch(location);
		expect([fetched.status, fetched.headers.get("content-disposition"), fetched.headers.get("content-type")]).toEqual([
			200,
			"attachment; filename=dist.zip",
			"application/octet-stream",
		]);
		expect(Buffer.from(await fetched.arrayBuffer()).equals(zip)).toBe(true);
		// Followed as a client follows it: the same bytes.
		expect(
			Buffer.from(await (await fetch(`${direct}/projects/${projectId}/builds/${buildId}/artifacts`, { headers: auth() })).arrayBuffer()).equals(zip),
		).toBe(true);
		const v4 = direct.replace("/api/v3", "/api/v4");
		expect((await fetch(`${v4}/projects/${projectId}/jobs/${buildId}/artifacts`, { headers: auth(), redirect: "manual" })).status).toBe(302);
		// The ETag the gateway gives is answered without a redirect.
		const etag = (await fetch(artifactsUrl(buildId), { headers: auth() })).headers.get("etag")!;
		const cached = await fetch(`${direct}/projects/${projectId}/builds/${buildId}/artifacts`, {
			headers: { ...auth(), "If-None-Match": etag },
			redirect: "manual",
		});
		expect([cached.status, cached.headers.get("etag")]).toEqual([304, etag]);
		const trace = await fetch(`${direct}/projects/${projectId}/builds/${buildId}/trace`, { headers: auth(), redirect: "manual" });
		expect([trace.status, await trace.text()]).toEqual([200, "streamed\n"]);
		const entry = await fetch(`${v4}/projects/${projectId}/jobs/${buildId}/artifacts/dist/app.js`, { headers: auth(), redirect: "manual" });
		expect([entry.status, await entry.text()]).toEqual([200, "console.log(1)\n"]);
		await cluster.kill("api-direct", "SIGTERM");
	}, 120000);
});

describe("removal", () => {
	it("erase removes the build's objects, the artifacts and every piece of the trace; the v4 DELETE removes the artifacts object", async () => {
		const erased = await ci.build({ project_id: projectId });
		await ci.drive(erased, "running");
		for (let i = 0; i < 5; i++) await ci.trace(erased, `line ${i}\n`);
		expect((await ci.upload(erased, Buffer.from("zip bytes"), "a.zip")).status).toBe(200);
		expect((await stored.buildFiles(projectId, erased)).length).toBe(6);
		await ci.state(erased, "success");
		// The finished build's trace becomes one object.
		await waitFor("the trace to be compacted", async () => (await stored.buildFiles(projectId, erased)).length === 2, 30000);
		expect((await stored.buildFiles(projectId, erased))[1]).toBe("trace/base-0000000005");
		expect((await client(cluster.url, token).get(`/projects/${projectId}/builds/${erased}/trace`)).text).toBe("line 0\nline 1\nline 2\nline 3\nline 4\n");
		expect((await client(cluster.url, token).post(`/projects/${projectId}/builds/${erased}/erase`)).status).toBe(201);
		expect(await stored.buildGone(projectId, erased)).toBe(true);

		const dropped = await ci.build({ project_id: projectId });
		expect((await ci.upload(dropped, Buffer.from("drop me"), "d.zip")).status).toBe(200);
		const v4 = client(cluster.url.replace("/api/v3", "/api/v4"), token);
		expect((await v4.del(`/projects/${projectId}/jobs/${dropped}/artifacts`)).status).toBe(204);
		expect(await stored.buildFiles(projectId, dropped)).toEqual([]);
	}, 60000);
});
