/**
 * docker-compose.yml, run as compose would run it but with local processes: every app service
 * (for each service whose file has landed) starts with the image's command and the environment the
 * file gives after interpolation, its own health check decides when it is healthy, a worker is
 * scaled to two replicas, and the gateway's published port serves the API.
 *
 * The container-to-local mapping is the one described in test/support/manifest-cluster.ts.
 * Specific to compose:
 * - Interpolation gets what an operator's shell or .env would give: root's token and password,
 *   SMTP_URL (a real SMTP server the test runs) and a NAMESPACE unique to this run (the machine's
 *   NATS and Redis are shared by parallel test runs). Everything else is the file's default.
 * - MONGO_URI is emptied: no MongoDB server can run on these machines (docs/architecture.md#back-ends), so each
 *   container keeps its data in the embedded SQLite store under its own DATA_DIR (its tmpfs).
 * - The s3 service is a versitygw the test runs (test/support/s3-server.ts) with the file's keys and
 *   bucket, standing in for s3:7070 as the machine's NATS and Redis stand in for theirs.
 * - The declared ports of a container are the image's EXPOSE list plus its published ports.
 * - Node IDs are Moleculer's default, `<hostname>-<pid>`, as in a container (whose hostname is its ID).
 */
import crypto from "crypto";
import os from "os";
import { generateToken } from "../../../lib/crypto/tokens";
import { deleteJetStreamPush } from "../../../lib/push/provisioning";
import { PLANNED_SERVICES, composeEnv, loadCompose, runtimeImage, serviceFiles } from "../../support/deploy-manifests";
import { internalApi } from "../../support/builds";
import { createProject } from "../../support/fixtures";
import { client } from "../../support/http";
import { ClusterObserver, ManifestCluster, serviceNames, type ContainerSpec, type RunningContainer } from "../../support/manifest-cluster";
import { S3Server } from "../../support/s3-server";
import { NATS_URL, REDIS_URL, requireServers, uniqueNamespace } from "../../support/servers";
import { startSmtpSink, type SmtpSink } from "../../support/peers/smtp-sink";

const namespace = uniqueNamespace("compose");
const image = runtimeImage();
const landed = new Set(serviceFiles());
const rootToken = generateToken();
const rootPassword = "e2e-" + crypto.randomBytes(8).toString("hex");

let compose: any;
let cluster: ManifestCluster;
let observer: ClusterObserver;
let smtp: SmtpSink;
let s3: S3Server;
let expectedService: Record<string, string>;
const containers: RunningContainer[] = [];

const appServiceNames = () => Object.keys(compose.services).filter(name => composeEnv(compose.services[name]).SERVICES !== undefined);
const servicesOf = (name: string) => composeEnv(compose.services[name]).SERVICES;
const startedNames = () => appServiceNames().filter(name => landed.has(servicesOf(name)));
/** The worker scaled to two replicas (`docker compose up --scale <it>=2`). */
const scaled = () => startedNames().find(name => servicesOf(name).startsWith("workers/")) ?? startedNames().find(name => name !== "api")!;
const seconds = (duration: string | undefined, fallback: number) => (duration ? Number(/^(\d+)s$/.exec(duration)![1]) : fallback);

function containerSpec(name: string): ContainerSpec {
	const s = compose.services[name];
	const entrypoint: string[] = s.entrypoint ?? image.entrypoint;
	const cmd: string[] = s.command ?? (s.entrypoint ? [] : image.cmd);
	const published = (s.ports ?? []).map((p: string) => Number(String(p).split(":").pop()!.split("/")[0]));
	const mounts = [
		...(s.tmpfs ?? []).map((p: string) => ({ path: p, volume: `tmpfs${p}`, shared: false })),
		...(s.volumes ?? []).map((v: string) => {
			const [source, target] = v.split(":");
			if (source.startsWith(".") || source.startsWith("/")) throw new Error(`${name}: bind mounts are not expected (${v})`);
			return { path: target, volume: `volume/${source}`, shared: true };
		}),
	];
	return {
		name,
		services: servicesOf(name),
		argv: [...entrypoint, ...cmd],
		workdir: s.working_dir ?? image.workdir,
		env: { ...image.env, ...composeEnv(s) },
		ports: [...new Set([...image.exposed, ...published])],
		mounts,
		probes: [],
		healthcheck: s.healthcheck?.test,
		graceSeconds: seconds(s.stop_grace_period, 10),
	};
}

const nodeIdOf = (c: RunningContainer) => `${os.hostname().toLowerCase()}-${c.child.pid}`;

