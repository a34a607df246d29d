/**
 * What the deployment issue asks of the Kubernetes manifests, checked on what kustomize renders:
 * probes, resources, security context, graceful stop, the gateway's Service/Ingress/preStop,
 * autoscalers, disruption budgets, the network policy (evaluated, not just read), the shared
 * artifacts volume, the NATS JetStream cluster, Prometheus annotations, and what each overlay
 * changes (MongoDB and Redis in-cluster for dev, external for production).
 */
import {
	PLANNED_SERVICES,
	appContainer,
	find,
	literalEnv,
	ofKind,
	portNumber,
	renderOverlay,
	type K8sObject,
	type Overlay,
} from "../../support/deploy-manifests";
import { slowestDeliveryMs } from "../../../lib/push/channel";

const OVERLAYS: Overlay[] = ["base", "dev", "production", "production-s3"];
const rendered = {} as Record<Overlay, K8sObject[]>;
beforeAll(() => {
	for (const overlay of OVERLAYS) rendered[overlay] = renderOverlay(overlay);
});

const APP_COMPONENTS = ["gateway", "service", "worker"];
const component = (o: K8sObject) => o.metadata.labels?.["app.kubernetes.io/component"] ?? "";
const appDeployments = (objects: K8sObject[]) => ofKind(objects, "Deployment").filter(d => APP_COMPONENTS.includes(component(d)));
const configMap = (objects: K8sObject[]) => find(objects, "ConfigMap", "gitlab-config").data as Record<string, string>;
const podLabels = (workload: K8sObject) => workload.spec.template.metadata.labels as Record<string, string>;
const matches = (selector: { matchLabels?: Record<string, string>; matchExpressions?: any[] } | undefined, labels: Record<string, string>) => {
	if (!selector) return false;
	if (selector.matchExpressions?.length) throw new Error("matchExpressions are not evaluated by this test");
	return Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
};
const millis = (seconds: number) => seconds * 1000;
const preStopSleepMs = (container: any) => {
	const cmd = container.lifecycle?.preStop?.exec?.command as string[] | undefined;
	return cmd && cmd[0] === "sleep" ? millis(Number(cmd[1])) : 0;
};

