/**
 * `npm run start:cluster`: the whole product split as production runs it, on one machine. Every
 * service and worker (each compiled file under dist/services) runs as its own moleculer-runner
 * process over the local NATS (JetStream) and Redis, with its own health and metrics ports; the
 * output of each is shown with its name; Ctrl-C (SIGINT), SIGTERM or SIGHUP stops them all. It runs
 * from its source (tsx, scripts/local.sh), so that a bad setting or a NATS or Redis that does not
 * answer stops it at once, before it builds the services.
 *
 * Settings come from the same environment the service reads (docs/configuration.md), with local
 * defaults: TRANSPORTER nats://127.0.0.1:4222, CACHER redis://127.0.0.1:6379, NAMESPACE local,
 * LOG_FORMAT text, DATA_DIR ./data (the files `npm start` uses, so either command opens the same data), and
 * SECRETS_KEY from DATA_DIR/.secrets-key when unset (the key `npm start` generates). PORT is the
 * gateway's; HEALTH_PORT and METRICS_PORT are the first of consecutive ports, one per process
 * (0: any free ports).
 */
// First: the environment config/ reads at import, with the local defaults and the generated key.
import { withLocalDefaults } from "./cluster-env";
import { spawn } from "child_process";
import path from "path";
import { loadConfig } from "../config";
import { freePort, nodeSeesAll, ROOT, SERVICE_DIR, serviceNames, startServiceProcess, stopProcess, type ServiceProcess } from "../test/support/processes";
import { createdRootFromLog } from "../lib/accounts/root-credentials";
import { startBanner } from "../lib/start/banner";
import { reachable } from "./reachable";

type Env = Record<string, string | undefined>;

export interface PlannedProcess {
	/** Shown name: "labels", "irc-sender". */
	name: string;
	/** SERVICES value: "labels", "workers/irc-sender". */
	services: string;
	healthPort: number;
	metricsPort: number;
}

export interface ClusterPlan {
	/** Environment shared by every process (the caller's, with the local defaults filled in). */
	env: Record<string, string>;
	port: number;
	processes: PlannedProcess[];
	dataDir: string;
}

/** Where each process goes; validates the settings as the services will (config/), before spawning anything. */
export async function planCluster(callerEnv: Env, services: string[]): Promise<ClusterPlan> {
	const env = withLocalDefaults(callerEnv);
	env.SERVICEDIR = SERVICE_DIR;
	const config = loadConfig(env);
	// Free ports the OS picks one at a time may repeat: each is taken once.
	const taken = new Set<number>();
	const anyFreePort = async (): Promise<number> => {
		for (;;) {
			const candidate = await freePort();
			if (!taken.has(candidate)) return (taken.add(candidate), candidate);
		}
	};
	const port = config.port || (await anyFreePort());
	const processes: PlannedProcess[] = [];
	// The gateway first, so that it keeps the configured ports' first place.
	const ordered = [...services].sort((a, b) => Number(b === "api") - Number(a === "api") || a.localeCompare(b));
	for (const [i, services] of ordered.entries())
		processes.push({
			name: path.basename(services),
			services,
			healthPort: config.healthPort ? config.healthPort + i : await anyFreePort(),
			metricsPort: config.metricsPort ? config.metricsPort + i : await anyFreePort(),
		});
	return { env: { ...env, PORT: String(port), DATA_DIR: config.dataDir }, port, processes, dataDir: config.dataDir };
}

/** Stops the start at once, naming the server, when NATS or Redis does not answer. */
async function requireServers(env: Record<string, string>): Promise<void> {
	const needed = [
		["NATS", "TRANSPORTER", env.TRANSPORTER, "nats-server -js -sd data/nats", "nats-server"],
		["Redis", "CACHER", env.CACHER, "redis-server --save ''", "redis-server"],
	] as const;
	for (const [server, variable, url, start, debian] of needed) {
		if (url && !(await reachable(url)))
			throw new Error(
				`${server} is not reachable at ${url} (${variable}). Start it in another shell: ${start}   ` +
					`(Debian's ${debian}, which \`npm test\` installs), or point ${variable} at a running one.`,
			);
	}
}

/**
 * `npm run build:tools` (the services, their broker configuration and the tools, such as the seed,
 * into dist/), its output shown. The tools' build, the one the test run makes first: there it has
 * nothing left to write, so it never rewrites files that running processes load.
 */
