/**
 * The manifest-driven cluster test: every Deployment that `kubectl kustomize k8s/base` renders
 * (for each service whose file has landed) runs as a local process with exactly the command and
 * environment the manifest gives — the image's CMD, the ConfigMap, the Secret, the pod's env — and
 * then the API is driven end to end through the gateway, over the real NATS and Redis on loopback.
 * A Deployment that names a wrong service, misses a variable, points a probe at the wrong port or
 * runs a bad command fails here.
 *
 * How a pod becomes a process (the container-to-local mapping) is described in
 * test/support/manifest-cluster.ts. Specific to this test:
 * - The Secret template is filled in as an operator would (every key it has, nothing else):
 *   generated secrets, SMTP_URL pointing at a real SMTP server the test runs, and MONGO_URI empty,
 *   because no MongoDB server can run on these machines (docs/architecture.md#back-ends): each pod keeps its data
 *   in the embedded SQLite store under its own DATA_DIR (its emptyDir), as pods do without MongoDB.
 * - NAMESPACE is set to a name unique to this run, because the machine's NATS and Redis are shared
 *   by parallel test runs; every other value is the manifest's.
 * - NODE_ID is the pod name the downward API would give (`<deployment>-<hash>-<suffix>`).
 * - PUSH_STREAM_REPLICAS is 1: the loopback NATS standing in for the 3-node StatefulSet is a single
 *   server, which cannot hold three copies of a stream.
 */
import crypto from "crypto";
import fs from "fs";
import path from "path";
import { generateToken } from "../../../lib/crypto/tokens";
import { deleteJetStreamPush } from "../../../lib/push/provisioning";
import {
	PLANNED_SERVICES,
	appContainer,
	find,
	literalEnv,
	ofKind,
	portNumber,
	renderOverlay,
	runtimeImage,
	serviceFiles,
	type K8sObject,
} from "../../support/deploy-manifests";
import { client, waitFor, type Client } from "../../support/http";
import { ClusterObserver, ManifestCluster, podContainer, serviceNames, type ContainerSpec, type RunningContainer } from "../../support/manifest-cluster";
import { NATS_URL, REDIS_URL, requireServers, uniqueNamespace } from "../../support/servers";
import { startSmtpSink, type SmtpSink } from "../../support/peers/smtp-sink";
import { createProject } from "../../support/fixtures";

const namespace = uniqueNamespace("k8s");
const image = runtimeImage();
const landed = new Set(serviceFiles());
const rootToken = generateToken();
const rootPassword = "e2e-" + crypto.randomBytes(8).toString("hex");
const internalSecret = crypto.randomBytes(16).toString("hex");

let objects: K8sObject[];
let cluster: ManifestCluster;
let smtp: SmtpSink;
let observer: ClusterObserver;
const pods = new Map<string, RunningContainer>();
const podNames = new Map<string, string>();
let expectedService: Record<string, string>;

const appDeployments = () =>
	ofKind(objects, "Deployment").filter(d => d.spec.template.spec.containers.some((c: any) => c.name === "app" && literalEnv(c, "SERVICES")));
const servicesOf = (d: K8sObject) => literalEnv(appContainer(d), "SERVICES")!;
const started = () => appDeployments().filter(d => landed.has(servicesOf(d)));
const podSuffix = () => `${crypto.randomBytes(5).toString("hex").slice(0, 9)}-${crypto.randomBytes(3).toString("hex").slice(0, 5)}`;

/** The Secret template filled in: every key it has gets a value, and only those. */
function fillSecretTemplate(rendered: K8sObject[], values: Record<string, string>): K8sObject[] {
	const template = find(rendered, "Secret", "gitlab-secrets");
	const keys = Object.keys({ ...template.stringData, ...template.data }).sort();
	if (JSON.stringify(keys) !== JSON.stringify(Object.keys(values).sort()))
		throw new Error(
			`the Secret template's keys ${keys.join(",")} differ from the values this test fills in (${Object.keys(values).sort().join(",")}): ` +
				"decide a value for each",
		);
	return rendered.map(o => (o === template ? { ...o, data: undefined, stringData: values } : o));
}

