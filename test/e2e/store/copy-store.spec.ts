/**
 * From one machine to a cluster and back, as docs/operations.md gives it: the all-in-one process's
 * embedded store (projects, labels, a deleted label's burnt id, deploy keys, snippets, builds of
 * two projects with their numbers, a trace and artifacts, an integration's encrypted secrets) copied
 * by `npm run copy-store -- --to <uri>` into MongoDB (a FerretDB started here), a copy cut by
 * kill -9 and run again, the service started on MongoDB with SECRETS_KEY set to the generated key
 * and the artifacts directory copied: every record, file and secret there, ids and build numbers
 * going on where they stopped, no id given twice. Then `--from` back into an empty DATA_DIR. The
 * copy refuses a DATA_DIR a service uses and a non-empty target unless --force (lib/store/copy/).
 */
import crypto from "crypto";
import fs from "fs";
import os from "os";
import path from "path";
import { seedIntoStore } from "../../../scripts/seed-store";
import { startCluster, type Cluster } from "../../support/cluster";
import { internalApi } from "../../support/builds";
import { createProject } from "../../support/fixtures";
import { client, waitFor, type Client } from "../../support/http";
import { startMongoServer, type MongoServer } from "../../support/mongo-server";
import { npmRun, startNpm } from "../../support/operator";
import { freePort } from "../../support/processes";
import { ed25519Line } from "../../support/ssh-keys";

let cluster: Cluster;
let mongo: MongoServer;
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "glv3-copy-e2e-"));
const artifactBytes = crypto.randomBytes(100 * 1024);
/** FerretDB reads a whole collection for each query (docs/storage.md): enough to cut a copy in the middle, few enough for it. */
const SEEDED = 1000;
let projects: number[] = [];
let withFiles = 0;
/** What the embedded service answered, read back through the one on MongoDB (and back again). */
let before: Record<string, unknown> = {};

/** What a client sees of the data: every list, a snippet's content, the files, the user. */
async function seen(api: Client, url: string): Promise<Record<string, unknown>> {
	const all = async (p: string) => {
		const first = await api.get(p, { query: { per_page: 100 } });
		const pages = Number(first.headers.get("x-total-pages"));
		const rows = [...(first.body as unknown[])];
		for (let page = 2; page <= pages; page++) rows.push(...((await api.get(p, { query: { per_page: 100, page } })).body as unknown[]));
		return { total: first.headers.get("x-total"), rows };
	};
	const [p1, p2] = projects;
	const download = await fetch(`${url}/projects/${p1}/builds/${withFiles}/artifacts`, { headers: { "PRIVATE-TOKEN": cluster.rootToken } });
	return {
		user: (await api.get("/user")).body,
		projects: (await all("/projects")).rows,
		labels: await all(`/projects/${p1}/labels`),
		keys: await all(`/projects/${p1}/keys`),
		snippets: await all(`/projects/${p1}/snippets`),
		raw: (await api.get(`/projects/${p1}/snippets/1/raw`)).text,
		buildsFirst: (await api.get(`/projects/${p1}/builds`, { query: { per_page: 100 } })).body,
		buildsTotal: (await api.get(`/projects/${p1}/builds`)).headers.get("x-total"),
		buildsSecond: await all(`/projects/${p2}/builds`),
		trace: (await api.get(`/projects/${p1}/builds/${withFiles}/trace`)).text,
		artifacts:
			download.status === 200
				? crypto
						.createHash("sha256")
						.update(Buffer.from(await download.arrayBuffer()))
						.digest("hex")
				: download.status,
		integration: (await api.get(`/projects/${p1}/services/push-notifications`)).body,
	};
}

async function labelId(api: Client, projectId: number, name: string): Promise<number> {
	const labels = (await api.get(`/projects/${projectId}/labels`, { query: { per_page: 100 } })).body as { id: number; name: string }[];
	return labels.find(l => l.name === name)!.id;
}

