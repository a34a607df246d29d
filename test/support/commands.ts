/**
 * Runs a command to its end without blocking the test's event loop. A test that holds connections
 * (a kept-alive HTTP socket, NATS, Redis, a peer it serves) never waits synchronously
 * (`spawnSync`, `execFileSync`): while it waits, servers close idle sockets, heartbeats go
 * unanswered, and the first request afterwards meets a socket the other side has closed.
 */
import { spawn } from "child_process";

export interface CommandRun {
	/** The exit code; null when a signal ended it (`signal`). */
	status: number | null;
	signal: NodeJS.Signals | null;
	stdout: string;
	stderr: string;
	/** stdout as bytes, for binary output. */
	stdoutBytes: Buffer;
}

export interface CommandOptions {
	/** Written to its stdin, which is then closed. */
	input?: string | Buffer;
	/** The whole environment (default: this process's). */
	env?: NodeJS.ProcessEnv;
	cwd?: string;
	/** Then SIGKILL, as spawnSync's `timeout` does (the run ends with signal SIGKILL). */
	timeoutMs?: number;
}

export function runCommand(command: string, args: string[], opts: CommandOptions = {}): Promise<CommandRun> {
	return new Promise((resolve, reject) => {
		const child = spawn(command, args, { env: opts.env, cwd: opts.cwd, stdio: ["pipe", "pipe", "pipe"] });
		const out: Buffer[] = [];
		const err: Buffer[] = [];
		child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
		child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
		const timer = opts.timeoutMs ? setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs) : undefined;
		// Only a command that could not start is an error; a non-zero exit is a result.
		child.once("error", e => (clearTimeout(timer), reject(e)));
		child.once("close", (status, signal) => {
			clearTimeout(timer);
			const stdoutBytes = Buffer.concat(out);
			resolve({ status, signal, stdout: stdoutBytes.toString("utf8"), stderr: Buffer.concat(err).toString("utf8"), stdoutBytes });
		});
		child.stdin.on("error", () => undefined);
		child.stdin.end(opts.input);
	});
}