/** A Deployment's pod as the kubelet would run its container, under a pod name of its own. */
function podSpec(d: K8sObject): ContainerSpec {
	const podName = `${d.metadata.name}-${podSuffix()}`;
	podNames.set(d.metadata.name, podName);
	return podContainer(objects, d, image, podName);
}

/** pod name (node ID) → the Moleculer services it should host: the one its SERVICES names. */
const expectedServicesByNode = () => Object.fromEntries(started().map(d => [podNames.get(d.metadata.name)!, [expectedService[servicesOf(d)]]]));

beforeAll(async () => {
	await requireServers("nats", "redis");
	smtp = await startSmtpSink();
	objects = fillSecretTemplate(renderOverlay("base"), {
		SECRETS_KEY: crypto.randomBytes(24).toString("base64url"),
		INTERNAL_API_SECRET: internalSecret,
		GITLAB_ROOT_PASSWORD: rootPassword,
		GITLAB_ROOT_TOKEN: rootToken,
		MONGO_URI: "",
		SMTP_URL: smtp.url,
		// The filesystem store and Redis by its URL: the bucket's and Sentinel's secrets stay empty.
		ARTIFACTS_S3_BUCKET: "",
		ARTIFACTS_S3_ACCESS_KEY_ID: "",
		ARTIFACTS_S3_SECRET_ACCESS_KEY: "",
		REDIS_PASSWORD: "",
		REDIS_SENTINEL_PASSWORD: "",
	});
	cluster = new ManifestCluster({
		standIns: { "nats:4222": new URL(NATS_URL).host, "redis:6379": new URL(REDIS_URL).host },
		overrides: { NAMESPACE: namespace, PUSH_STREAM_REPLICAS: "1" },
	});
	expectedService = serviceNames(cluster.appRoot, image.env.SERVICEDIR, started().map(servicesOf));
	for (const d of started()) pods.set(d.metadata.name, await cluster.start(podSpec(d)));
	await Promise.all([...pods.values()].map(p => cluster.untilReady(p, 90000)));
	observer = new ClusterObserver(namespace, NATS_URL);
	await observer.start();
	// Ready pods announce their services over NATS; wait until every one is seen (a test below then
	// checks what was seen), so the API tests do not start against an undiscovered service.
	await observer.settle(expectedServicesByNode());
}, 180000);

afterAll(async () => {
	await observer?.stop();
	await cluster?.stop();
	await smtp?.stop();
	// The push channel's JetStream streams of this run's namespace (the machine's NATS is shared).
	await deleteJetStreamPush(NATS_URL, namespace);
});

