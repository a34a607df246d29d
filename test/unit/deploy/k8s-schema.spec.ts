/**
 * Every manifest under k8s/, as kustomize renders base and both overlays, validated against the
 * Kubernetes API schemas (kubernetes-models): the JSON-schema validators and, for fields the
 * OpenAPI schemas do not close, the generated TypeScript interfaces.
 */
import fs from "fs";
import path from "path";
import { K8S_DIR, ROOT, k8sYamlFiles, kustomize, parseYamlDocuments, renderOverlay, type K8sObject, type Overlay } from "../../support/deploy-manifests";
import { unknownFieldErrors, validateWithModels } from "../../support/k8s-schema";

const OVERLAYS: Overlay[] = ["base", "dev", "production", "production-keda", "production-s3"];
const rendered = {} as Record<Overlay, K8sObject[]>;

beforeAll(() => {
	for (const overlay of OVERLAYS) rendered[overlay] = renderOverlay(overlay);
});

const failures = (results: { kind: string; name: string; errors: string[] }[]) =>
	results.filter(r => r.errors.length).map(r => `${r.kind}/${r.name}: ${r.errors.join("; ")}`);

describe("k8s/ files", () => {
	it("all parse as YAML, and every file that is not a kustomization or a patch is a complete object", () => {
		const files = k8sYamlFiles();
		expect(files.length).toBeGreaterThan(10);
		const referencedPatches = new Set<string>();
		for (const file of files.filter(f => path.basename(f) === "kustomization.yaml")) {
			const [k] = parseYamlDocuments(fs.readFileSync(path.join(ROOT, file), "utf8"), file);
			for (const p of k.patches ?? []) if (p.path) referencedPatches.add(path.join(path.dirname(file), p.path));
		}
		for (const file of files) {
			const docs = parseYamlDocuments(fs.readFileSync(path.join(ROOT, file), "utf8"), file);
			expect(docs.length).toBeGreaterThan(0);
			if (path.basename(file) === "kustomization.yaml" || referencedPatches.has(file)) continue;
			for (const doc of docs) {
				expect(typeof doc.apiVersion).toBe("string");
				expect(typeof doc.kind).toBe("string");
				expect(typeof doc.metadata?.name).toBe("string");
			}
		}
	});

	it("every manifest file is listed in a kustomization (nothing lies around unused)", () => {
		const used = new Set<string>();
		for (const file of k8sYamlFiles().filter(f => path.basename(f) === "kustomization.yaml")) {
			const [k] = parseYamlDocuments(fs.readFileSync(path.join(ROOT, file), "utf8"), file);
			const dir = path.dirname(file);
			for (const r of k.resources ?? []) used.add(path.join(dir, r));
			for (const p of k.patches ?? []) if (p.path) used.add(path.join(dir, p.path));
		}
		const unused = k8sYamlFiles().filter(f => path.basename(f) !== "kustomization.yaml" && !used.has(f));
		expect(unused).toEqual([]);
	});
});

describe.each(OVERLAYS)("kustomize rendering of %s", overlay => {
	it("renders objects of the expected kinds", () => {
		const kinds = new Set(rendered[overlay].map(o => o.kind));
		for (const kind of [
			"ConfigMap",
			"Secret",
			"Deployment",
			"Service",
			"Ingress",
			"HorizontalPodAutoscaler",
			"PodDisruptionBudget",
			"NetworkPolicy",
			// The artifacts volume's claim, but where the bucket holds the files.
			...(overlay === "production-s3" ? [] : ["PersistentVolumeClaim"]),
			"StatefulSet",
		])
			expect(kinds).toContain(kind);
	});

	it("passes the Kubernetes schema validators of kubernetes-models", () => {
		const results = validateWithModels(rendered[overlay]);
		expect(results).toHaveLength(rendered[overlay].length);
		expect(failures(results)).toEqual([]);
	});

	it("has no field the Kubernetes API does not define", () => {
		expect(failures(unknownFieldErrors(rendered[overlay]))).toEqual([]);
	});

	it("has unique kind/name pairs", () => {
		const keys = rendered[overlay].map(o => `${o.kind}/${o.metadata.namespace ?? ""}/${o.metadata.name}`);
		expect(new Set(keys).size).toBe(keys.length);
	});
});

describe("the validators themselves", () => {
	const deployment = () => JSON.parse(JSON.stringify(rendered.base.find(o => o.kind === "Deployment" && o.metadata.name === "labels")));

	it("reject a wrong type and a value outside an enum", () => {
		const bad = deployment();
		bad.spec.replicas = "two";
		bad.spec.template.spec.containers[0].imagePullPolicy = "Sometimes";
		const [result] = validateWithModels([bad]);
		expect(result.errors).toEqual(
			expect.arrayContaining([
				expect.stringContaining("/spec/replicas must be integer"),
				expect.stringContaining("imagePullPolicy must be equal to one of the allowed values"),
			]),
		);
	});

	it("reject a misspelt field", () => {
		const bad = deployment();
		const c = bad.spec.template.spec.containers[0];
		c.livenesProbe = c.livenessProbe;
		delete c.livenessProbe;
		const [result] = unknownFieldErrors([bad]);
		expect(result.errors.join("\n")).toMatch(/'"?livenesProbe"?' does not exist in type/);
	});

	it("reject an object of a kind Kubernetes does not have", () => {
		const [result] = validateWithModels([{ apiVersion: "apps/v1", kind: "Deploymnet", metadata: { name: "x" } }]);
		expect(result.errors).toEqual(["no Kubernetes model for apiVersion apps/v1 kind Deploymnet"]);
	});
});

describe("the production overlay", () => {
	it("does not render without secrets.env, so placeholder secrets cannot be deployed by mistake", () => {
		expect(fs.existsSync(path.join(K8S_DIR, "overlays/production/secrets.env"))).toBe(false);
		expect(() => kustomize(path.join(K8S_DIR, "overlays/production"))).toThrow(/secrets\.env/);
	});
});