async function serviceOn(name: string, env: Record<string, string>): Promise<{ api: Client; url: string }> {
	const port = await freePort();
	await cluster.spawnNode(name, "", { PORT: String(port), ...env });
	const url = `http://127.0.0.1:${port}/api/v3`;
	const api = client(url, cluster.rootToken);
	await waitFor("the service to answer", async () => (await api.get("/user")).status === 200, 30000);
	return { api, url };
}

beforeAll(async () => {
	mongo = await startMongoServer();
	// No SECRETS_KEY: generated into DATA_DIR/.secrets-key, what the cluster must then be given.
	cluster = await startCluster({ nodes: { all: "" }, nats: false, env: { SECRETS_KEY: "", RATE_LIMIT_PER_MINUTE: "0" } });
	const api = cluster.api();
	projects = [(await createProject(api)).id, (await createProject(api)).id];
	const [p1, p2] = projects;
	for (const name of ["bug", "feature", "gone"]) expect((await api.post(`/projects/${p1}/labels`, { body: { name, color: "#428BCA" } })).status).toBe(200);
	// The last label deleted: its id was handed out and must never come back.
	expect((await api.del(`/projects/${p1}/labels`, { query: { name: "gone" } })).status).toBe(200);
	expect((await api.post(`/projects/${p1}/keys`, { body: { title: "deploy", key: ed25519Line("deploy") } })).status).toBe(201);
	expect((await api.post(`/projects/${p1}/snippets`, { body: { title: "notes", file_name: "a.md", code: "# ünïcode €", visibility_level: 0 } })).status).toBe(
		201,
	);
	expect((await api.put(`/projects/${p1}/services/push-notifications`, { body: { api_key: "k-secret", user_key: "u-secret", priority: 0 } })).status).toBe(
		200,
	);
	const ci = internalApi(cluster.url, cluster.internalSecret);
	withFiles = await ci.build({ project_id: p1, name: "with-files" });
	await ci.drive(withFiles, "running");
	expect((await ci.trace(withFiles, "step one\nstep two\n")).status).toBe(200);
	expect((await ci.upload(withFiles, artifactBytes, "files.zip")).status).toBe(200);
	for (let i = 0; i < 3; i++) await ci.build({ project_id: p2, name: `second-${i}` });
	// Enough builds that a copy takes a while: one cut short is cut in the middle.
	await seedIntoStore(
		cluster.dataDir,
		p1,
		SEEDED,
		i => ({ body: { name: `seeded-${i}`, stage: "test", ref: "master", tag: false, commit: seededCommit(i) }, status: "success" }),
		() => undefined,
	);
	before = await seen(api, cluster.url);
}, 300000);

function seededCommit(i: number) {
	const sha = crypto.createHash("sha1").update(String(i)).digest("hex");
	return { id: sha, title: "Seeded", message: "Seeded", author_name: "Ada", author_email: "ada@example.com", created_at: "2026-01-01T00:00:00.000Z" };
}

afterAll(async () => {
	await cluster?.stop();
	await mongo?.stop();
	fs.rmSync(scratch, { recursive: true, force: true });
}, 60000);

