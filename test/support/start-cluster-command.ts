/**
 * `npm run start:cluster` as a user runs it in a terminal: the command itself (build included) in a
 * process group of its own, like a terminal's foreground job (Ctrl-C is SIGINT to the group), over
 * this run's NATS and Redis, with only the environment it is given; what it prints is collected.
 */
import { spawn, type ChildProcess } from "child_process";
import os from "os";
import { runCommand } from "./commands";
import { waitFor } from "./http";
import { ROOT } from "./processes";
import { NATS_URL, REDIS_URL } from "./servers";

export class StartClusterCommand {
	output = "";
	readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

	private constructor(readonly child: ChildProcess) {
		child.stdout!.on("data", chunk => (this.output += chunk));
		child.stderr!.on("data", chunk => (this.output += chunk));
		this.exited = new Promise(resolve => child.once("exit", (code, signal) => resolve({ code, signal })));
	}

	/** Starts it with `env` (PORT, NAMESPACE, DATA_DIR, …) and waits until it says every process is up; throws with its output if it exits first. */
	static async start(env: Record<string, string>, timeoutMs: number): Promise<StartClusterCommand> {
		const child = spawn("npm", ["run", "start:cluster"], {
			cwd: ROOT,
			detached: true,
			stdio: ["ignore", "pipe", "pipe"],
			env: {
				PATH: process.env.PATH ?? "",
				HOME: process.env.HOME ?? os.tmpdir(),
				// 0: any free ports (the defaults, 3001… and 3030…, may be taken on a shared machine).
				HEALTH_PORT: "0",
				METRICS_PORT: "0",
				TRANSPORTER: NATS_URL,
				CACHER: REDIS_URL,
				...env,
			},
		});
		const command = new StartClusterCommand(child);
		const upOrGone = () => command.output.includes("Ctrl-C stops every process.") || !command.running;
		try {
			await waitFor("the cluster to say it is up", () => Promise.resolve(upOrGone()), timeoutMs, 250);
		} catch (err) {
			command.kill();
			throw err;
		}
		if (!command.running) throw new Error(`start:cluster exited with ${child.exitCode ?? child.signalCode}:\n${command.output.slice(-4000)}`);
		return command;
	}

	get running(): boolean {
		return this.child.exitCode === null && this.child.signalCode === null;
	}

	/** The gateway's /api/v3 address from the banner, on 127.0.0.1. */
	get url(): string {
		return /^Gateway: (\S+)$/m.exec(this.output)![1].replace("localhost", "127.0.0.1");
	}

	/** The banner's line that puts root's token in T, run by a shell as a user pastes it. */
	async pastedToken(): Promise<string> {
		return (await runCommand("sh", ["-c", `${/^ {2}(export T=.*)$/m.exec(this.output)![1]}; printf %s "$T"`])).stdout;
	}

	/** Ctrl-C: SIGINT to the process group; resolves when npm has exited. */
	async interrupt(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
		if (this.running) process.kill(-this.child.pid!, "SIGINT");
		return this.exited;
	}

	/** Only after a failure: SIGKILL to whatever is left of the group. */
	kill(): void {
		try {
			process.kill(-this.child.pid!, "SIGKILL");
		} catch {
			// already gone
		}
	}
}
