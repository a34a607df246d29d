/**
 * The project's services as separate Node processes (moleculer-runner on the compiled dist/), as
 * production runs them. One place for spawning, readiness, output capture, stopping and memory
 * readings, shared by the e2e tests (test/support/cluster.ts) and the benchmarks (bench/), which
 * also time the start-up.
 */
import { spawn, type ChildProcess } from "child_process";
import fs from "fs";
import net from "net";
import path from "path";
import { performance } from "perf_hooks";

function findRoot(dir: string): string {
	for (let d = dir; ; d = path.dirname(d)) {
		if (fs.existsSync(path.join(d, "package.json"))) return d;
		if (path.dirname(d) === d) throw new Error(`no package.json above ${dir}`);
	}
}

/** The project root, whether this file runs from the sources (ts-jest) or from dist/. */
export const ROOT = findRoot(__dirname);
export const RUNNER = path.join(ROOT, "node_modules/moleculer/bin/moleculer-runner.js");
export const BROKER_CONFIG = path.join(ROOT, "dist/moleculer.config.js");
export const SERVICE_DIR = path.join(ROOT, "dist/services");

/**
 * Ports handed out here: below Linux's ephemeral range (32768–60999), where the kernel picks the
 * local ports of outgoing connections. A port the OS picked for us (`listen(0)`) is in that range,
 * and a test's own connections to NATS or Redis could take it before the process under test binds
 * it (EADDRINUSE).
 */
const PORT_RANGE = { from: 20000, to: 32000 };
const handedOut = new Set<number>();

/** Whether nothing listens on `port` on any address (as the gateway binds 0.0.0.0). */
function isFree(port: number): Promise<boolean> {
	return new Promise(resolve => {
		const server = net.createServer();
		server.unref();
		server.once("error", () => resolve(false));
		server.listen(port, "0.0.0.0", () => server.close(() => resolve(true)));
	});
}

/** A port that was free a moment ago, never one handed out before by this process. */
export async function freePort(): Promise<number> {
	for (let attempt = 0; attempt < 200; attempt++) {
		const port = PORT_RANGE.from + Math.floor(Math.random() * (PORT_RANGE.to - PORT_RANGE.from));
		if (handedOut.has(port) || !(await isFree(port))) continue;
		handedOut.add(port);
		return port;
	}
	throw new Error(`no free port between ${PORT_RANGE.from} and ${PORT_RANGE.to}`);
}

export interface ManagedProcess {
	name: string;
	child: ChildProcess;
	/** Output chunks (stdout and stderr interleaved), the latest `maxOutputChunks` of them. */
	output: string[];
	/** performance.now() when spawned, and when the readiness check first passed. */
	spawnedAt: number;
	readyAt: number;
	/** The inspector's WebSocket address, when the process runs with `--inspect` (see liveMemory). */
	inspectorUrl?: string;
}

const sleep = (ms: number) => new Promise(r => setTimeout(r, ms));

export interface LaunchOptions {
	name: string;
	/** The executable (default: this node). */
	command?: string;
	/** Its arguments. */
	args: string[];
	env: Record<string, string>;
	/** Working directory (default: the project root). */
	cwd?: string;
	/** How many output chunks to keep (default 500; Infinity keeps everything). */
	maxOutputChunks?: number;
	/** Its own process group, so that only its launcher signals it (not a terminal's Ctrl-C). */
	detached?: boolean;
}

/** Spawns `node <args>` (or another command) and captures its output; does not wait for anything. */
export function launch(opts: LaunchOptions): ManagedProcess {
	const spawnedAt = performance.now();
	const child = spawn(opts.command ?? process.execPath, opts.args, {
		cwd: opts.cwd ?? ROOT,
		env: opts.env,
		stdio: ["ignore", "pipe", "pipe"],
		detached: opts.detached,
	});
	const proc: ManagedProcess = { name: opts.name, child, output: [], spawnedAt, readyAt: 0 };
	const max = opts.maxOutputChunks ?? 500;
	const keep = (chunk: Buffer) => {
		const text = chunk.toString();
		proc.output.push(text);
		if (proc.output.length > max) proc.output.shift();
		// Kept apart from the output, which a long run rotates.
		proc.inspectorUrl ??= /Debugger listening on (ws:\/\/\S+)/.exec(text)?.[1];
	};
	child.stdout.on("data", keep);
	child.stderr.on("data", keep);
	return proc;
}

/**
 * Polls `ready()` until it passes (then sets `readyAt`); a process that exits first, or is not ready
 * in time (it is then killed), is an error carrying its output.
 */
