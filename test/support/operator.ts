/**
 * The operator's commands as docs/operations.md gives them (`npm run backup -- <dir>`, `npm run
 * restore`, `npm run copy-store`), run as a user runs them: npm in the project's root, with the
 * environment the service has, their output and exit code kept.
 */
import { spawn } from "child_process";
import { ROOT } from "./processes";

export interface CommandResult {
	/** The exit code; null when a signal ended it. */
	code: number | null;
	stdout: string;
	stderr: string;
}

export interface RunningCommand {
	result: Promise<CommandResult>;
	/** What it has printed so far. */
	stdout(): string;
	/** Signals npm and what it started (its own process group), as a kill of the machine would. */
	kill(signal: NodeJS.Signals): void;
}

/** Starts `npm run <script> -- <args>` with `env` in its own process group. */
export function startNpm(script: string, args: string[], env: Record<string, string>): RunningCommand {
	const child = spawn("npm", ["run", "--silent", script, "--", ...args], {
		cwd: ROOT,
		env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/root", ...env },
		detached: true,
	});
	const out: Buffer[] = [];
	const err: Buffer[] = [];
	child.stdout.on("data", (b: Buffer) => out.push(b));
	child.stderr.on("data", (b: Buffer) => err.push(b));
	const result = new Promise<CommandResult>((resolve, reject) => {
		child.once("error", reject);
		child.once("close", code => resolve({ code, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() }));
	});
	return { result, stdout: () => Buffer.concat(out).toString(), kill: signal => process.kill(-child.pid!, signal) };
}

/** `npm run <script> -- <args>` with `env`; resolves when it exits, whatever its code. */
export const npmRun = (script: string, args: string[], env: Record<string, string>): Promise<CommandResult> => startNpm(script, args, env).result;
