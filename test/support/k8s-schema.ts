/**
 * Validation of Kubernetes objects against the Kubernetes API schemas, in two complementary passes,
 * both from kubernetes-models (generated from the Kubernetes OpenAPI spec; KEDA's kinds from
 * @kubernetes-models/keda, generated from KEDA's API types):
 * - `validateWithModels`: each model's JSON-schema validator (types, enums, required fields, formats);
 * - `unknownFieldErrors`: the same models' TypeScript interfaces, whose excess-property check
 *   catches misspelt or misplaced fields (`livenesProbe`), which the OpenAPI schemas let through
 *   (the API server drops or rejects them only at apply time).
 */
import { spawnSync } from "child_process";
import path from "path";
import ts from "typescript";
import type { K8sObject } from "./deploy-manifests";

const ROOT = path.resolve(__dirname, "../..");

export interface ObjectErrors {
	kind: string;
	name: string;
	errors: string[];
}

/**
 * kustomize wraps long base64 values of Secret `data` at 70 columns. The API server decodes them
 * with Go's encoding/base64, which skips line breaks; the models' "byte" pattern does not, so
 * the line breaks are taken out before validation (nothing else is changed).
 */
function unwrapSecretData(obj: K8sObject): K8sObject {
	if (obj.kind !== "Secret" || !obj.data) return obj;
	return { ...obj, data: Object.fromEntries(Object.entries<string>(obj.data).map(([k, v]) => [k, v.replace(/[\r\n]/g, "")])) };
}

/** API groups whose models are in a package of their own. */
const MODEL_PACKAGES: Record<string, string> = { "keda.sh": "@kubernetes-models/keda" };

/**
 * Where an object's model is: "apps/v1" → kubernetes-models/apps/v1/Deployment, the core group
 * "v1" → kubernetes-models/v1/Pod, "keda.sh/v1alpha1" → @kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject.
 */
export function modelModule(obj: { apiVersion: string; kind: string }): string {
	const group = obj.apiVersion?.includes("/") ? obj.apiVersion.split("/")[0] : "";
	const pkg = MODEL_PACKAGES[group];
	return pkg ? `${pkg}/${obj.apiVersion}/${obj.kind}` : `kubernetes-models/${obj.apiVersion}/${obj.kind}`;
}

export function validateWithModels(objects: K8sObject[]): ObjectErrors[] {
	const res = spawnSync(process.execPath, [path.join(__dirname, "k8s-validate.mjs")], {
		cwd: ROOT,
		input: JSON.stringify(objects.map(o => ({ module: modelModule(o), object: unwrapSecretData(o) }))),
		encoding: "utf8",
		maxBuffer: 64 * 1024 * 1024,
	});
	if (res.status !== 0) throw new Error(`k8s-validate.mjs failed (${res.status}):\n${res.stderr}`);
	return JSON.parse(res.stdout) as ObjectErrors[];
}

/** One TypeScript diagnostic per unknown or mistyped field, keyed by the object it is in. */
export function unknownFieldErrors(objects: K8sObject[]): ObjectErrors[] {
	const file = path.join(ROOT, "__k8s_manifests__.ts");
	const lines = objects.map((o, i) => `export const m${i}: import("${modelModule(o)}").I${o.kind} = ${JSON.stringify(o)};`);
	const text = lines.join("\n");
	const options: ts.CompilerOptions = {
		strict: true,
		noEmit: true,
		skipLibCheck: true,
		types: [],
		target: ts.ScriptTarget.ES2022,
		// kubernetes-models publishes its types through package "exports".
		module: ts.ModuleKind.ESNext,
		moduleResolution: ts.ModuleResolutionKind.Bundler,
	};
	const host = ts.createCompilerHost(options);
	const getSourceFile = host.getSourceFile.bind(host);
	const fileExists = host.fileExists.bind(host);
	host.getSourceFile = (name, lang, ...rest) => (name === file ? ts.createSourceFile(name, text, lang) : getSourceFile(name, lang, ...rest));
	host.fileExists = name => name === file || fileExists(name);
	const program = ts.createProgram([file], options, host);
	const results: ObjectErrors[] = objects.map(o => ({ kind: o.kind, name: o.metadata?.name, errors: [] }));
	for (const d of ts.getPreEmitDiagnostics(program)) {
		const message = ts.flattenDiagnosticMessageText(d.messageText, "\n");
		if (d.file?.fileName !== file || d.start === undefined) throw new Error(`TypeScript: ${message}`);
		const { line } = d.file.getLineAndCharacterOfPosition(d.start);
		results[line].errors.push(message);
	}
	return results;
}
