/**
 * Reads the deployment files as the tools that consume them would: the Dockerfile's runtime stage,
 * the kustomize renderings of k8s/ (kubectl's built-in kustomize), and docker-compose.yml with
 * YAML merge keys and `${VAR:-default}` interpolation. Shared by the deploy unit tests and the
 * manifest-driven cluster test.
 */
import { execFileSync } from "child_process";
import fs from "fs";
import os from "os";
import path from "path";
import YAML from "yaml";

export const ROOT = path.resolve(__dirname, "../..");
export const K8S_DIR = path.join(ROOT, "k8s");

/**
 * The services of the design (docs/architecture.md#shape), as SERVICES names. Manifests are written for all of
 * them; a manifest may name one whose file has not landed yet, and nothing else.
 */
export const PLANNED_SERVICES = [
	"api",
	"accounts",
	"labels",
	"builds",
	"deploy-keys",
	"snippets",
	"integrations",
	"events",
	"workers/task-tracker-commenter",
	"workers/push-mailer",
	"workers/irc-sender",
] as const;

/** Values the production overlay's secrets.env gets when a test renders it (valid for config/). */
export const TEST_PRODUCTION_SECRETS: Record<string, string> = {
	SECRETS_KEY: "production-test-secrets-key-0123",
	INTERNAL_API_SECRET: "production-test-internal-secret-0123456789abcdef",
	GITLAB_ROOT_PASSWORD: "production-test-password",
	GITLAB_ROOT_TOKEN: "prodTestToken-123456",
	MONGO_URI: "mongodb://gitlab:pw@mongo-0.example.internal,mongo-1.example.internal/gitlab?replicaSet=rs0",
	SMTP_URL: "smtp://gitlab:pw@smtp.example.com:587",
	ARTIFACTS_S3_BUCKET: "gitlab-artifacts",
	ARTIFACTS_S3_ACCESS_KEY_ID: "production-test-access-key",
	ARTIFACTS_S3_SECRET_ACCESS_KEY: "production-test-secret-key",
};

export interface K8sObject {
	apiVersion: string;
	kind: string;
	metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
	[field: string]: any;
}

// ---------- services in the source tree ----------

/** SERVICES names of the service files present: "labels", "workers/irc-sender". */
export function serviceFiles(): string[] {
	const found: string[] = [];
	for (const [dir, prefix] of [
		["services", ""],
		["services/workers", "workers/"],
	] as const) {
		const abs = path.join(ROOT, dir);
		if (!fs.existsSync(abs)) continue;
		for (const f of fs.readdirSync(abs)) if (f.endsWith(".service.ts")) found.push(prefix + f.slice(0, -".service.ts".length));
	}
	return found.sort();
}

// ---------- YAML ----------

export function parseYamlDocuments(text: string, source: string): any[] {
	return YAML.parseAllDocuments(text, { merge: true })
		.map((doc, i) => {
			if (doc.errors.length) throw new Error(`${source} (document ${i + 1}): ${doc.errors.map(e => e.message).join("; ")}`);
			return doc.toJSON();
		})
		.filter(d => d !== null && d !== undefined);
}

/** Every .yaml/.yml file under k8s/ (manifests, patches, kustomizations), relative to the root. */
export function k8sYamlFiles(dir = K8S_DIR): string[] {
	const out: string[] = [];
	for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
		const p = path.join(dir, entry.name);
		if (entry.isDirectory()) out.push(...k8sYamlFiles(p));
		else if (/\.ya?ml$/.test(entry.name)) out.push(path.relative(ROOT, p));
	}
	return out.sort();
}

// ---------- kustomize ----------

/**
 * production-keda: production with the workers scaled by KEDA (k8s/components/keda-workers);
 * production-s3: production with artifacts and traces in an S3 bucket, no shared volume.
 */
export type Overlay = "base" | "dev" | "production" | "production-keda" | "production-s3";

function kubectl(args: string[]): string {
	try {
		return execFileSync("kubectl", args, { encoding: "utf8", maxBuffer: 64 * 1024 * 1024, stdio: ["ignore", "pipe", "pipe"] });
	} catch (err: any) {
		if (err.code === "ENOENT") {
			const why = "kubectl is not installed: it renders the kustomize overlays (`kubectl kustomize`); install Debian's kubectl package";
			throw new Error(why, { cause: err });
		}
		throw new Error(`kubectl ${args.join(" ")} failed:\n${err.stderr || err.message}`, { cause: err });
	}
}

