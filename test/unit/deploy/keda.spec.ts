/**
 * The KEDA overlay (k8s/overlays/production-keda, k8s/components/keda-workers): each push worker
 * scaled by a ScaledObject on its JetStream consumer's lag and its CPU, in place of its CPU-only
 * HorizontalPodAutoscaler; the scaler reaches the NATS monitoring port, and only KEDA's namespace
 * may. Validated against KEDA's schema (@kubernetes-models/keda) with the other overlays in
 * k8s-schema.spec.ts; the names are checked against a real NATS in test/e2e/push/push-scaling.spec.ts.
 */
import { PUSH_GROUPS, pushNames } from "../../../lib/push/channel";
import { appContainer, find, literalEnv, ofKind, portNumber, renderOverlay, type K8sObject } from "../../support/deploy-manifests";
import { unknownFieldErrors, validateWithModels } from "../../support/k8s-schema";

/** The metadata KEDA's nats-jetstream scaler reads (kedacore/keda, nats_jetstream_scaler.go); anything else is ignored by it. */
const SCALER_KEYS = ["natsServerMonitoringEndpoint", "account", "stream", "consumer", "lagThreshold", "activationLagThreshold", "useHttps"];

let keda: K8sObject[];
let production: K8sObject[];
beforeAll(() => {
	keda = renderOverlay("production-keda");
	production = renderOverlay("production");
});

const scaledObjects = () => ofKind(keda, "ScaledObject");
const natsTrigger = (so: K8sObject) => so.spec.triggers.find((t: { type: string }) => t.type === "nats-jetstream");
const workerHpas = (objects: K8sObject[]) =>
	ofKind(objects, "HorizontalPodAutoscaler").filter(h => h.metadata.labels?.["app.kubernetes.io/component"] === "worker");

describe("the production-keda overlay", () => {
	it("is production with each worker's CPU autoscaler replaced by a ScaledObject, the gateway's left as it is", () => {
		const withoutScaling = (objects: K8sObject[]) => objects.filter(o => !["HorizontalPodAutoscaler", "ScaledObject", "NetworkPolicy"].includes(o.kind));
		expect(withoutScaling(keda)).toEqual(withoutScaling(production));
		expect(workerHpas(keda)).toEqual([]);
		expect(find(keda, "HorizontalPodAutoscaler", "api")).toEqual(find(production, "HorizontalPodAutoscaler", "api"));
		expect(
			scaledObjects()
				.map(so => so.spec.scaleTargetRef.name)
				.sort(),
		).toEqual(
			workerHpas(production)
				.map(h => h.spec.scaleTargetRef.name)
				.sort(),
		);
	});

	it("scales each worker on its own group's consumer of the push stream, with the replicas and CPU target of its HPA", () => {
		const stream = pushNames(find(keda, "ConfigMap", "gitlab-config").data.NAMESPACE).stream;
		for (const so of scaledObjects()) {
			const hpa = find(production, "HorizontalPodAutoscaler", so.metadata.name);
			const services = literalEnv(appContainer(find(keda, "Deployment", so.spec.scaleTargetRef.name)), "SERVICES");
			const { metadata } = natsTrigger(so);
			expect(Object.keys(metadata).filter(k => !SCALER_KEYS.includes(k))).toEqual([]);
			expect([services, metadata.stream, metadata.account]).toEqual([`workers/${metadata.consumer}`, stream, "$G"]);
			expect(PUSH_GROUPS).toContain(metadata.consumer);
			expect(Number(metadata.lagThreshold)).toBeGreaterThan(0);
			expect(Number.isInteger(Number(metadata.lagThreshold))).toBe(true);
			const cpu = so.spec.triggers.find((t: { type: string }) => t.type === "cpu");
			expect([so.spec.minReplicaCount, so.spec.maxReplicaCount, cpu.metricType, Number(cpu.metadata.value)]).toEqual([
				hpa.spec.minReplicas,
				hpa.spec.maxReplicas,
				"Utilization",
				hpa.spec.metrics[0].resource.target.averageUtilization,
			]);
		}
	});

	it("points the scaler at the Service nats' monitoring port, which is the port the nodes serve /jsz on (no accounts: $G)", () => {
		const conf = find(keda, "ConfigMap", "nats-config").data["nats.conf"] as string;
		const httpPort = Number(/^\s*http:\s*[\d.]+:(\d+)\s*$/m.exec(conf)![1]);
		expect(conf).not.toMatch(/^\s*accounts\s*[:{]/m);
		const sts = find(keda, "StatefulSet", "nats");
		for (const so of scaledObjects()) {
			const [host, port] = natsTrigger(so).metadata.natsServerMonitoringEndpoint.split(":");
			const [service, namespace, ...rest] = host.split(".");
			expect([namespace, rest.join(".")]).toEqual([so.metadata.namespace, "svc.cluster.local"]);
			const svcPort = (find(keda, "Service", service).spec.ports as { port: number; targetPort: string }[]).find(p => p.port === Number(port))!;
			expect(portNumber(sts.spec.template.spec.containers[0], svcPort.targetPort)).toBe(httpPort);
		}
	});

	it("lets KEDA's namespace reach the NATS nodes' monitoring port, and nothing else", () => {
		const policy = find(keda, "NetworkPolicy", "nats-monitoring-from-keda");
		expect(policy.spec.podSelector.matchLabels).toEqual(find(keda, "StatefulSet", "nats").spec.selector.matchLabels);
		expect(policy.spec.ingress).toEqual([
			{ from: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "keda" } } }], ports: [{ protocol: "TCP", port: "monitor" }] },
		]);
	});
});

describe("KEDA's schema (@kubernetes-models/keda)", () => {
	const scaledObject = () => JSON.parse(JSON.stringify(scaledObjects()[0])) as K8sObject;

	it("rejects a wrong type", () => {
		const bad = scaledObject();
		bad.spec.minReplicaCount = "two";
		const [result] = validateWithModels([bad]);
		expect(result.errors).toEqual([expect.stringContaining("/spec/minReplicaCount must be integer")]);
	});

	it("rejects a misspelt field", () => {
		const bad = scaledObject();
		bad.spec.triger = bad.spec.triggers;
		delete bad.spec.triggers;
		const [result] = unknownFieldErrors([bad]);
		expect(result.errors.join("\n")).toMatch(/'"?triger"?' does not exist in type/);
	});
});