beforeAll(async () => {
	await requireServers("nats", "redis");
	smtp = await startSmtpSink();
	compose = loadCompose({ GITLAB_ROOT_TOKEN: rootToken, GITLAB_ROOT_PASSWORD: rootPassword, SMTP_URL: smtp.url, NAMESPACE: namespace });
	const bucketOf = compose.services.s3.environment;
	s3 = await S3Server.start({ accessKey: bucketOf.ROOT_ACCESS_KEY, secretKey: bucketOf.ROOT_SECRET_KEY });
	await s3.createBucket(bucketOf.BUCKET);
	cluster = new ManifestCluster({
		standIns: { "nats:4222": new URL(NATS_URL).host, "redis:6379": new URL(REDIS_URL).host, "s3:7070": `127.0.0.1:${s3.port}` },
		overrides: { MONGO_URI: "" },
	});
	expectedService = serviceNames(cluster.appRoot, image.env.SERVICEDIR, startedNames().map(servicesOf));
	for (const name of [...startedNames(), scaled()]) containers.push(await cluster.start(containerSpec(name)));
	await Promise.all(containers.map(c => cluster.until(c, "its health check", () => cluster.healthcheck(c), 90000)));
	observer = new ClusterObserver(namespace, NATS_URL);
	await observer.start();
	await observer.settle(Object.fromEntries(containers.map(c => [nodeIdOf(c), [expectedService[c.spec.services]]])));
}, 180000);

afterAll(async () => {
	await observer?.stop();
	await cluster?.stop();
	await smtp?.stop();
	await s3?.stop();
	// The push channel's JetStream streams of this run's namespace (the machine's NATS is shared).
	await deleteJetStreamPush(NATS_URL, namespace);
});

describe("docker-compose.yml services as processes", () => {
	it("cover every landed service; the rest are services of the design still to land", () => {
		expect(startedNames().map(servicesOf).sort()).toEqual([...landed].sort());
		for (const name of appServiceNames().filter(n => !startedNames().includes(n))) expect(PLANNED_SERVICES).toContain(servicesOf(name));
	});

	it("run the image's command with the file's environment and pass their own health checks", async () => {
		for (const c of containers) {
			expect(c.child.exitCode).toBeNull();
			expect(c.spec.argv).toEqual([...image.entrypoint, ...image.cmd]);
			expect([c.spec.name, await cluster.healthcheck(c)]).toEqual([c.spec.name, true]);
		}
	});

	it("each container hosts exactly its service; the scaled worker's two replicas have node IDs of their own", () => {
		expect(observer.servicesByNode()).toEqual(Object.fromEntries(containers.map(c => [nodeIdOf(c), [expectedService[c.spec.services]]])));
		const replicas = containers.filter(c => c.spec.name === scaled());
		expect(replicas).toHaveLength(2);
		expect(new Set(replicas.map(nodeIdOf)).size).toBe(2);
	});

	it("the gateway's published port serves the API with the root account from the environment", async () => {
		const api = containers.find(c => c.spec.name === "api")!;
		const [published] = compose.services.api.ports as string[];
		const url = `http://127.0.0.1:${api.local(Number(published.split(":")[1]))}/api/v3`;
		const root = client(url, rootToken);
		const me = await root.get("/user");
		expect(me.status).toBe(200);
		expect(me.body).toMatchObject({ id: 1, username: "root", private_token: rootToken });
		const project = await createProject(root);
		if (landed.has("labels")) {
			const label = await root.post(`/projects/${project.id}/labels`, { body: { name: "compose", color: "#00FF00" } });
			expect(label.status).toBe(200);
			expect((await root.get(`/projects/${project.id}/labels`)).body.map((l: any) => l.name)).toEqual(["compose"]);
		}
		if (landed.has("builds")) {
			// Artifacts go to the s3 service's bucket: nothing is shared between api and builds but it.
			const ci = internalApi(url, composeEnv(compose.services.api).INTERNAL_API_SECRET);
			const id = await ci.build({ project_id: project.id });
			const bytes = crypto.randomBytes(100 * 1024);
			expect((await ci.upload(id, bytes, "a.zip")).status).toBe(200);
			expect(
				Buffer.from(
					await (await fetch(`${url}/projects/${project.id}/builds/${id}/artifacts`, { headers: { "PRIVATE-TOKEN": rootToken } })).arrayBuffer(),
				).equals(bytes),
			).toBe(true);
			const objects: string[] = [];
			for await (const o of s3.objects(compose.services.s3.environment.BUCKET).list(`${project.id}/${id}/`)) objects.push(o.name);
			expect(objects).toEqual([expect.stringMatching(new RegExp(`^${project.id}/${id}/artifacts-`))]);
		}
	});
});

describe("graceful stop", () => {
	it("SIGTERM stops every container with exit code 0 within its stop_grace_period", async () => {
		for (const r of await cluster.terminateAll()) {
			expect([r.name, r.code, r.signal]).toEqual([r.name, 0, null]);
			expect(r.ms).toBeLessThan(r.graceMs);
		}
	}, 120000);
});
