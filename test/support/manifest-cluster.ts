/**
 * Runs containers described by deployment manifests (a Kubernetes Deployment of k8s/base, a
 * docker-compose service) as local processes, with the command and environment the manifest
 * gives, so that a wrong service name, a missing variable or a bad command fails a test.
 *
 * What a container has that a local process does not is mapped, always the same way:
 * - The image (Dockerfile runtime stage): its WORKDIR /app is a temporary directory laid out as the
 *   runtime stage lays it out — the compiled dist/ at the root, without source maps, build info or
 *   bench/ — with node_modules beside it (a link to the work tree's, which also has the dev
 *   dependencies). The image's ENV is the base of the environment; nothing of the test process's
 *   environment is passed on. "node" in the command is this Node.js.
 * - Networking: every pod or container has its own network namespace, so each declared container
 *   port gets a free local port; an environment value equal to a declared port number (PORT,
 *   HEALTH_PORT, METRICS_PORT) becomes that local port, and probes and health checks go to it.
 * - Cluster DNS: `host:port` in URL-valued variables is replaced by its stand-in (the machine's
 *   NATS and Redis on loopback for nats:4222 and redis:6379). An in-cluster name (no dot) without
 *   a stand-in fails the start.
 * - Volumes: each per-pod volume (emptyDir, tmpfs) is a fresh directory per process; each shared
 *   volume (a PersistentVolumeClaim, a named compose volume) is one directory shared by every
 *   process that mounts it; a volume mounted inside another (/data/artifacts in /data) is a link
 *   inside the outer one. Absolute paths in variables (DATA_DIR) are mapped through the mounts.
 * - Not reproduced: the read-only root filesystem and the non-root user (tests run as whoever runs
 *   them), resource limits, and preStop hooks (SIGTERM is sent at once).
 */
import { spawn, spawnSync, type ChildProcess } from "child_process";
import { ServiceBroker } from "moleculer";
import fs from "fs";
import os from "os";
import path from "path";
import { runCommand } from "./commands";
import { appContainer, containerEnv, literalEnv, portNumber, ROOT, type K8sObject, type RuntimeImage } from "./deploy-manifests";
import { freePort } from "./processes";

export interface HttpProbe {
	kind: "startup" | "readiness" | "liveness";
	port: number;
	path: string;
}

export interface Mount {
	path: string;
	/** Key of the volume: shared volumes with the same key are one directory. */
	volume: string;
	shared: boolean;
}

/** One container, in the container's own terms (container paths and ports). */
export interface ContainerSpec {
	/** Deployment or compose service name. */
	name: string;
	/** SERVICES as the manifest sets it. */
	services: string;
	argv: string[];
	workdir: string;
	env: Record<string, string>;
	ports: number[];
	mounts: Mount[];
	probes: HttpProbe[];
	/** A compose health check in CMD form (argv). */
	healthcheck?: string[];
	graceSeconds: number;
}

export interface RunningContainer {
	spec: ContainerSpec;
	child: ChildProcess;
	/** container port → local port */
	portMap: Map<number, number>;
	/** The environment the process was given (after the mappings). */
	env: Record<string, string>;
	output: string[];
	local(port: number): number;
}

export interface ManifestClusterOptions {
	/** "host:port" of in-cluster services → "host:port" of the stand-in. */
	standIns: Record<string, string>;
	/** Variables replaced whatever the manifest says, each with the reason (documented in the test). */
	overrides: Record<string, string>;
}

/** The image's /app, built from dist/ as the Dockerfile's runtime stage builds it. */
export function imageAppRoot(): string {
	const dist = path.join(ROOT, "dist");
	if (!fs.existsSync(path.join(dist, "moleculer.config.js"))) throw new Error("dist/ is not built (jest's global setup runs tsc -p tsconfig.build.json)");
	const app = fs.mkdtempSync(path.join(os.tmpdir(), "glv3-image-app-"));
	fs.cpSync(dist, app, {
		recursive: true,
		filter: src => {
			const rel = path.relative(dist, src);
			return !(rel === "bench" || rel.startsWith(`bench${path.sep}`) || rel === ".tsbuildinfo" || src.endsWith(".map"));
		},
	});
	fs.copyFileSync(path.join(ROOT, "package.json"), path.join(app, "package.json"));
	fs.symlinkSync(path.join(ROOT, "node_modules"), path.join(app, "node_modules"), "dir");
	return app;
}