describe("the Deployments of k8s/base as processes", () => {
	it("cover every landed service; the rest are services of the design still to land", () => {
		expect(started().map(servicesOf).sort()).toEqual([...landed].sort());
		const pending = appDeployments()
			.map(servicesOf)
			.filter(s => !landed.has(s));
		for (const s of pending) expect(PLANNED_SERVICES).toContain(s);
		if (pending.length) console.info(`Deployments not started (service not landed yet): ${pending.join(", ")}`);
		expect(landed.has("api")).toBe(true);
	});

	it("run the image's command with the manifest's environment and pass their startup, readiness and liveness probes", async () => {
		for (const pod of pods.values()) {
			expect(pod.child.exitCode).toBeNull();
			expect(pod.spec.argv).toEqual([...image.entrypoint, ...image.cmd]);
			for (const probe of pod.spec.probes) expect([pod.spec.name, probe.kind, await cluster.probe(pod, probe)]).toEqual([pod.spec.name, probe.kind, 200]);
		}
	});

	it("each pod registers exactly the service its SERVICES names, under its pod name as node ID", () => {
		expect(observer.servicesByNode()).toEqual(expectedServicesByNode());
	});

	it("serve Prometheus metrics on the annotated port and path", async () => {
		for (const d of started()) {
			const a = d.spec.template.metadata.annotations;
			const res = await fetch(`http://127.0.0.1:${pods.get(d.metadata.name)!.local(Number(a["prometheus.io/port"]))}${a["prometheus.io/path"]}`);
			expect([d.metadata.name, res.status]).toEqual([d.metadata.name, 200]);
			expect(await res.text()).toMatch(/^# (HELP|TYPE) moleculer_/m);
		}
	});
});

describe("the API through the gateway (Ingress path → Service → api pod)", () => {
	let root: Client;
	const as = (token: string | null) => client(gatewayUrl(), token ?? undefined);
	const has = (...services: string[]) => services.every(s => landed.has(s));
	function gatewayUrl(): string {
		const ingress = ofKind(objects, "Ingress")[0];
		const rule = ingress.spec.rules[0].http.paths[0];
		const svc = find(objects, "Service", rule.backend.service.name);
		const svcPort = (svc.spec.ports as any[]).find(p => p.name === rule.backend.service.port.name || p.port === rule.backend.service.port.number);
		const api = find(objects, "Deployment", rule.backend.service.name);
		const containerPort = portNumber(appContainer(api), svcPort.targetPort);
		return `http://127.0.0.1:${pods.get(api.metadata.name)!.local(containerPort)}${rule.path}`;
	}

	beforeAll(async () => {
		root = as(rootToken);
		// Aliases and remote services are discovered a moment after the pods are ready.
		const deadline = Date.now() + 30000;
		while (Date.now() < deadline && (await root.get("/user")).status !== 200) await new Promise(r => setTimeout(r, 200));
	}, 40000);

	it("root was bootstrapped from the Secret's GITLAB_ROOT_TOKEN and GITLAB_ROOT_PASSWORD", async () => {
		const me = await root.get("/user");
		expect(me.status).toBe(200);
		expect(me.body).toMatchObject({ id: 1, username: "root", is_admin: true, private_token: rootToken });
		const session = await as(null).post("/session", { body: { login: "root", password: rootPassword } });
		expect(session.status).toBe(201);
		expect(session.body.private_token).toBe(rootToken);
		expect((await as(null).get("/user")).status).toBe(401);
	});

	const scenarios: [string, string[], () => Promise<void>][] = [
		[
			"labels: create, list, delete",
			["labels"],
			async () => {
				const project = await createProject(root);
				// The gateway discovers the labels pod on its own, a moment after the observer has seen it.
				await waitFor("the gateway to reach labels", async () => (await root.get(`/projects/${project.id}/labels`)).status !== 503, 30000);
				const created = await root.post(`/projects/${project.id}/labels`, { body: { name: "deploy", color: "#FA0" } });
				expect(created.status).toBe(200);
				expect(created.body).toMatchObject({ name: "deploy", color: "#FFAA00" });
				const list = await root.get(`/projects/${project.id}/labels`);
				expect(list.status).toBe(200);
				expect(list.body.map((l: any) => l.name)).toEqual(["deploy"]);
				const removed = await root.del(`/projects/${project.id}/labels`, { query: { name: "deploy" } });
				expect(removed.status).toBe(200);
				expect((await root.get(`/projects/${project.id}/labels`)).body).toEqual([]);
			},
		],
		[
			"deploy keys: create and list",
			["deploy-keys"],
			async () => {
				const project = await createProject(root);
				const { KeyFactory } = await import("../../support/ssh-keys");
				const keys = new KeyFactory();
				try {
					const key = await keys.generate("ed25519");
					const created = await root.post(`/projects/${project.id}/keys`, { body: { title: "ci", key: key.line } });
					expect(created.status).toBe(201);
					expect(created.body).toMatchObject({ title: "ci", key: key.line });
					const list = await root.get(`/projects/${project.id}/deploy_keys`);
					expect(list.status).toBe(200);
					expect(list.body.map((k: any) => k.id)).toEqual([created.body.id]);
				} finally {
					keys.cleanup();
				}
			},
		],
		[
			"snippets: create and read raw",
			["snippets"],
			async () => {
				const project = await createProject(root);
				const created = await root.post(`/projects/${project.id}/snippets`, {
					body: { title: "hello", file_name: "hello.sh", code: "echo hello\n", visibility_level: 0 },
				});
				expect(created.status).toBe(201);
				const raw = await root.get(`/projects/${project.id}/snippets/${created.body.id}/raw`);
				expect(raw.status).toBe(200);
				expect(raw.text).toBe("echo hello\n");
			},
		],
		[
			"builds: the internal API creates a build and stores its artifacts on the shared volume; the gateway serves them",
			["builds"],
			async () => {
				const project = await createProject(root);
				const internal = (method: string, p: string, body?: RequestInit["body"], type = "application/json") =>
					fetch(`${gatewayUrl()}/internal${p}`, { method, body, headers: { "Gitlab-Shared-Secret": internalSecret, "Content-Type": type } });
				const commit = {
					id: "a".repeat(40),
					title: "Deploy",
					message: "Deploy\n",
					author_name: "Ada",
					author_email: "ada@example.com",
					created_at: "2017-01-01T10:00:00Z",
				};
				const created = await internal(
					"POST",
					"/builds",
					JSON.stringify({ project_id: project.id, name: "test", stage: "test", ref: "master", tag: false, commit }),
				);
				expect(created.status).toBe(201);
				const build = (await created.json()) as { id: number; name: string; status: string };
				expect(build).toMatchObject({ name: "test", status: "pending" });
				const bytes = crypto.randomBytes(300 * 1024);
				const upload = await internal("PUT", `/builds/${build.id}/artifacts?filename=artifacts.zip`, bytes, "application/octet-stream");
				expect(upload.status).toBe(200);
				const artifactsUrl = `${gatewayUrl()}/projects/${project.id}/builds/${build.id}/artifacts`;
				const download = await fetch(artifactsUrl, { headers: { "PRIVATE-TOKEN": rootToken } });
				expect(download.status).toBe(200);
				expect(Buffer.from(await download.arrayBuffer()).equals(bytes)).toBe(true);
				// The bytes are in the volume the artifacts PVC stands for, under DATA_DIR/artifacts.
				const builds = pods.get("builds")!;
				const artifactsDir = fs.realpathSync(path.join(builds.env.DATA_DIR, "artifacts"));
				const apiArtifacts = fs.realpathSync(path.join(pods.get("api")!.env.DATA_DIR, "artifacts"));
				expect(apiArtifacts).toBe(artifactsDir);
				const sizes: number[] = [];
				const walk = (dir: string): void => {
					for (const e of fs.readdirSync(dir, { withFileTypes: true }))
						if (e.isDirectory()) walk(path.join(dir, e.name));
						else sizes.push(fs.statSync(path.join(dir, e.name)).size);
				};
				walk(artifactsDir);
				expect(sizes).toContain(bytes.length);
			},
		],
		[
			"a push reaches the mail worker: integration settings, the internal push API, the durable channel, SMTP",
			["integrations", "events", "workers/push-mailer"],
			async () => {
				const project = await createProject(root);
				const settings = await root.put(`/projects/${project.id}/services/emails-on-push`, { body: { recipients: "team@example.com" } });
				expect(settings.status).toBe(200);
				const { pushBody } = await import("../../support/push-fixtures");
				const push = await fetch(`${gatewayUrl()}/internal/push`, {
					method: "POST",
					headers: { "Gitlab-Shared-Secret": internalSecret, "Content-Type": "application/json" },
					body: JSON.stringify(pushBody({ projectId: project.id, path: project.path_with_namespace, commits: [{ message: "Ship it" }] })),
				});
				expect(push.status).toBe(202);
				const deadline = Date.now() + 30000;
				while (Date.now() < deadline && !smtp.envelopes.some(e => e.to.includes("team@example.com"))) await new Promise(r => setTimeout(r, 200));
				expect(smtp.envelopes.filter(e => e.to.includes("team@example.com"))).toHaveLength(1);
			},
		],
	];
	const runnable = scenarios.filter(([, needs]) => has(...needs));
	const waiting = scenarios.filter(([, needs]) => !has(...needs));
	if (waiting.length)
		console.info(
			`Scenarios waiting for services to land: ${waiting.map(([name, needs]) => `${name} (${needs.filter(s => !landed.has(s)).join(", ")})`).join("; ")}`,
		);
	it.each(runnable.map(([name, , run]) => [name, run] as const))("%s", async (_name, run) => {
		await run();
	});
});

describe("graceful stop", () => {
	it("SIGTERM stops every pod with exit code 0 within its terminationGracePeriodSeconds", async () => {
		for (const r of await cluster.terminateAll()) {
			expect([r.name, r.code, r.signal]).toEqual([r.name, 0, null]);
			expect(r.ms).toBeLessThan(r.graceMs);
		}
	}, 120000);
});
