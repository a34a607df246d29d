/**
 * The production-s3 overlay (k8s/overlays/production-s3) as processes, as test/e2e/deploy/k8s-manifests.spec.ts
 * runs k8s/base (the mapping is test/support/manifest-cluster.ts's): its api, accounts and builds
 * Deployments run with exactly the rendered command and environment, the Secret filled in as an
 * operator fills secrets.env, and artifacts and traces go to a bucket of a real S3 server
 * (versitygw) that stands in for the overlay's endpoint. The pods mount nothing shared; an artifact
 * goes up through one and comes down through the other, a trace grows, and afterwards neither api's
 * nor builds' disk holds a byte of them.
 *
 * Stand-ins, as in the base test: each pod's data in the embedded store under its own DATA_DIR (no
 * MongoDB server runs here; MONGO_URI is emptied), the machine's NATS and Redis for the cluster's
 * (the production Redis is an outside address: CACHER is pointed at the local one), a NAMESPACE of
 * this run, one copy of the push streams, and the S3 server's address for ARTIFACTS_S3_ENDPOINT.
 */
import crypto from "crypto";
import { generateToken } from "../../../lib/crypto/tokens";
import { deleteJetStreamPush } from "../../../lib/push/provisioning";
import { TEST_PRODUCTION_SECRETS, find, ofKind, renderOverlay, runtimeImage, type K8sObject } from "../../support/deploy-manifests";
import { filesUnder, internalApi } from "../../support/builds";
import { createProject } from "../../support/fixtures";
import { client, waitFor } from "../../support/http";
import { ManifestCluster, podContainer, type RunningContainer } from "../../support/manifest-cluster";
import { S3Server } from "../../support/s3-server";
import { NATS_URL, REDIS_URL, requireServers, uniqueNamespace } from "../../support/servers";
import { DATABASE_FILE, MARKER_FILE, SHM_FILE, WAL_FILE } from "../../../lib/store/sqlite/store-files";

const namespace = uniqueNamespace("k8s-s3");
const image = runtimeImage();
const rootToken = generateToken();
const internalSecret = crypto.randomBytes(16).toString("hex");

let s3: S3Server;
let bucket: string;
let objects: K8sObject[];
let cluster: ManifestCluster;
const pods = new Map<string, RunningContainer>();

const apiUrl = () => {
	const api = pods.get("api")!;
	return `http://127.0.0.1:${api.local(Number(api.spec.env.PORT))}/api/v3`;
};

beforeAll(async () => {
	await requireServers("nats", "redis");
	s3 = await S3Server.start();
	bucket = await s3.createBucket();
	objects = renderOverlay("production-s3", {
		...TEST_PRODUCTION_SECRETS,
		INTERNAL_API_SECRET: internalSecret,
		GITLAB_ROOT_TOKEN: rootToken,
		MONGO_URI: "",
		ARTIFACTS_S3_BUCKET: bucket,
		ARTIFACTS_S3_ACCESS_KEY_ID: s3.accessKey,
		ARTIFACTS_S3_SECRET_ACCESS_KEY: s3.secretKey,
	});
	cluster = new ManifestCluster({
		standIns: { "nats:4222": new URL(NATS_URL).host },
		overrides: { NAMESPACE: namespace, PUSH_STREAM_REPLICAS: "1", CACHER: REDIS_URL, ARTIFACTS_S3_ENDPOINT: s3.endpoint },
	});
	for (const name of ["accounts", "builds", "api"])
		pods.set(
			name,
			await cluster.start(podContainer(objects, find(objects, "Deployment", name), image, `${name}-6f7c9d8b5-${crypto.randomBytes(3).toString("hex")}`)),
		);
	await Promise.all([...pods.values()].map(p => cluster.untilReady(p, 90000)));
	await waitFor("the gateway to reach accounts and builds", async () => (await client(apiUrl(), rootToken).get("/projects")).status === 200, 30000);
}, 180000);

afterAll(async () => {
	await cluster?.stop();
	await s3?.stop();
	await deleteJetStreamPush(NATS_URL, namespace);
});

it("renders no shared volume: api and builds mount only their own scratch directories", () => {
	expect(ofKind(objects, "PersistentVolumeClaim")).toEqual([]);
	for (const name of ["api", "builds"]) expect([name, pods.get(name)!.spec.mounts.filter(m => m.shared)]).toEqual([name, []]);
	expect(pods.get("api")!.env.ARTIFACTS_STORE).toBe("s3");
});

it("an artifact and a trace go to the bucket through different pods, and no pod's disk keeps a byte of them", async () => {
	const root = client(apiUrl(), rootToken);
	const project = await createProject(root);
	await waitFor("builds to be served", async () => (await root.get(`/projects/${project.id}/builds`)).status === 200, 30000);
	const ci = internalApi(apiUrl(), internalSecret);
	const id = await ci.build({ project_id: project.id });
	const bytes = crypto.randomBytes(12 * 1024 * 1024 + 5);
	expect((await ci.upload(id, bytes, "artifacts.zip")).status).toBe(200);
	expect((await ci.trace(id, "$ make\nok\n")).status).toBe(200);
	const download = await fetch(`${apiUrl()}/projects/${project.id}/builds/${id}/artifacts`, { headers: { "PRIVATE-TOKEN": rootToken } });
	expect([download.status, Buffer.from(await download.arrayBuffer()).equals(bytes)]).toEqual([200, true]);
	expect((await root.get(`/projects/${project.id}/builds/${id}/trace`)).text).toBe("$ make\nok\n");

	const inBucket: { name: string; size: number }[] = [];
	for await (const o of s3.objects(bucket).list(`${project.id}/${id}/`)) inBucket.push({ name: o.name, size: o.size });
	expect(inBucket).toEqual([
		{ name: expect.stringMatching(new RegExp(`^${project.id}/${id}/artifacts-`)), size: bytes.length },
		{ name: `${project.id}/${id}/trace/0000000001`, size: 10 },
	]);
	// The gateway keeps nothing on its disk; builds only the embedded store standing in for MongoDB.
	expect(filesUnder(pods.get("api")!.env.DATA_DIR)).toEqual([]);
	const storeFiles = new Set([DATABASE_FILE, WAL_FILE, SHM_FILE, MARKER_FILE]);
	expect(filesUnder(pods.get("builds")!.env.DATA_DIR).filter(f => !storeFiles.has(f))).toEqual([]);
}, 60000);

it("SIGTERM stops every pod with exit code 0 within its terminationGracePeriodSeconds", async () => {
	for (const r of await cluster.terminateAll()) {
		expect([r.name, r.code, r.signal]).toEqual([r.name, 0, null]);
		expect(r.ms).toBeLessThan(r.graceMs);
	}
}, 60000);
