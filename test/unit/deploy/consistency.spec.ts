/**
 * The deployment files agree with the code: every service file has a Deployment and a compose
 * service (and they name nothing else), every variable config/ reads is set by the ConfigMap or
 * the Secret template, each overlay's and compose's environment is one config/ accepts, and the
 * probe and metrics ports and paths are the ones the code serves.
 */
import fs from "fs";
import path from "path";
import { loadConfig } from "../../../config";
import {
	PLANNED_SERVICES,
	ROOT,
	appContainer,
	composeEnv,
	configVariables,
	containerEnv,
	find,
	literalEnv,
	loadCompose,
	ofKind,
	renderOverlay,
	runtimeImage,
	serviceFiles,
	type K8sObject,
	type Overlay,
} from "../../support/deploy-manifests";

/** Set per pod, not from the ConfigMap/Secret: a pod's own name (downward API), what a Deployment runs. */
const PER_POD = ["NODE_ID", "SERVICES"];

const rendered = {} as Record<Overlay, K8sObject[]>;
beforeAll(() => {
	for (const overlay of ["base", "dev", "production", "production-s3"] as Overlay[]) rendered[overlay] = renderOverlay(overlay);
});
const image = runtimeImage();
const compose = loadCompose({});
const appDeployments = (objects: K8sObject[]) => ofKind(objects, "Deployment").filter(d => literalEnv(appContainer(d), "SERVICES") !== undefined);
const deploymentServices = () => appDeployments(rendered.base).map(d => literalEnv(appContainer(d), "SERVICES")!);
const composeServices = () =>
	Object.values<any>(compose.services)
		.map(s => composeEnv(s).SERVICES)
		.filter(Boolean);
const deploymentEnv = (objects: K8sObject[], d: K8sObject) =>
	containerEnv(objects, appContainer(d), { podName: `${d.metadata.name}-7c9d5b8f4-x2x9q`, imageEnv: image.env });

describe("services ↔ manifests", () => {
	it("the service tree has files to check", () => {
		expect(serviceFiles()).toEqual(expect.arrayContaining(["api"]));
	});

	it("every service file has a Deployment in k8s/base and a service in docker-compose.yml", () => {
		const missingK8s = serviceFiles().filter(s => !deploymentServices().includes(s));
		const missingCompose = serviceFiles().filter(s => !composeServices().includes(s));
		expect({ missingK8s, missingCompose }).toEqual({ missingK8s: [], missingCompose: [] });
	});

	it("manifests name only service files or services of the design that have not landed yet", () => {
		const known = new Set<string>([...serviceFiles(), ...PLANNED_SERVICES]);
		expect(deploymentServices().filter(s => !known.has(s))).toEqual([]);
		expect(composeServices().filter(s => !known.has(s))).toEqual([]);
	});

	it("each SERVICES value resolves to one compiled file the way moleculer-runner resolves it (SERVICEDIR/<name>.service.js)", () => {
		for (const s of serviceFiles()) expect(fs.existsSync(path.join(ROOT, "services", `${s}.service.ts`))).toBe(true);
		expect(image.env.SERVICEDIR).toBe("services");
	});
});

