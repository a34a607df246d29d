/**
 * API v4's job artifacts (services/modules/builds/job-artifacts.v4.ts, gateway/files/artifact-entry-download.ts)
 * on one in-process broker: the archive by job and by ref (the named job of the ref's latest
 * successful pipeline), one file out of a stored and a deflated archive (ranges, 304, 416, HEAD),
 * keep, and DELETE (204), with the statuses GitLab gives.
 */
import { config } from "../../../config";
import { storedZip } from "../../../scripts/zip";
import AccountsService from "../../../services/accounts.service";
import ApiService from "../../../services/api.service";
import BuildsService from "../../../services/builds.service";
import { internalApi, SHA_A, SHA_B, type InternalApi } from "../../support/builds";
import { startLocal, type LocalStack } from "../../support/broker";
import { addMember, createProject, createUser, type TestUser } from "../../support/fixtures";
import { waitFor, type Client } from "../../support/http";
import { openFiles } from "../../support/open-files";
import { deflatedZip } from "../../support/zips";

let stack: LocalStack;
let ci: InternalApi;
let owner: TestUser;
let developer: TestUser;
let projectId: number;
let v4: Client;
const base = () => `/projects/${projectId}/jobs`;

const BIG = Buffer.from("0123456789abcdef".repeat(4096));
let storedJob: number;
let deflatedJob: number;

beforeAll(async () => {
	stack = await startLocal([ApiService, AccountsService, BuildsService]);
	ci = internalApi(stack.url, config.internalApiSecret);
	owner = await createUser(stack.api());
	developer = await createUser(stack.api());
	projectId = (await createProject(stack.api(owner.token))).id;
	await addMember(stack.api(owner.token), projectId, developer.id, 30);
	v4 = stack.v4(owner.token);
	// release/1.0: an older successful pipeline (SHA_A), then a newer one (SHA_B); master: a failed one.
	storedJob = await ci.build({ project_id: projectId, name: "build one", ref: "release/1.0", sha: SHA_A });
	await ci.drive(storedJob, "success");
	expect((await ci.upload(storedJob, storedZip([{ name: "dir/a b.txt", data: Buffer.from("old") }]), "old.zip")).status).toBe(200);
	deflatedJob = await ci.build({ project_id: projectId, name: "build one", ref: "release/1.0", sha: SHA_B });
	await ci.drive(deflatedJob, "success");
	expect((await ci.upload(deflatedJob, await deflatedZip({ "dir/a b.txt": "hello from the zip", "big.txt": BIG.toString() }), "new.zip")).status).toBe(200);
	const failed = await ci.build({ project_id: projectId, name: "build one", ref: "master" });
	await ci.drive(failed, "failed");
});

afterAll(() => stack?.stop());

it("downloads the archive by job, streamed with the download headers", async () => {
	const res = await v4.get(`${base()}/${storedJob}/artifacts`);
	expect([res.status, res.headers.get("content-disposition"), res.headers.get("accept-ranges")]).toEqual([200, "attachment; filename=old.zip", "bytes"]);
	expect((await v4.get(`${base()}/999999/artifacts`)).status).toBe(404);
});

it("downloads the ref's latest successful pipeline's job, slashes in the ref encoded or not", async () => {
	for (const ref of ["release%2F1.0", "release/1.0"]) {
		const res = await v4.get(`${base()}/artifacts/${ref}/download`, { query: { job: "build one" } });
		expect([ref, res.status, res.headers.get("content-disposition")]).toEqual([ref, 200, "attachment; filename=new.zip"]);
	}
	const missingJob = await v4.get(`${base()}/artifacts/release%2F1.0/download`);
	expect([missingJob.status, missingJob.body]).toEqual([400, { error: "job is missing" }]);
	for (const [ref, job] of [
		["master", "build one"],
		["release%2F1.0", "other"],
		["nothing", "build one"],
	]) {
		const res = await v4.get(`${base()}/artifacts/${ref}/download`, { query: { job } });
		expect([ref, job, res.status, res.body]).toEqual([ref, job, 404, { message: "404 Not found" }]);
	}
});