/** `kubectl kustomize <dir>`, parsed. */
export function kustomize(dir: string): K8sObject[] {
	return parseYamlDocuments(kubectl(["kustomize", dir]), `kustomize ${dir}`) as K8sObject[];
}

/**
 * Renders k8s/base or an overlay. The production overlay (and production-keda and production-s3, built on it) needs
 * secrets.env, which is never committed: it is rendered from a copy of k8s/ whose secrets.env is
 * secrets.env.example with the given values filled in, as an operator would.
 */
export function renderOverlay(overlay: Overlay, secrets: Record<string, string> = TEST_PRODUCTION_SECRETS): K8sObject[] {
	if (overlay === "base") return kustomize(path.join(K8S_DIR, "base"));
	if (overlay === "dev") return kustomize(path.join(K8S_DIR, "overlays/dev"));
	const copy = fs.mkdtempSync(path.join(os.tmpdir(), "glv3-k8s-"));
	try {
		fs.cpSync(K8S_DIR, path.join(copy, "k8s"), { recursive: true });
		const dir = path.join(copy, "k8s/overlays/production");
		const example = fs.readFileSync(path.join(dir, "secrets.env.example"), "utf8");
		const filled = example.replace(/^([A-Z0-9_]+)=.*$/gm, (line, key: string) => (key in secrets ? `${key}=${secrets[key]}` : line));
		fs.writeFileSync(path.join(dir, "secrets.env"), filled);
		return kustomize(path.join(copy, "k8s/overlays", overlay));
	} finally {
		fs.rmSync(copy, { recursive: true, force: true });
	}
}

export function ofKind(objects: K8sObject[], kind: string): K8sObject[] {
	return objects.filter(o => o.kind === kind);
}

export function find(objects: K8sObject[], kind: string, name: string): K8sObject {
	const found = objects.find(o => o.kind === kind && o.metadata.name === name);
	if (!found) throw new Error(`no ${kind} ${name} in the rendering`);
	return found;
}

/** The one container of an app Deployment (named `app`). */
export function appContainer(deployment: K8sObject): any {
	const containers = deployment.spec.template.spec.containers as any[];
	const app = containers.find(c => c.name === "app");
	if (!app) throw new Error(`Deployment ${deployment.metadata.name} has no container named app`);
	return app;
}

export function literalEnv(container: any, name: string): string | undefined {
	return (container.env as any[] | undefined)?.find(e => e.name === name)?.value;
}

/** Resolves a probe's port (a number or a containerPort name) to a number. */
export function portNumber(container: any, port: number | string): number {
	if (typeof port === "number") return port;
	if (/^\d+$/.test(port)) return Number(port);
	const named = (container.ports as any[] | undefined)?.find(p => p.name === port);
	if (!named) throw new Error(`container ${container.name} has no port named ${port}`);
	return named.containerPort;
}

function secretData(secret: K8sObject): Record<string, string> {
	const out: Record<string, string> = {};
	for (const [k, v] of Object.entries<string>(secret.data ?? {})) out[k] = Buffer.from(v, "base64").toString("utf8");
	return { ...out, ...(secret.stringData ?? {}) };
}

export interface PodContext {
	/** metadata.name of the pod (fieldRef); a Deployment's pods are named <deployment>-<hash>. */
	podName: string;
	/** ENV of the image (Dockerfile); the container's own settings win over it. */
	imageEnv?: Record<string, string>;
}

/**
 * The environment a container of a rendered workload sees, as the kubelet builds it: the image's
 * ENV, then envFrom in order (a later source wins), then env (wins over envFrom).
 */
export function containerEnv(objects: K8sObject[], container: any, ctx: PodContext): Record<string, string> {
	const env: Record<string, string> = { ...ctx.imageEnv };
	const source = (kind: "ConfigMap" | "Secret", name: string) => {
		const obj = find(objects, kind, name);
		return kind === "ConfigMap" ? (obj.data ?? {}) : secretData(obj);
	};
	for (const from of container.envFrom ?? []) {
		if (from.configMapRef) Object.assign(env, source("ConfigMap", from.configMapRef.name));
		else if (from.secretRef) Object.assign(env, source("Secret", from.secretRef.name));
	}
	for (const e of container.env ?? []) {
		if (e.value !== undefined) env[e.name] = String(e.value);
		else if (e.valueFrom?.fieldRef?.fieldPath === "metadata.name") env[e.name] = ctx.podName;
		else if (e.valueFrom?.configMapKeyRef) env[e.name] = source("ConfigMap", e.valueFrom.configMapKeyRef.name)[e.valueFrom.configMapKeyRef.key];
		else if (e.valueFrom?.secretKeyRef) env[e.name] = source("Secret", e.valueFrom.secretKeyRef.name)[e.valueFrom.secretKeyRef.key];
		else throw new Error(`env ${e.name}: unsupported source ${JSON.stringify(e.valueFrom)}`);
	}
	return env;
}