export async function waitUntilReady(proc: ManagedProcess, ready: () => Promise<boolean>, opts: { timeoutMs?: number; pollMs?: number } = {}): Promise<void> {
	const timeoutMs = opts.timeoutMs ?? 30000;
	const deadline = proc.spawnedAt + timeoutMs;
	const { child } = proc;
	for (;;) {
		if (child.exitCode !== null || child.signalCode !== null)
			throw new Error(`${proc.name} exited with ${child.exitCode ?? child.signalCode} before it was ready:\n${proc.output.join("")}`);
		if (await ready().catch(() => false)) break;
		if (performance.now() > deadline) {
			child.kill("SIGKILL");
			throw new Error(`${proc.name} was not ready within ${timeoutMs} ms:\n${proc.output.join("")}`);
		}
		await sleep(opts.pollMs ?? 100);
	}
	proc.readyAt = performance.now();
}

export interface StartOptions extends LaunchOptions {
	/** Resolves true once the process serves; it is polled every `pollMs`. */
	ready: () => Promise<boolean>;
	readyTimeoutMs?: number;
	pollMs?: number;
}

/** launch + waitUntilReady. */
export async function startProcess(opts: StartOptions): Promise<ManagedProcess> {
	const proc = launch(opts);
	await waitUntilReady(proc, opts.ready, { timeoutMs: opts.readyTimeoutMs, pollMs: opts.pollMs });
	return proc;
}

/** Sends `signal`; a process still running after `forceAfterMs` is killed. Resolves with the exit code. */
export async function stopProcess(proc: ManagedProcess, signal: NodeJS.Signals = "SIGTERM", forceAfterMs = 15000): Promise<number | null> {
	const { child } = proc;
	if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
	const exited = new Promise<number | null>(resolve => child.once("exit", code => resolve(code)));
	child.kill(signal);
	const force = setTimeout(() => child.kill("SIGKILL"), forceAfterMs);
	const code = await exited;
	clearTimeout(force);
	return code;
}

/** 200 from a URL (short timeout: a readiness probe must not hang the poll loop). */
export async function answers200(url: string): Promise<boolean> {
	const res = await fetch(url, { signal: AbortSignal.timeout(2000) }).catch(() => null);
	if (!res) return false;
	await res.arrayBuffer().catch(() => undefined);
	return res.status === 200;
}

export interface ServiceProcess extends ManagedProcess {
	/** The SERVICES value ("" = every service in the directory, the all-in-one process). */
	services: string;
	env: Record<string, string>;
	healthPort: number;
}

export interface ServiceProcessOptions {
	name: string;
	/** SERVICES value: "api", "labels,accounts", "workers/irc-sender"; "" = all services. */
	services: string;
	/** Environment of the process (HEALTH_PORT and METRICS_PORT are picked when absent). */
	env: Record<string, string>;
	readyTimeoutMs?: number;
	pollMs?: number;
	maxOutputChunks?: number;
	detached?: boolean;
}

/**
 * The environment of one all-in-one process (`npm start`'s shape: every service, no transporter)
 * on `dataDir`, for tests that launch it themselves (under strace, without root's privileges).
 */
export function allInOneEnv(opts: { dataDir: string; port: number; healthPort: number; metricsPort: number; rootToken: string; secretsKey: string }) {
	return {
		PATH: process.env.PATH ?? "",
		NODE_ENV: "production",
		SERVICEDIR: SERVICE_DIR,
		SERVICES: "",
		DATA_DIR: opts.dataDir,
		PORT: String(opts.port),
		HEALTH_PORT: String(opts.healthPort),
		METRICS_PORT: String(opts.metricsPort),
		GITLAB_ROOT_TOKEN: opts.rootToken,
		GITLAB_ROOT_PASSWORD: "root-password-123",
		SECRETS_KEY: opts.secretsKey,
	};
}

/** node arguments that run moleculer-runner on the compiled config, as the image does. */
export const runnerArgs = () => [RUNNER, "--config", BROKER_CONFIG];

/** /ready on a health port answers 200. */
export const healthReady = (healthPort: number) => () => answers200(`http://127.0.0.1:${healthPort}/ready`);

/**
 * A moleculer-runner process on dist/ (run `npm run build` first), ready when its /ready answers
 * 200. `onLaunch` sees the process before the wait (e.g. to register it for clean-up).
 */
export async function startServiceProcess(opts: ServiceProcessOptions, onLaunch?: (proc: ServiceProcess) => void): Promise<ServiceProcess> {
	const healthPort = opts.env.HEALTH_PORT ? Number(opts.env.HEALTH_PORT) : await freePort();
	const env: Record<string, string> = {
		SERVICEDIR: SERVICE_DIR,
		...opts.env,
		SERVICES: opts.services,
		HEALTH_PORT: String(healthPort),
		METRICS_PORT: opts.env.METRICS_PORT ?? String(await freePort()),
	};
	const proc: ServiceProcess = Object.assign(
		launch({ name: opts.name, args: runnerArgs(), env, maxOutputChunks: opts.maxOutputChunks, detached: opts.detached }),
		{
			services: opts.services,
			env,
			healthPort,
		},
	);
	onLaunch?.(proc);
	await waitUntilReady(proc, healthReady(healthPort), { timeoutMs: opts.readyTimeoutMs, pollMs: opts.pollMs });
	return proc;
}