describe.each(OVERLAYS)("app Deployments (%s)", overlay => {
	const objects = () => rendered[overlay];

	it("one Deployment per planned service and worker, named after it, running the one image", () => {
		const deployments = appDeployments(objects());
		const services = deployments.map(d => literalEnv(appContainer(d), "SERVICES"));
		expect(services.sort()).toEqual([...PLANNED_SERVICES].sort());
		const images = new Set(deployments.map(d => appContainer(d).image));
		expect(images.size).toBe(1);
		for (const d of deployments) {
			const c = appContainer(d);
			expect(d.metadata.name).toBe(literalEnv(c, "SERVICES")!.replace(/^workers\//, ""));
			expect(d.spec.template.spec.containers).toHaveLength(1);
			// The image's CMD (moleculer-runner as PID 1) runs: no command/args that could replace it.
			expect(c.command).toBeUndefined();
			expect(c.args).toBeUndefined();
			expect(component(d)).toBe(d.metadata.name === "api" ? "gateway" : literalEnv(c, "SERVICES")!.startsWith("workers/") ? "worker" : "service");
			expect(matches(d.spec.selector, podLabels(d))).toBe(true);
		}
	});

	it("probes: readiness on /ready, liveness and startup on /live, all on HEALTH_PORT", () => {
		const healthPort = Number(configMap(objects()).HEALTH_PORT);
		for (const d of appDeployments(objects())) {
			const c = appContainer(d);
			expect([d.metadata.name, c.readinessProbe.httpGet.path]).toEqual([d.metadata.name, "/ready"]);
			expect([d.metadata.name, c.livenessProbe.httpGet.path]).toEqual([d.metadata.name, "/live"]);
			expect([d.metadata.name, c.startupProbe.httpGet.path]).toEqual([d.metadata.name, "/live"]);
			for (const probe of [c.readinessProbe, c.livenessProbe, c.startupProbe]) expect(portNumber(c, probe.httpGet.port)).toBe(healthPort);
		}
	});

	it("resource requests and limits for cpu and memory", () => {
		for (const d of appDeployments(objects())) {
			const { requests, limits } = appContainer(d).resources;
			for (const r of ["cpu", "memory"]) {
				expect([d.metadata.name, r, typeof requests?.[r]]).toEqual([d.metadata.name, r, "string"]);
				expect([d.metadata.name, r, typeof limits?.[r]]).toEqual([d.metadata.name, r, "string"]);
			}
		}
	});

	it("security context: non-root, read-only root filesystem, no privilege escalation, no capabilities", () => {
		for (const d of appDeployments(objects())) {
			const pod = d.spec.template.spec;
			const c = appContainer(d);
			expect(pod.securityContext.runAsNonRoot).toBe(true);
			expect(pod.securityContext.runAsUser).toBeGreaterThan(0);
			expect(c.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } });
			expect(pod.automountServiceAccountToken).toBe(false);
			// A read-only root needs writable scratch where the app writes: DATA_DIR and /tmp.
			const mounts = (c.volumeMounts as any[]).map(m => m.mountPath);
			expect(mounts).toEqual(expect.arrayContaining([configMap(objects()).DATA_DIR, "/tmp"]));
		}
	});

	it("terminationGracePeriodSeconds above the shutdown timeout (plus the preStop pause, plus a worker's slowest delivery)", () => {
		const settings = configMap(objects());
		const shutdownMs = Number(settings.SHUTDOWN_TIMEOUT_MS);
		// The slowest delivery a worker's claim allows, from the same settings.
		const slowestMs = slowestDeliveryMs({
			outboundTimeoutMs: Number(settings.OUTBOUND_TIMEOUT_MS),
			ircMessageIntervalMs: Number(settings.IRC_MESSAGE_INTERVAL_MS),
		});
		expect(slowestMs).toBe(50_000);
		for (const d of appDeployments(objects())) {
			const grace = millis(d.spec.template.spec.terminationGracePeriodSeconds);
			const delivery = component(d) === "worker" ? slowestMs : 0;
			expect([d.metadata.name, grace > shutdownMs + preStopSleepMs(appContainer(d)) + delivery]).toEqual([d.metadata.name, true]);
		}
	});

	it("the gateway pauses in preStop; it alone publishes PORT", () => {
		const port = Number(configMap(objects()).PORT);
		for (const d of appDeployments(objects())) {
			const c = appContainer(d);
			const http = (c.ports as any[]).find(p => p.name === "http");
			if (d.metadata.name === "api") {
				expect(preStopSleepMs(c)).toBeGreaterThanOrEqual(5000);
				expect(http.containerPort).toBe(port);
			} else {
				expect([d.metadata.name, c.lifecycle?.preStop, http]).toEqual([d.metadata.name, undefined, undefined]);
			}
		}
	});

	it("Prometheus scrape annotations point at METRICS_PORT /metrics", () => {
		const metricsPort = Number(configMap(objects()).METRICS_PORT);
		for (const d of appDeployments(objects())) {
			const a = d.spec.template.metadata.annotations;
			expect(a).toMatchObject({ "prometheus.io/scrape": "true", "prometheus.io/port": String(metricsPort), "prometheus.io/path": "/metrics" });
			expect(portNumber(appContainer(d), "metrics")).toBe(metricsPort);
		}
	});

	it("configuration comes from the ConfigMap and the Secret; each pod's NODE_ID is its own name", () => {
		for (const d of appDeployments(objects())) {
			const c = appContainer(d);
			const refs = (c.envFrom as any[]).map(e => e.configMapRef?.name ?? e.secretRef?.name);
			expect(refs).toEqual([find(objects(), "ConfigMap", "gitlab-config").metadata.name, find(objects(), "Secret", "gitlab-secrets").metadata.name]);
			expect((c.env as any[]).find(e => e.name === "NODE_ID").valueFrom.fieldRef.fieldPath).toBe("metadata.name");
		}
	});

	it("the artifacts volume is ReadWriteMany in a multi-node cluster, mounted at DATA_DIR/artifacts by api and builds only (none with S3)", () => {
		if (configMap(objects()).ARTIFACTS_STORE === "s3") {
			// The bucket holds the files: no claim, and every app pod keeps only its scratch emptyDirs.
			expect(ofKind(objects(), "PersistentVolumeClaim")).toEqual([]);
			for (const d of appDeployments(objects()))
				expect([d.metadata.name, (d.spec.template.spec.volumes as any[]).filter(v => !v.emptyDir)]).toEqual([d.metadata.name, []]);
			return;
		}
		const pvc = find(objects(), "PersistentVolumeClaim", "artifacts");
		// Dev is a single-node cluster, where ReadWriteOnce is shared by every pod on the node.
		expect(pvc.spec.accessModes).toEqual(overlay === "dev" ? ["ReadWriteOnce"] : ["ReadWriteMany"]);
		const artifactsPath = `${configMap(objects()).DATA_DIR}/artifacts`;
		const mounting = appDeployments(objects()).filter(d =>
			(d.spec.template.spec.volumes as any[]).some(v => v.persistentVolumeClaim?.claimName === "artifacts"),
		);
		expect(mounting.map(d => d.metadata.name).sort()).toEqual(["api", "builds"]);
		for (const d of mounting) {
			const volume = (d.spec.template.spec.volumes as any[]).find(v => v.persistentVolumeClaim?.claimName === "artifacts");
			expect((appContainer(d).volumeMounts as any[]).find(m => m.name === volume.name).mountPath).toBe(artifactsPath);
		}
	});
});