/** The Moleculer service name each SERVICES value loads, read from the compiled files (as the runner would load them). */
export function serviceNames(appRoot: string, serviceDir: string, services: string[]): Record<string, string> {
	const script = `const path = require("path");
const out = {};
for (const s of JSON.parse(process.argv[1])) {
	const mod = require(path.resolve(${JSON.stringify(path.join(appRoot, serviceDir))}, s + ".service.js"));
	out[s] = (mod.default || mod).name;
}
process.stdout.write(JSON.stringify(out));`;
	const res = spawnSync(process.execPath, ["-e", script, JSON.stringify(services)], {
		cwd: appRoot,
		encoding: "utf8",
		env: { NODE_ENV: "production", LOG_LEVEL: "fatal" },
	});
	if (res.status !== 0) throw new Error(`reading service names failed:\n${res.stderr}`);
	return JSON.parse(res.stdout);
}

/**
 * A Deployment's pod as the kubelet would run its container: the image's ENTRYPOINT and CMD (or the
 * container's command and args), the environment the rendered objects give it, its mounts (an
 * emptyDir per pod, a claim shared) and its HTTP probes.
 */
export function podContainer(objects: K8sObject[], d: K8sObject, image: RuntimeImage, podName: string): ContainerSpec {
	const c = appContainer(d);
	const pod = d.spec.template.spec;
	// Kubernetes: command replaces the image's ENTRYPOINT, args its CMD.
	const argv = c.command ? [...c.command, ...(c.args ?? [])] : [...image.entrypoint, ...(c.args ?? image.cmd)];
	const mounts = (c.volumeMounts ?? []).map((m: any) => {
		const v = (pod.volumes as any[]).find(v => v.name === m.name);
		if (!v) throw new Error(`${d.metadata.name}: volumeMount ${m.name} has no volume`);
		if (v.emptyDir) return { path: m.mountPath, volume: m.name, shared: false };
		if (v.persistentVolumeClaim) return { path: m.mountPath, volume: `pvc/${v.persistentVolumeClaim.claimName}`, shared: true };
		throw new Error(`${d.metadata.name}: volume ${m.name} of an unsupported type`);
	});
	const probes = (["startup", "readiness", "liveness"] as const)
		.filter(kind => c[`${kind}Probe`])
		.map(kind => {
			const httpGet = c[`${kind}Probe`].httpGet;
			if (!httpGet) throw new Error(`${d.metadata.name}: ${kind}Probe is not an httpGet probe`);
			return { kind, port: portNumber(c, httpGet.port), path: httpGet.path };
		});
	return {
		name: d.metadata.name,
		services: literalEnv(c, "SERVICES")!,
		argv,
		workdir: c.workingDir ?? image.workdir,
		env: containerEnv(objects, c, { podName, imageEnv: image.env }),
		ports: (c.ports ?? []).map((p: any) => p.containerPort),
		mounts,
		probes,
		graceSeconds: pod.terminationGracePeriodSeconds ?? 30,
	};
}

export class ManifestCluster {
	readonly containers: RunningContainer[] = [];
	readonly appRoot = imageAppRoot();
	private readonly scratch = fs.mkdtempSync(path.join(os.tmpdir(), "glv3-volumes-"));
	private readonly sharedVolumes = new Map<string, string>();

	constructor(private readonly opts: ManifestClusterOptions) {}

	/** Local directory that stands for a container path of one container. */
	private mountDirs(spec: ContainerSpec): { containerPath: string; local: string }[] {
		const dirs: { containerPath: string; local: string }[] = [{ containerPath: spec.workdir, local: this.appRoot }];
		for (const m of [...spec.mounts].sort((a, b) => a.path.length - b.path.length)) {
			let local: string;
			if (m.shared) {
				local = this.sharedVolumes.get(m.volume) ?? fs.mkdtempSync(path.join(this.scratch, `${m.volume.replace(/\W/g, "_")}-`));
				this.sharedVolumes.set(m.volume, local);
			} else local = fs.mkdtempSync(path.join(this.scratch, `${spec.name}-${m.volume.replace(/\W/g, "_")}-`));
			const outer = dirs.filter(d => m.path.startsWith(d.containerPath + "/") && d.local !== this.appRoot).pop();
			if (outer) {
				// A volume inside another: reachable at the same relative place, as the mount makes it.
				const at = path.join(outer.local, path.relative(outer.containerPath, m.path));
				fs.mkdirSync(path.dirname(at), { recursive: true });
				fs.symlinkSync(local, at, "dir");
			}
			dirs.push({ containerPath: m.path, local });
		}
		return dirs;
	}