// ---------- Dockerfile ----------

export interface DockerInstruction {
	op: string;
	args: string;
}

export interface DockerStage {
	from: string;
	name?: string;
	instructions: DockerInstruction[];
}

export function readDockerfile(file = path.join(ROOT, "Dockerfile")): DockerStage[] {
	const text = fs.readFileSync(file, "utf8").replace(/\\\r?\n/g, " ");
	const stages: DockerStage[] = [];
	for (const raw of text.split(/\r?\n/)) {
		const line = raw.trim();
		if (!line || line.startsWith("#")) continue;
		const m = /^([A-Za-z]+)\s+(.*)$/.exec(line);
		if (!m) throw new Error(`Dockerfile: cannot read "${line}"`);
		const op = m[1].toUpperCase();
		const args = m[2].replace(/\s+/g, " ").trim();
		if (op === "FROM") {
			const from = /^(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args);
			if (!from) throw new Error(`Dockerfile: cannot read FROM ${args}`);
			stages.push({ from: from[1], name: from[2], instructions: [] });
		} else {
			if (!stages.length) throw new Error(`Dockerfile: ${op} before FROM`);
			stages[stages.length - 1].instructions.push({ op, args });
		}
	}
	return stages;
}

/** ENV instructions of a stage: `ENV A=1 B=2` (quotes allowed) and the legacy `ENV A 1`. */
export function stageEnv(stage: DockerStage): Record<string, string> {
	const env: Record<string, string> = {};
	for (const { op, args } of stage.instructions) {
		if (op !== "ENV") continue;
		if (!args.includes("=")) {
			const [k, ...rest] = args.split(" ");
			env[k] = rest.join(" ");
			continue;
		}
		for (const m of args.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("(?:[^"\\]|\\.)*"|'[^']*'|\S*)/g)) env[m[1]] = m[2].replace(/^(["'])(.*)\1$/, "$2");
	}
	return env;
}

/**
 * What a container of the final image runs: WORKDIR, ENV, USER, EXPOSE, and the exec-form ENTRYPOINT
 * and CMD (a shell form would put a shell in front of node as PID 1, so it is refused here).
 */
export function runtimeImage(stages = readDockerfile()) {
	const stage = stages[stages.length - 1];
	const last = (op: string) => [...stage.instructions].reverse().find(i => i.op === op)?.args;
	const execForm = (op: string): string[] => {
		const args = last(op);
		if (args === undefined) return [];
		let parsed: unknown;
		try {
			parsed = JSON.parse(args);
		} catch {
			parsed = undefined;
		}
		if (!Array.isArray(parsed)) throw new Error(`Dockerfile runtime stage: ${op} must be the exec form (a JSON array), not "${args}"`);
		return parsed as string[];
	};
	const exposed = stage.instructions
		.filter(i => i.op === "EXPOSE")
		.flatMap(i => i.args.split(" "))
		.map(p => Number(p.split("/")[0]));
	return {
		stage,
		workdir: last("WORKDIR") ?? "/",
		env: stageEnv(stage),
		user: last("USER"),
		entrypoint: execForm("ENTRYPOINT"),
		cmd: execForm("CMD"),
		exposed,
	};
}

export type RuntimeImage = ReturnType<typeof runtimeImage>;

/**
 * The build context Docker sends: every file under the root that .dockerignore does not exclude.
 * Patterns follow Docker's matching (`*`, `?`, `**`; a matched directory excludes its contents);
 * exceptions (`!`) are refused, since this file uses none.
 */