describe.each(OVERLAYS)("Service, Ingress, autoscalers and disruption budgets (%s)", overlay => {
	const objects = () => rendered[overlay];

	it("a Service and an Ingress for the gateway only, reaching its HTTP port", () => {
		const appServices = ofKind(objects(), "Service").filter(s => APP_COMPONENTS.includes(component(s)));
		expect(appServices.map(s => s.metadata.name)).toEqual(["api"]);
		const ingresses = ofKind(objects(), "Ingress");
		expect(ingresses).toHaveLength(1);
		const backend = ingresses[0].spec.rules[0].http.paths[0].backend.service;
		expect(backend.name).toBe("api");
		const svcPort = (appServices[0].spec.ports as any[]).find(p => p.name === backend.port.name || p.port === backend.port.number);
		const api = find(objects(), "Deployment", "api");
		expect(matches({ matchLabels: appServices[0].spec.selector }, podLabels(api))).toBe(true);
		expect(portNumber(appContainer(api), svcPort.targetPort)).toBe(Number(configMap(objects()).PORT));
		expect(ingresses[0].spec.rules[0].http.paths[0].path).toBe("/api/v3");
	});

	it("HorizontalPodAutoscalers for the gateway and each worker, scaling their Deployments", () => {
		const hpas = ofKind(objects(), "HorizontalPodAutoscaler");
		const expected = appDeployments(objects())
			.filter(d => ["gateway", "worker"].includes(component(d)))
			.map(d => d.metadata.name);
		expect(hpas.map(h => h.spec.scaleTargetRef.name).sort()).toEqual(expected.sort());
		for (const h of hpas) {
			expect(h.spec.scaleTargetRef).toEqual({ apiVersion: "apps/v1", kind: "Deployment", name: h.metadata.name });
			expect(h.spec.minReplicas).toBeGreaterThanOrEqual(1);
			expect(h.spec.maxReplicas).toBeGreaterThan(h.spec.minReplicas);
			// CPU-based scaling needs CPU requests on the target.
			expect(appContainer(find(objects(), "Deployment", h.metadata.name)).resources.requests.cpu).toBeDefined();
		}
	});

	it("a PodDisruptionBudget covering each Deployment and StatefulSet", () => {
		const pdbs = ofKind(objects(), "PodDisruptionBudget");
		for (const workload of [...ofKind(objects(), "Deployment"), ...ofKind(objects(), "StatefulSet").filter(s => s.spec.replicas > 1)]) {
			const covering = pdbs.filter(p => matches(p.spec.selector, podLabels(workload)));
			expect([workload.metadata.name, covering.length]).toEqual([workload.metadata.name, 1]);
			expect(covering[0].spec.maxUnavailable ?? covering[0].spec.minAvailable).toBeDefined();
		}
	});
});