	private localPath(dirs: { containerPath: string; local: string }[], containerPath: string): string | undefined {
		const owner = dirs
			.filter(d => containerPath === d.containerPath || containerPath.startsWith(d.containerPath + "/"))
			.sort((a, b) => b.containerPath.length - a.containerPath.length)[0];
		return owner ? path.join(owner.local, path.relative(owner.containerPath, containerPath)) : undefined;
	}

	private mapUrlHosts(name: string, value: string): string {
		if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return value;
		return value
			.split(",")
			.map(part => {
				const m = /^([a-z][a-z0-9+.-]*:\/\/(?:[^@/]*@)?)([^/:?#]+)(?::(\d+))?(.*)$/i.exec(part.trim());
				if (!m) return part;
				const [, prefix, host, port, rest] = m;
				const key = `${host}:${port ?? ""}`;
				const standIn = this.opts.standIns[key];
				if (standIn) return `${prefix}${standIn}${rest}`;
				if (!host.includes(".") && host !== "localhost") throw new Error(`${name}=${value}: no stand-in for the in-cluster address ${key}`);
				return part;
			})
			.join(",");
	}

	async start(spec: ContainerSpec): Promise<RunningContainer> {
		const portMap = new Map<number, number>();
		for (const p of spec.ports) portMap.set(p, await freePort());
		const dirs = this.mountDirs(spec);
		const env: Record<string, string> = {};
		for (const [k, raw] of Object.entries(spec.env)) {
			let v = raw;
			if (k in this.opts.overrides) v = this.opts.overrides[k];
			else if (/^\d+$/.test(v) && portMap.has(Number(v))) v = String(portMap.get(Number(v)));
			else if (v.startsWith("/")) v = this.localPath(dirs, v) ?? v;
			else v = this.mapUrlHosts(k, v);
			env[k] = v;
		}
		for (const k of Object.keys(this.opts.overrides)) if (!(k in env)) throw new Error(`override ${k} is not set by the manifest of ${spec.name}`);
		const [exe, ...args] = spec.argv;
		if (exe !== "node") throw new Error(`${spec.name}: the command must start with node, got ${spec.argv.join(" ")}`);
		const cwd = this.localPath(dirs, spec.workdir);
		if (!cwd) throw new Error(`${spec.name}: working directory ${spec.workdir} is not in the image`);
		const child = spawn(process.execPath, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
		const running: RunningContainer = {
			spec,
			child,
			portMap,
			env,
			output: [],
			local: (port: number) => {
				const local = portMap.get(port);
				if (local === undefined) throw new Error(`${spec.name} declares no container port ${port}`);
				return local;
			},
		};
		const keep = (chunk: Buffer) => {
			running.output.push(chunk.toString());
			if (running.output.length > 400) running.output.shift();
		};
		child.stdout.on("data", keep);
		child.stderr.on("data", keep);
		this.containers.push(running);
		return running;
	}

	/** Polls an HTTP probe like the kubelet: success is a status from 200 to 399. */
	async probe(c: RunningContainer, probe: HttpProbe): Promise<number | null> {
		const res = await fetch(`http://127.0.0.1:${c.local(probe.port)}${probe.path}`, { signal: AbortSignal.timeout(3000) }).catch(() => null);
		return res ? res.status : null;
	}

	/** Runs a compose health check (CMD form) with container ports mapped to local ones; true when it exits 0. */
	async healthcheck(c: RunningContainer): Promise<boolean> {
		const [cmd, exe, ...args] = c.spec.healthcheck ?? [];
		if (cmd !== "CMD" || exe !== "node")
			throw new Error(`${c.spec.name}: health check must be ["CMD", "node", ...], got ${JSON.stringify(c.spec.healthcheck)}`);
		const mapped = args.map(a =>
			a.replace(/(127\.0\.0\.1|localhost):(\d+)/g, (all, host, port) => (c.portMap.has(Number(port)) ? `${host}:${c.portMap.get(Number(port))}` : all)),
		);
		return (await runCommand(process.execPath, mapped, { env: c.env, timeoutMs: 10000 })).status === 0;
	}

	logs(c: RunningContainer): string {
		return c.output.join("");
	}

	/** The startup probe, then readiness, as the kubelet runs them. */
	async untilReady(c: RunningContainer, timeoutMs: number): Promise<void> {
		for (const kind of ["startup", "readiness"]) {
			const probe = c.spec.probes.find(p => p.kind === kind)!;
			await this.until(
				c,
				`its ${kind} probe ${probe.path}`,
				async () => {
					const status = await this.probe(c, probe);
					return status !== null && status >= 200 && status < 400;
				},
				timeoutMs,
			);
		}
	}

	/** Polls `check` until it holds; fails at once, with the process's output, if the process exits. */
	async until(c: RunningContainer, what: string, check: () => Promise<boolean> | boolean, timeoutMs: number): Promise<void> {
		const deadline = Date.now() + timeoutMs;
		for (;;) {
			if (c.child.exitCode !== null) throw new Error(`${c.spec.name} exited with ${c.child.exitCode} before ${what}:\n${this.logs(c)}`);
			if (await check()) return;
			if (Date.now() > deadline) throw new Error(`${c.spec.name}: timed out waiting for ${what}:\n${this.logs(c)}`);
			await new Promise(r => setTimeout(r, 200));
		}
	}

	/** SIGTERM, as the kubelet or docker sends it; resolves with the exit code, or null if it had to be killed after the grace period. */
	async terminate(c: RunningContainer): Promise<{ code: number | null; signal: string | null; ms: number }> {
		const started = Date.now();
		if (c.child.exitCode !== null) return { code: c.child.exitCode, signal: null, ms: 0 };
		type Exit = { code: number | null; signal: string | null };
		const exited = new Promise<Exit>(resolve => c.child.once("exit", (code, signal) => resolve({ code, signal })));
		c.child.kill("SIGTERM");
		const timer = setTimeout(() => c.child.kill("SIGKILL"), c.spec.graceSeconds * 1000);
		const result = await exited;
		clearTimeout(timer);
		return { ...result, ms: Date.now() - started };
	}

	/** SIGTERM to every container at once; what each did, with its grace period. */
	terminateAll(): Promise<{ name: string; code: number | null; signal: string | null; ms: number; graceMs: number }[]> {
		return Promise.all(this.containers.map(async c => ({ name: c.spec.name, graceMs: c.spec.graceSeconds * 1000, ...(await this.terminate(c)) })));
	}

	async stop(): Promise<void> {
		await Promise.all(this.containers.map(c => this.terminate(c)));
		fs.rmSync(this.scratch, { recursive: true, force: true });
		fs.rmSync(this.appRoot, { recursive: true, force: true });
	}
}

/** A broker of the test's own on the cluster's NATS namespace: it sees which node hosts which service. */
export class ClusterObserver {
	readonly broker: ServiceBroker;

	constructor(namespace: string, natsUrl: string) {
		const transporter = { type: "NATS" as const, options: { url: natsUrl } };
		this.broker = new ServiceBroker({ namespace, nodeID: `observer-${namespace}`, transporter, logger: false });
	}

	start(): Promise<void> {
		return this.broker.start();
	}

	stop(): Promise<void> {
		return this.broker.stop();
	}

	/** node ID → names of the services seen on it (internal $node services left out). */
	servicesByNode(): Record<string, string[]> {
		const out: Record<string, string[]> = {};
		for (const s of this.broker.registry.getServiceList({ skipInternal: true, onlyAvailable: true }) as { name: string; nodeID: string }[])
			if (s.nodeID !== this.broker.nodeID) (out[s.nodeID] ??= []).push(s.name);
		for (const names of Object.values(out)) names.sort();
		return out;
	}

	/** Waits (up to the timeout) until exactly `expected` is seen; the caller then asserts what was seen. */
	async settle(expected: Record<string, string[]>, timeoutMs = 30000): Promise<Record<string, string[]>> {
		const canonical = (m: Record<string, string[]>) =>
			JSON.stringify(
				Object.entries(m)
					.map(([k, v]) => [k, [...v].sort()])
					.sort(),
			);
		const deadline = Date.now() + timeoutMs;
		while (Date.now() < deadline && canonical(this.servicesByNode()) !== canonical(expected)) await new Promise(r => setTimeout(r, 200));
		return this.servicesByNode();
	}
}