it("copies the store into MongoDB, resumed after kill -9; the service on MongoDB holds every record, file and secret, ids going on; and back", async () => {
	const uri = mongo.database("moved");
	const inUse = await npmRun("copy-store", ["--to", uri], cluster.baseEnv);
	expect(inUse.code).toBe(1);
	expect(inUse.stderr).toBe(
		`copy-store: ${path.join(cluster.dataDir, "store.sqlite")} is open in another process: a service (or another tool) uses DATA_DIR=${cluster.dataDir}; ` +
			`stop every process on it before copying it into MongoDB\n`,
	);
	expect(await cluster.kill("all", "SIGTERM")).toBe(0);

	// Cut by kill -9 once it has copied a collection, then run again: it goes on.
	const first = startNpm("copy-store", ["--to", uri], cluster.baseEnv);
	await waitFor("a collection copied", () => /^ {2}\S+: \d+ documents/m.test(first.stdout()), 120000, 20);
	first.kill("SIGKILL");
	const killed = await first.result;
	// Cut in the middle: it had not got to its comparison.
	expect(killed.stdout).not.toContain("Compared:");
	const again = await npmRun("copy-store", ["--to", uri], cluster.baseEnv);
	expect(again.stderr).toBe("");
	expect(again.code).toBe(0);
	expect(again.stdout).toMatch(/Taking up the copy begun at \S+ where it stopped\./);
	expect(again.stdout).toMatch(/Compared: (\d+) of \1 documents equal in \d+ collections; the id counters of \d+ collections carried over\./);
	const key = fs.readFileSync(path.join(cluster.dataDir, ".secrets-key"), "utf8");
	expect(again.stdout).toContain(`give every node of the cluster SECRETS_KEY set to its contents`);

	// Run again on the finished copy: a target that holds data is refused.
	const refused = await npmRun("copy-store", ["--to", uri], cluster.baseEnv);
	expect(refused.code).toBe(1);
	expect(refused.stderr).toMatch(
		/^copy-store: MongoDB mongodb:\/\/\S+ is not empty \(documents in .*\): copy into an empty target, or add --force to empty it first\n$/,
	);

	// The cluster side: MongoDB, the same key, the artifacts volume copied from DATA_DIR/artifacts.
	const clusterData = path.join(scratch, "cluster-data");
	fs.cpSync(path.join(cluster.dataDir, "artifacts"), path.join(clusterData, "artifacts"), { recursive: true });
	const moved = await serviceOn("on-mongo", { MONGO_URI: uri, SECRETS_KEY: key, DATA_DIR: clusterData });
	expect(await seen(moved.api, moved.url)).toEqual(before);
	const [p1, p2] = projects;
	// Ids go on after the highest ever handed out (the deleted label's too), build numbers after the project's last.
	const labelIds = (before.labels as { rows: { id: number }[] }).rows.map(l => l.id);
	expect((await moved.api.post(`/projects/${p1}/labels`, { body: { name: "on-mongo", color: "#000000" } })).status).toBe(200);
	const onMongo = await labelId(moved.api, p1, "on-mongo");
	expect(onMongo).toBe(Math.max(...labelIds) + 2);
	const ci = internalApi(moved.url, cluster.internalSecret);
	const build = await ci.create({ project_id: p2, name: "on-mongo" });
	expect({ status: build.status, log: build.status === 201 ? "" : cluster.logs("on-mongo").slice(-4000) }).toEqual({ status: 201, log: "" });
	const second = await moved.api.get(`/projects/${p2}/builds`);
	expect(second.headers.get("x-total")).toBe("4");
	expect(build.body.id).toBeGreaterThan(withFiles + SEEDED);
	expect(await cluster.kill("on-mongo", "SIGTERM")).toBe(0);

	// And back: MongoDB into an empty DATA_DIR, the artifacts copied back.
	const home = path.join(scratch, "home");
	fs.cpSync(path.join(clusterData, "artifacts"), path.join(home, "artifacts"), { recursive: true });
	const back = await npmRun("copy-store", ["--from", uri], { ...cluster.baseEnv, DATA_DIR: home });
	expect(back.stderr).toBe("");
	expect(back.code).toBe(0);
	const embedded = await serviceOn("back-home", { DATA_DIR: home, SECRETS_KEY: key });
	const afterMove = await seen(embedded.api, embedded.url);
	expect((afterMove.labels as { rows: { name: string }[] }).rows.map(l => l.name)).toEqual(["bug", "feature", "on-mongo"]);
	expect(afterMove.buildsSecond).toMatchObject({ total: "4" });
	expect({ ...afterMove, labels: before.labels, buildsSecond: before.buildsSecond }).toEqual(before);
	expect((await embedded.api.post(`/projects/${p1}/labels`, { body: { name: "home-again", color: "#000000" } })).status).toBe(200);
	expect(await labelId(embedded.api, p1, "home-again")).toBe(onMongo + 1);
}, 600000);