/**
 * NetworkPolicy semantics for ingress: a pod selected by no policy accepts everything; a selected pod
 * accepts a connection when some selecting policy has a rule whose `from` admits the source (absent:
 * anyone; podSelector alone: pods of the same namespace; namespaceSelector: pods of matching
 * namespaces) and whose `ports` admit the port (absent: all; named ports resolve on the pod).
 */
interface Source {
	namespaceLabels: Record<string, string>;
	sameNamespace: boolean;
	podLabels: Record<string, string>;
}
function admits(policies: K8sObject[], workload: K8sObject, port: number, source: Source): boolean {
	const pod = podLabels(workload);
	const selecting = policies.filter(p => matches(p.spec.podSelector, pod) && (p.spec.policyTypes ?? ["Ingress"]).includes("Ingress"));
	if (!selecting.length) return true;
	const containers = workload.spec.template.spec.containers as any[];
	const portMatches = (p: any) =>
		typeof p.port === "number" ? p.port === port : containers.some(c => (c.ports ?? []).some((cp: any) => cp.name === p.port && cp.containerPort === port));
	return selecting.some(policy =>
		(policy.spec.ingress ?? []).some((rule: any) => {
			const fromOk =
				!rule.from?.length ||
				rule.from.some((peer: any) => {
					if (peer.ipBlock) return true;
					const nsOk = peer.namespaceSelector ? matches(peer.namespaceSelector, source.namespaceLabels) : source.sameNamespace;
					const podOk = peer.podSelector ? matches(peer.podSelector, source.podLabels) : true;
					return nsOk && podOk;
				});
			const portOk = !rule.ports?.length || rule.ports.some(portMatches);
			return fromOk && portOk;
		}),
	);
}
const containerPorts = (w: K8sObject) => (w.spec.template.spec.containers as any[]).flatMap(c => (c.ports ?? []).map((p: any) => p.containerPort as number));

describe.each(OVERLAYS)("NetworkPolicy (%s)", overlay => {
	const objects = () => rendered[overlay];
	const workloads = () => [...ofKind(objects(), "Deployment"), ...ofKind(objects(), "StatefulSet")];
	const outsider: Source = {
		namespaceLabels: { "kubernetes.io/metadata.name": "ingress-nginx" },
		sameNamespace: false,
		podLabels: { "app.kubernetes.io/name": "ingress-nginx" },
	};

	it("admits outside traffic to the gateway's HTTP port and to nothing else", () => {
		const policies = ofKind(objects(), "NetworkPolicy");
		const port = Number(configMap(objects()).PORT);
		const open = workloads().flatMap(w =>
			containerPorts(w)
				.filter(p => admits(policies, w, p, outsider))
				.map(p => `${w.metadata.name}:${p}`),
		);
		expect(open).toEqual([`api:${port}`]);
	});

	it("admits a pod of any other namespace to nothing, the gateway included (it could name its own client address)", () => {
		const policies = ofKind(objects(), "NetworkPolicy");
		const stranger: Source = { namespaceLabels: { "kubernetes.io/metadata.name": "default" }, sameNamespace: false, podLabels: { app: "anything" } };
		const open = workloads().flatMap(w =>
			containerPorts(w)
				.filter(p => admits(policies, w, p, stranger))
				.map(p => `${w.metadata.name}:${p}`),
		);
		expect(open).toEqual([]);
	});

	it("admits the app pods to NATS and to each other inside the namespace", () => {
		const policies = ofKind(objects(), "NetworkPolicy");
		const labels = podLabels(find(objects(), "Deployment", "labels"));
		const insider: Source = { namespaceLabels: {}, sameNamespace: true, podLabels: labels };
		expect(admits(policies, find(objects(), "StatefulSet", "nats"), 4222, insider)).toBe(true);
		expect(admits(policies, find(objects(), "Deployment", "accounts"), Number(configMap(objects()).HEALTH_PORT), insider)).toBe(true);
	});

	it("lets Prometheus from a monitoring namespace scrape the metrics port only", () => {
		const policies = ofKind(objects(), "NetworkPolicy");
		const prometheus: Source = { namespaceLabels: { "gitlab-v3/monitoring": "true" }, sameNamespace: false, podLabels: { app: "prometheus" } };
		const metricsPort = Number(configMap(objects()).METRICS_PORT);
		for (const d of appDeployments(objects())) {
			expect([d.metadata.name, admits(policies, d, metricsPort, prometheus)]).toEqual([d.metadata.name, true]);
			const others = containerPorts(d).filter(p => p !== metricsPort && !(d.metadata.name === "api" && p === Number(configMap(objects()).PORT)));
			expect(others.filter(p => admits(policies, d, p, prometheus))).toEqual([]);
		}
	});
});

