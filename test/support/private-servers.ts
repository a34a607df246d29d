/**
 * NATS and Redis servers of a test's own, on free loopback ports, for fault tests that stop and
 * restart them. The machine's shared servers (4222, 6379) are never touched. A restart reuses the
 * port (and NATS its JetStream directory), as a restarted server in production would.
 */
import fs from "fs";
import net from "net";
import os from "os";
import path from "path";
import { freePort, startProcess, stopProcess, type ManagedProcess } from "./processes";

/** An executable by name, from PATH or where Debian puts it (nats-server lands in /usr/sbin). */
export function executable(name: string): string {
	const dirs = [...(process.env.PATH ?? "").split(path.delimiter), "/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"];
	for (const dir of dirs) {
		const candidate = path.join(dir, name);
		try {
			fs.accessSync(candidate, fs.constants.X_OK);
			return candidate;
		} catch {
			// not here
		}
	}
	throw new Error(`${name} is not installed (Debian: apt-get install ${name}; npm test installs it through .ci/peers)`);
}

export function listening(port: number): Promise<boolean> {
	return new Promise(resolve => {
		const socket = net.connect(port, "127.0.0.1");
		socket.once("connect", () => (socket.destroy(), resolve(true)));
		socket.once("error", () => resolve(false));
	});
}

export class PrivateServer {
	private proc?: ManagedProcess;
	readonly dir: string;

	private constructor(
		readonly kind: "nats" | "redis",
		readonly port: number,
	) {
		this.dir = fs.mkdtempSync(path.join(os.tmpdir(), `glv3-${kind}-`));
	}

	/** `monitoring`: its HTTP monitoring port too (/varz, /jsz: what KEDA's nats-jetstream scaler reads). */
	static async nats(opts: { monitoring?: boolean } = {}): Promise<PrivateServer> {
		const server = new PrivateServer("nats", await freePort());
		if (opts.monitoring) server.monitorPort = await freePort();
		return server.start();
	}

	/** The monitoring port (0: none). */
	monitorPort = 0;

	get monitorUrl(): string {
		return `http://127.0.0.1:${this.monitorPort}`;
	}

	static async redis(): Promise<PrivateServer> {
		return new PrivateServer("redis", await freePort()).start();
	}

	get url(): string {
		return `${this.kind}://127.0.0.1:${this.port}`;
	}

	get running(): boolean {
		return !!this.proc && this.proc.child.exitCode === null && this.proc.child.signalCode === null;
	}

	async start(): Promise<this> {
		const args =
			this.kind === "nats"
				? [
						...["-a", "127.0.0.1", "-p", String(this.port), "-js", "-sd", path.join(this.dir, "js")],
						...(this.monitorPort ? ["-m", String(this.monitorPort)] : []),
					]
				: ["--bind", "127.0.0.1", "--port", String(this.port), "--save", "", "--appendonly", "no", "--dir", this.dir, "--daemonize", "no"];
		this.proc = await startProcess({
			name: `${this.kind}-server:${this.port}`,
			command: executable(this.kind === "nats" ? "nats-server" : "redis-server"),
			args,
			env: {},
			ready: () => listening(this.port),
			readyTimeoutMs: 10000,
			pollMs: 50,
		});
		return this;
	}

	/** Stops the server (SIGKILL by default: an abrupt outage, not a polite shutdown). */
	async stop(signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
		if (this.proc) await stopProcess(this.proc, signal, 5000);
		this.proc = undefined;
	}

	/** Sends a signal without waiting (SIGSTOP/SIGCONT freeze and thaw it: connections stay open, nothing answers). */
	signal(signal: NodeJS.Signals): void {
		this.proc?.child.kill(signal);
	}

	async destroy(): Promise<void> {
		this.signal("SIGCONT");
		await this.stop();
		fs.rmSync(this.dir, { recursive: true, force: true });
	}
}