it("sends one file out of a stored or a deflated archive, with ranges, 304 and 416", async () => {
	const stored = await v4.get(`${base()}/${storedJob}/artifacts/dir/a%20b.txt`);
	expect([stored.status, stored.text, stored.headers.get("content-type"), stored.headers.get("content-disposition")]).toEqual([
		200,
		"old",
		"application/octet-stream",
		"attachment; filename=\"a b.txt\"; filename*=UTF-8''a%20b.txt",
	]);
	const byRef = await v4.get(`${base()}/artifacts/release%2F1.0/raw/dir%2Fa%20b.txt`, { query: { job: "build one" } });
	expect([byRef.status, byRef.text]).toEqual([200, "hello from the zip"]);
	const unencoded = await v4.get(`${base()}/artifacts/release/1.0/raw/dir/a%20b.txt`, { query: { job: "build one" } });
	expect([unencoded.status, unencoded.text]).toEqual([200, "hello from the zip"]);

	const big = `${base()}/${deflatedJob}/artifacts/big.txt`;
	const whole = await v4.get(big);
	expect([whole.status, whole.headers.get("content-length"), whole.text === BIG.toString()]).toEqual([200, String(BIG.length), true]);
	const part = await v4.get(big, { headers: { Range: "bytes=40000-40009" } });
	expect([part.status, part.text, part.headers.get("content-range")]).toEqual([
		206,
		BIG.subarray(40000, 40010).toString(),
		`bytes 40000-40009/${BIG.length}`,
	]);
	const storedPart = await v4.get(`${base()}/${storedJob}/artifacts/dir/a%20b.txt`, { headers: { Range: "bytes=-2" } });
	expect([storedPart.status, storedPart.text]).toEqual([206, "ld"]);
	const cached = await v4.get(big, { headers: { "If-None-Match": whole.headers.get("etag")! } });
	expect([cached.status, cached.text]).toEqual([304, ""]);
	const past = await v4.get(big, { headers: { Range: `bytes=${BIG.length}-` } });
	expect([past.status, past.body, past.headers.get("content-range")]).toEqual([
		416,
		{ message: "416 Requested Range Not Satisfiable" },
		`bytes */${BIG.length}`,
	]);
	const head = await v4.request("HEAD", big);
	expect([head.status, head.headers.get("content-length"), head.text]).toEqual([200, String(BIG.length), ""]);

	const none = await v4.get(`${base()}/${deflatedJob}/artifacts/not/there.txt`);
	expect([none.status, none.body]).toEqual([404, { message: "404 Not Found" }]);
	const dir = await v4.get(`${base()}/${deflatedJob}/artifacts/dir/`);
	expect(dir.status).toBe(404);
	const nul = await v4.get(`${base()}/${deflatedJob}/artifacts/a%00b`);
	expect([nul.status, nul.body]).toEqual([400, { message: "400 Bad request" }]);
});

it("closes the archive after every way out: a whole file, a range, a client that leaves, a file that is not there", async () => {
	const archives = () => openFiles(file => file.startsWith(`${config.artifactsDir}/${projectId}/`));
	const url = `${stack.v4Url}${base()}/${deflatedJob}/artifacts/big.txt`;
	const headers = { "PRIVATE-TOKEN": owner.token };
	for (let i = 0; i < 3; i++) {
		await (await fetch(url, { headers })).arrayBuffer();
		await (await fetch(url, { headers: { ...headers, Range: "bytes=100-200" } })).arrayBuffer();
		await (await fetch(`${stack.v4Url}${base()}/${deflatedJob}/artifacts/none`, { headers })).arrayBuffer();
		const leaving = new AbortController();
		const res = await fetch(url, { headers, signal: leaving.signal });
		leaving.abort();
		await res.arrayBuffer().catch(() => undefined);
	}
	await waitFor("every archive to be closed", () => archives() === 0, 5000, 20);
});

it("keeps (200, the job) and deletes (204; maintainers only) a job's artifacts", async () => {
	const kept = await v4.post(`${base()}/${storedJob}/artifacts/keep`);
	expect([kept.status, kept.body.id, kept.body.artifacts_file]).toEqual([200, storedJob, { filename: "old.zip", size: expect.any(Number) }]);
	expect((await stack.v4(developer.token).del(`${base()}/${storedJob}/artifacts`)).status).toBe(403);
	const deleted = await v4.del(`${base()}/${storedJob}/artifacts`, { body: {} });
	expect([deleted.status, deleted.text]).toEqual([204, ""]);
	expect((await v4.get(`${base()}/${storedJob}/artifacts`)).status).toBe(404);
	expect((await v4.post(`${base()}/${storedJob}/artifacts/keep`)).status).toBe(404);
	expect((await v4.get(`${base()}/${storedJob}`)).body.artifacts).toEqual([]);
	// Again: nothing to delete, still 204.
	expect((await v4.del(`${base()}/${storedJob}/artifacts`)).status).toBe(204);
});