describe.each(OVERLAYS)("NATS JetStream cluster (%s)", overlay => {
	const objects = () => rendered[overlay];

	it("is a 3-node StatefulSet with JetStream on, routes to every node, and persistent storage", () => {
		const sts = find(objects(), "StatefulSet", "nats");
		expect(sts.spec.replicas).toBe(3);
		const conf = find(objects(), "ConfigMap", "nats-config").data["nats.conf"] as string;
		expect(conf).toMatch(/jetstream\s*\{[^}]*store_dir:\s*\/data/);
		const headless = find(objects(), "Service", sts.spec.serviceName);
		expect(headless.spec.clusterIP).toBe("None");
		const routes = [...conf.matchAll(/nats:\/\/([a-z0-9-]+)\.([a-z0-9-]+):(\d+)/g)];
		expect(routes.map(r => r[1])).toEqual(["nats-0", "nats-1", "nats-2"]);
		for (const r of routes) {
			expect(r[2]).toBe(sts.spec.serviceName);
			expect(portNumber(sts.spec.template.spec.containers[0], "cluster")).toBe(Number(r[3]));
		}
		const dataMount = (sts.spec.template.spec.containers[0].volumeMounts as any[]).find(m => m.mountPath === "/data");
		expect(sts.spec.volumeClaimTemplates.map((t: K8sObject) => t.metadata.name)).toContain(dataMount.name);
	});

	it("TRANSPORTER reaches the nats Service, whose port leads to the client port", () => {
		const url = new URL(configMap(objects()).TRANSPORTER);
		expect(url.protocol).toBe("nats:");
		const svc = find(objects(), "Service", url.hostname);
		const port = (svc.spec.ports as any[]).find(p => p.port === Number(url.port));
		expect(portNumber(find(objects(), "StatefulSet", "nats").spec.template.spec.containers[0], port.targetPort)).toBe(4222);
		expect(matches({ matchLabels: svc.spec.selector }, podLabels(find(objects(), "StatefulSet", "nats")))).toBe(true);
	});
});