/** Resident set size of a process in bytes (Linux /proc), or null when it is gone. */
export function rssBytes(pid: number | undefined): number | null {
	if (!pid) return null;
	try {
		const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
		const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
		return m ? Number(m[1]) * 1024 : null;
	} catch {
		return null;
	}
}

/**
 * What a process started with `--inspect=127.0.0.1:0` still holds: two full garbage collections
 * through its inspector, then its `process.memoryUsage()`. RSS keeps the high-water mark of V8's
 * heap sizing (the old generation is let grow to a few times the live data between full
 * collections), so a leak is measured here, on the live heap and on the memory outside it.
 */
export async function liveMemory(proc: ManagedProcess): Promise<NodeJS.MemoryUsage> {
	if (!proc.inspectorUrl) throw new Error(`${proc.name} has no inspector (start it with --inspect=127.0.0.1:0)`);
	const ws = new WebSocket(proc.inspectorUrl);
	const pending = new Map<number, { method: string; resolve: (result: unknown) => void; reject: (err: Error) => void }>();
	ws.onmessage = event => {
		const reply = JSON.parse(String(event.data)) as { id?: number; result?: unknown; error?: { message: string } };
		const waiting = reply.id === undefined ? undefined : pending.get(reply.id);
		if (!waiting) return;
		pending.delete(reply.id!);
		if (reply.error) waiting.reject(new Error(`${waiting.method}: ${reply.error.message}`));
		else waiting.resolve(reply.result);
	};
	// A process that exits meanwhile answers nothing more: its pending calls fail instead of waiting.
	ws.onclose = () => {
		for (const waiting of pending.values()) waiting.reject(new Error(`${proc.name}: its inspector closed during ${waiting.method}`));
		pending.clear();
	};
	let lastId = 0;
	const call = (method: string, params: object = {}) =>
		new Promise<unknown>((resolve, reject) => {
			const id = ++lastId;
			pending.set(id, { method, resolve, reject });
			ws.send(JSON.stringify({ id, method, params }));
		});
	try {
		await new Promise((resolve, reject) => {
			ws.onopen = resolve;
			ws.onerror = () => reject(new Error(`${proc.name}: cannot reach its inspector at ${proc.inspectorUrl}`));
		});
		// The second collection frees what the first only finalised (weak references, finalizers).
		await call("HeapProfiler.collectGarbage");
		await call("HeapProfiler.collectGarbage");
		const evaluated = (await call("Runtime.evaluate", { expression: "JSON.stringify(process.memoryUsage())", returnByValue: true })) as {
			result: { value: string };
		};
		return JSON.parse(evaluated.result.value) as NodeJS.MemoryUsage;
	} finally {
		ws.close();
	}
}

/** SERVICES names of the compiled services that would run: "labels", "workers/irc-sender". */
export function serviceNames(): string[] {
	const found: string[] = [];
	for (const [dir, prefix] of [
		[SERVICE_DIR, ""],
		[path.join(SERVICE_DIR, "workers"), "workers/"],
	] as const) {
		if (!fs.existsSync(dir)) continue;
		for (const f of fs.readdirSync(dir)) if (f.endsWith(".service.js")) found.push(prefix + f.slice(0, -".service.js".length));
	}
	return found.sort();
}

/**
 * A metric's value on the Prometheus endpoint at `metricsPort`: the first sample of `name` whose
 * labels include `labels`; null when there is none.
 */
export async function metricValue(metricsPort: number, name: string, labels: Record<string, string> = {}): Promise<number | null> {
	const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`, { signal: AbortSignal.timeout(2000) })).text();
	const wanted = Object.entries(labels).map(([label, value]) => `${label}="${value}"`);
	for (const line of text.split("\n")) {
		if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
		if (wanted.every(w => line.includes(`{${w}`) || line.includes(`,${w}`))) return Number(line.slice(line.lastIndexOf(" ") + 1));
	}
	return null;
}

/**
 * Ready processes are not yet known to each other (discovery takes a moment): waits until the node
 * whose metrics are on `metricsPort` counts `nodes` nodes online (Moleculer's own gauge), up to 30 s.
 */
export async function nodeSeesAll(metricsPort: number, nodes: number, cancelled: () => boolean = () => false): Promise<boolean> {
	const deadline = Date.now() + 30000;
	while (Date.now() < deadline && !cancelled()) {
		const online = await metricValue(metricsPort, "moleculer_registry_nodes_online_total").catch(() => null);
		if (online !== null && online >= nodes) return true;
		await new Promise(r => setTimeout(r, 200));
	}
	return false;
}