export function dockerContextFiles(root = ROOT): string[] {
	const patterns = fs
		.readFileSync(path.join(root, ".dockerignore"), "utf8")
		.split(/\r?\n/)
		.map(l => l.trim())
		.filter(l => l && !l.startsWith("#"));
	if (patterns.some(p => p.startsWith("!"))) throw new Error(".dockerignore exceptions (!) are not supported by this reader");
	const toRegex = (pattern: string) =>
		new RegExp(
			"^" +
				path.posix
					.normalize(pattern.replace(/^\/+/, ""))
					.split(/(\*\*\/?|\*|\?)/)
					.map(part =>
						part.startsWith("**") ? "(?:.*/)?" : part === "*" ? "[^/]*" : part === "?" ? "[^/]" : part.replace(/[.+^${}()|[\]\\]/g, "\\$&"),
					)
					.join("") +
				"$",
		);
	const excluded = patterns.map(toRegex);
	const out: string[] = [];
	const walk = (rel: string) => {
		for (const entry of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
			const p = rel ? `${rel}/${entry.name}` : entry.name;
			if (excluded.some(re => re.test(p))) continue;
			if (entry.isDirectory()) walk(p);
			else out.push(p);
		}
	};
	walk("");
	return out.sort();
}

// ---------- docker-compose.yml ----------

/** Compose's interpolation: ${VAR}, ${VAR:-default}, ${VAR-default}, ${VAR:?error}, $VAR, $$. */
export function interpolate(value: string, env: Record<string, string | undefined>): string {
	return value.replace(/\$(?:\$|\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))/g, (match, braced, op, arg, bare) => {
		if (match === "$$") return "$";
		const name = braced ?? bare;
		const v = env[name];
		if (!op) return v ?? "";
		const unset = op.startsWith(":") ? v === undefined || v === "" : v === undefined;
		if (op.endsWith("-")) return unset ? arg : (v as string);
		if (unset) throw new Error(`compose: required variable ${name} is missing: ${arg}`);
		return v as string;
	});
}

function interpolateDeep(node: any, env: Record<string, string | undefined>): any {
	if (typeof node === "string") return interpolate(node, env);
	if (Array.isArray(node)) return node.map(n => interpolateDeep(n, env));
	if (node && typeof node === "object") return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, interpolateDeep(v, env)]));
	return node;
}

/** docker-compose.yml as compose sees it: merge keys resolved, then variables interpolated. */
export function loadCompose(env: Record<string, string | undefined> = {}, file = path.join(ROOT, "docker-compose.yml")): any {
	const [doc] = parseYamlDocuments(fs.readFileSync(file, "utf8"), "docker-compose.yml");
	return interpolateDeep(doc, env);
}

/** A compose service's environment as a map (compose accepts a map or a KEY=VALUE list). */
export function composeEnv(service: any): Record<string, string> {
	const env = service.environment ?? {};
	if (Array.isArray(env)) return Object.fromEntries(env.map((kv: string) => [kv.split("=")[0], kv.includes("=") ? kv.slice(kv.indexOf("=") + 1) : ""]));
	// YAML scalars: a string, number or boolean, or null for an empty value.
	const scalar = (v: unknown) => (v === null ? "" : typeof v === "string" || typeof v === "number" || typeof v === "boolean" ? String(v) : JSON.stringify(v));
	return Object.fromEntries(Object.entries(env as Record<string, unknown>).map(([k, v]) => [k, scalar(v)]));
}

// ---------- config/ ----------

/**
 * Every environment variable config/ reads: the names loadConfig asks its env for (recorded through a
 * Proxy, with every value unset so the defaults apply), plus every name the source passes to a
 * reader, so that a variable read only under a condition is not missed.
 */
export function configVariables(): string[] {
	// Required here rather than imported: config/ parses process.env when first loaded.
	// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use, synchronously (callers are synchronous)
	const { loadConfig } = require("../../config") as typeof import("../../config");
	const seen = new Set<string>();
	loadConfig(new Proxy({}, { get: (_t, key) => (typeof key === "string" && seen.add(key), undefined) }));
	const source = fs.readFileSync(path.join(ROOT, "config/index.ts"), "utf8");
	for (const m of source.matchAll(/\(\s*env\s*,\s*"([A-Z][A-Z0-9_]*)"/g)) seen.add(m[1]);
	for (const m of source.matchAll(/\benv(?:\.([A-Z][A-Z0-9_]*)|\[\s*"([A-Z][A-Z0-9_]*)"\s*\])/g)) seen.add(m[1] ?? m[2]);
	return [...seen].sort();
}