describe("overlays", () => {
	const secret = (objects: K8sObject[]) => {
		const s = find(objects, "Secret", "gitlab-secrets");
		const decoded = Object.fromEntries(Object.entries<string>(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, "base64").toString()]));
		return { ...decoded, ...s.stringData } as Record<string, string>;
	};
	const serviceFor = (objects: K8sObject[], url: string) => {
		const u = new URL(url);
		const svc = find(objects, "Service", u.hostname);
		const sts = ofKind(objects, "StatefulSet").find(s => matches({ matchLabels: svc.spec.selector }, podLabels(s)));
		return { svc, sts, port: Number(u.port) };
	};

	it("dev runs MongoDB and Redis as small in-cluster StatefulSets that MONGO_URI and CACHER reach", () => {
		const objects = rendered.dev;
		for (const [url, containerPort] of [
			[secret(objects).MONGO_URI, 27017],
			[configMap(objects).CACHER, 6379],
		] as const) {
			const { svc, sts, port } = serviceFor(objects, url);
			expect(sts).toBeDefined();
			expect(sts!.spec.replicas).toBe(1);
			const svcPort = (svc.spec.ports as any[]).find(p => p.port === port);
			expect(portNumber(sts!.spec.template.spec.containers[0], svcPort.targetPort)).toBe(containerPort);
		}
	});

	it("production uses external MongoDB (a replica set) and Redis, and runs neither", () => {
		const objects = rendered.production;
		expect(ofKind(objects, "StatefulSet").map(s => s.metadata.name)).toEqual(["nats"]);
		const mongo = new URL(secret(objects).MONGO_URI);
		expect(mongo.searchParams.get("replicaSet")).toBeTruthy();
		const redisHost = new URL(configMap(objects).CACHER).hostname;
		expect(ofKind(objects, "Service").map(s => s.metadata.name)).not.toContain(redisHost);
		expect(ofKind(objects, "Service").map(s => s.metadata.name)).not.toContain(mongo.hostname);
	});

	it("production-s3 is production with artifacts in a bucket: no shared volume, store and endpoint in the ConfigMap, bucket and keys in the Secret", () => {
		const s3 = rendered["production-s3"];
		expect(configMap(s3)).toMatchObject({ ARTIFACTS_STORE: "s3", ARTIFACTS_S3_ENDPOINT: expect.stringMatching(/^https:\/\/[a-z0-9.-]+$/) });
		expect(configMap(rendered.production).ARTIFACTS_STORE).toBe("filesystem");
		expect(secret(s3)).toMatchObject({ ARTIFACTS_S3_BUCKET: "gitlab-artifacts", ARTIFACTS_S3_ACCESS_KEY_ID: expect.stringMatching(/./) });
		const names = (objects: K8sObject[]) => objects.map(o => `${o.kind}/${o.metadata.name}`).sort();
		expect(names(s3)).toEqual(names(rendered.production).filter(n => n !== "PersistentVolumeClaim/artifacts"));
	});

	it("put everything in their namespace, with a pinned image in production", () => {
		for (const [overlay, ns] of [
			["dev", "gitlab-dev"],
			["production", "gitlab"],
		] as const) {
			const objects = rendered[overlay];
			expect(find(objects, "Namespace", ns)).toBeDefined();
			for (const o of objects.filter(o => o.kind !== "Namespace"))
				expect([o.kind, o.metadata.name, o.metadata.namespace]).toEqual([o.kind, o.metadata.name, ns]);
		}
		const image = appContainer(find(rendered.production, "Deployment", "api")).image as string;
		expect(image).toMatch(/^[a-z0-9.-]+\.[a-z]+\/gitlab-v3-service:\d+\.\d+\.\d+$/);
	});

	it("production runs every app Deployment with at least two replicas; dev with one (an autoscaled one: its autoscaler's minimum)", () => {
		const least = (objects: K8sObject[], d: K8sObject) => {
			const hpa = ofKind(objects, "HorizontalPodAutoscaler").find(h => h.spec.scaleTargetRef.name === d.metadata.name);
			return hpa ? hpa.spec.minReplicas : d.spec.replicas;
		};
		for (const d of appDeployments(rendered.production)) expect([d.metadata.name, least(rendered.production, d) >= 2]).toEqual([d.metadata.name, true]);
		for (const d of appDeployments(rendered.dev)) expect([d.metadata.name, least(rendered.dev, d)]).toEqual([d.metadata.name, 1]);
	});

	it("an autoscaled Deployment sets no replicas of its own, in any overlay (kubectl apply would reset the scale to it)", () => {
		for (const overlay of OVERLAYS) {
			const objects = rendered[overlay];
			for (const hpa of ofKind(objects, "HorizontalPodAutoscaler")) {
				const d = find(objects, "Deployment", hpa.spec.scaleTargetRef.name);
				expect([overlay, d.metadata.name, d.spec.replicas]).toEqual([overlay, d.metadata.name, undefined]);
			}
		}
	});
});