function buildServices(): Promise<void> {
	console.log("NATS and Redis answer. Building (tsc -p tsconfig.tools.json)…");
	const tsc = spawn(process.execPath, [path.join(ROOT, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.tools.json"], { cwd: ROOT, stdio: "inherit" });
	return new Promise((resolve, reject) => {
		tsc.once("error", reject);
		tsc.once("exit", code => (code === 0 ? resolve() : reject(new Error(`the build failed (tsc exited with ${code}): see its errors above`))));
	});
}

/** Forwards a process's output, each line prefixed with its name. */
function forward(proc: ServiceProcess, width: number) {
	const prefix = `${proc.name.padEnd(width)} | `;
	for (const [stream, out] of [
		[proc.child.stdout!, process.stdout],
		[proc.child.stderr!, process.stderr],
	] as const) {
		let rest = "";
		stream.on("data", (chunk: Buffer) => {
			const lines = (rest + chunk.toString()).split("\n");
			rest = lines.pop()!;
			for (const line of lines) out.write(`${prefix}${line}\n`);
		});
		stream.on("end", () => rest && out.write(`${prefix}${rest}\n`));
	}
}

async function main(): Promise<void> {
	// A bad setting, then a server that does not answer, stop the start before the build.
	loadConfig(process.env);
	await requireServers({ TRANSPORTER: process.env.TRANSPORTER ?? "", CACHER: process.env.CACHER ?? "" });
	await buildServices();
	const services = serviceNames();
	if (!services.includes("api")) throw new Error(`no compiled services in ${SERVICE_DIR}: the build made none`);
	const plan = await planCluster(process.env, services);
	const width = Math.max(...plan.processes.map(p => p.name.length));
	const running: ServiceProcess[] = [];
	let stopping: Promise<void> | null = null;

	const stopAll = (reason: string, code: number) => {
		if (stopping) return stopping;
		process.exitCode = code;
		console.log(`\n${reason}: stopping ${running.filter(p => p.child.exitCode === null && p.child.signalCode === null).length} processes…`);
		stopping = Promise.all(running.map(p => stopProcess(p, "SIGTERM", 20000))).then(codes => {
			const failed = running.filter((p, i) => codes[i] !== 0 && codes[i] !== null).map(p => p.name);
			console.log(failed.length ? `Stopped; not cleanly: ${failed.join(", ")}.` : "Stopped, every process exited cleanly.");
			if (failed.length) process.exitCode = 1;
		});
		return stopping;
	};
	for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, () => void stopAll(`Got ${signal}`, 0));

	const over = `${plan.env.TRANSPORTER} (namespace ${plan.env.NAMESPACE}) and ${plan.env.CACHER}`;
	console.log(`Starting ${plan.processes.length} processes over ${over}, data in ${plan.dataDir} …`);
	const started = await Promise.allSettled(
		plan.processes.map(p =>
			startServiceProcess(
				{
					name: p.name,
					services: p.services,
					env: { ...plan.env, NODE_ID: `${p.name}-${process.pid}`, HEALTH_PORT: String(p.healthPort), METRICS_PORT: String(p.metricsPort) },
					readyTimeoutMs: 60000,
					// Only this script signals them: one orderly SIGTERM each, whatever the terminal sends.
					detached: true,
				},
				proc => {
					running.push(proc);
					forward(proc, width);
					proc.child.once("exit", (code, signal) => {
						if (!stopping) void stopAll(`${proc.name} exited unexpectedly (${code ?? signal})`, 1);
					});
				},
			),
		),
	);
	const failure = started.find(r => r.status === "rejected");
	if (failure) {
		const reason: unknown = failure.reason;
		await stopAll(`Start-up failed: ${(reason instanceof Error ? reason.message : String(reason)).split("\n")[0]}`, 1);
		return;
	}
	if (stopping) return;
	const gateway = plan.processes.find(p => p.services === "api")!;
	if (!(await nodeSeesAll(gateway.metricsPort, plan.processes.length, () => !!stopping)))
		console.log(`The gateway does not see all ${plan.processes.length} processes yet: requests may answer 503 for a moment.`);
	if (stopping) return;

	const base = `http://localhost:${plan.port}/api/v3`;
	const secret = plan.env.INTERNAL_API_SECRET ? "" : " --secret <INTERNAL_API_SECRET>";
	const lines = startBanner({
		port: plan.port,
		createdRoot: createdRootFromLog(running.find(p => p.services === "accounts")?.output.join("") ?? ""),
		internalApiOn: !!plan.env.INTERNAL_API_SECRET,
		details: plan.processes.map(
			p => `  ${p.name.padEnd(width)}  health http://localhost:${p.healthPort}/ready   metrics http://localhost:${p.metricsPort}/metrics`,
		),
		commands: [`npm run seed -- --builds 100 --token $T --url ${base}${secret}`],
		stop: "Ctrl-C stops every process.",
	});
	console.log(lines.join("\n"));
}

if (require.main === module) {
	main().catch(err => {
		console.error(`start:cluster failed: ${(err as Error).message}`);
		process.exit(1);
	});
}