describe("configuration ↔ manifests", () => {
	const keysOf = (objects: K8sObject[]) => {
		const cm = Object.keys(find(objects, "ConfigMap", "gitlab-config").data);
		const secret = find(objects, "Secret", "gitlab-secrets");
		return { cm, secret: [...Object.keys(secret.stringData ?? {}), ...Object.keys(secret.data ?? {})] };
	};

	it("config/ reads the variables of docs/architecture.md#configuration (the scan finds them)", () => {
		const vars = configVariables();
		for (const v of ["PORT", "HEALTH_PORT", "METRICS_PORT", "TRANSPORTER", "NAMESPACE", "CACHER", "MONGO_URI", "DATA_DIR", "SECRETS_KEY", "LOG_LEVEL"])
			expect(vars).toContain(v);
	});

	it("every variable config/ reads is in the ConfigMap or the Secret template (NODE_ID: each pod's name; SERVICES: each Deployment's own)", () => {
		const { cm, secret } = keysOf(rendered.base);
		expect(configVariables().filter(v => !cm.includes(v) && !secret.includes(v) && !PER_POD.includes(v))).toEqual([]);
		for (const d of appDeployments(rendered.base)) for (const v of PER_POD) expect(Object.keys(deploymentEnv(rendered.base, d))).toContain(v);
	});

	it("the ConfigMap and the Secret hold nothing config/ does not read, and no key in both", () => {
		const vars = configVariables();
		const { cm, secret } = keysOf(rendered.base);
		expect([...cm, ...secret].filter(k => !vars.includes(k))).toEqual([]);
		expect(cm.filter(k => secret.includes(k))).toEqual([]);
	});

	it("the Secret template holds the secrets the issue names", () => {
		expect(keysOf(rendered.base).secret.sort()).toEqual([
			"ARTIFACTS_S3_ACCESS_KEY_ID",
			"ARTIFACTS_S3_BUCKET",
			"ARTIFACTS_S3_SECRET_ACCESS_KEY",
			"GITLAB_ROOT_PASSWORD",
			"GITLAB_ROOT_TOKEN",
			"INTERNAL_API_SECRET",
			"MONGO_URI",
			"REDIS_PASSWORD",
			"REDIS_SENTINEL_PASSWORD",
			"SECRETS_KEY",
			"SMTP_URL",
		]);
	});

	it("every overlay keeps every key of the base ConfigMap and Secret", () => {
		const base = keysOf(rendered.base);
		for (const overlay of ["dev", "production", "production-s3"] as Overlay[]) {
			const k = keysOf(rendered[overlay]);
			expect([overlay, k.cm.sort(), k.secret.sort()]).toEqual([overlay, base.cm.sort(), base.secret.sort()]);
		}
	});

	it.each(["dev", "production", "production-s3"] as Overlay[])("config/ accepts the environment of every Deployment in %s", overlay => {
		for (const d of appDeployments(rendered[overlay])) {
			const env = deploymentEnv(rendered[overlay], d);
			expect(() => loadConfig(env)).not.toThrow();
			expect(loadConfig(env).nodeID).toMatch(new RegExp(`^${d.metadata.name}-`));
		}
	});

	it("config/ refuses the base Secret's placeholders, so an unconfigured base never starts", () => {
		const d = find(rendered.base, "Deployment", "labels");
		expect(() => loadConfig(deploymentEnv(rendered.base, d))).toThrow(/Invalid configuration: [A-Z_]+=/);
	});

	it("compose gives every variable config/ reads (but NODE_ID) to every app container, and config/ accepts it", () => {
		for (const s of Object.values<any>(compose.services).filter(s => composeEnv(s).SERVICES)) {
			const env = { ...image.env, ...composeEnv(s) };
			expect(configVariables().filter(v => !(v in env) && !PER_POD.includes(v))).toEqual([]);
			expect(() => loadConfig(env)).not.toThrow();
		}
	});
});

describe("probe and metrics ports and paths ↔ code", () => {
	const health = fs.readFileSync(path.join(ROOT, "middlewares/health.middleware.ts"), "utf8");
	const brokerConfig = fs.readFileSync(path.join(ROOT, "moleculer.config.ts"), "utf8");

	it("the health middleware serves the probed paths, on the port config/ gives it", () => {
		expect(health).toMatch(/path === "\/live"/);
		expect(health).toMatch(/path === "\/ready"/);
		expect(brokerConfig).toMatch(/HealthMiddleware\(config\.healthPort\)/);
	});

	it("the Prometheus reporter serves /metrics on the port config/ gives it", () => {
		expect(brokerConfig).toMatch(/type: "Prometheus",\s*options: \{\s*port: config\.metricsPort,\s*path: "\/metrics"/);
	});

	it("the ports the manifests use are the ones config/ parses from their environment", () => {
		for (const d of appDeployments(rendered.dev)) {
			const c = appContainer(d);
			const cfg = loadConfig(deploymentEnv(rendered.dev, d));
			const named = (name: string) => (c.ports as any[]).find(p => p.name === name)?.containerPort;
			expect([d.metadata.name, named("health"), named("metrics")]).toEqual([d.metadata.name, cfg.healthPort, cfg.metricsPort]);
			if (d.metadata.name === "api") expect(named("http")).toBe(cfg.port);
			expect(d.spec.template.metadata.annotations["prometheus.io/port"]).toBe(String(cfg.metricsPort));
		}
		for (const s of Object.values<any>(compose.services).filter(s => composeEnv(s).SERVICES)) {
			const cfg = loadConfig({ ...image.env, ...composeEnv(s) });
			expect(s.healthcheck.test.join(" ")).toContain(`http://127.0.0.1:${cfg.healthPort}/ready`);
		}
		expect(compose.services.api.ports).toEqual([`${loadConfig(composeEnv(compose.services.api)).port}:3000`]);
	});
});
