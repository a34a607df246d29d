/**
 * The python-gitlab releases the client tests run, each in its own virtual environment that
 * test/support/python-gitlab/install.sh made (CI's .ci/run runs it) under PYTHON_CLIENTS_DIR.
 * A missing or outdated environment fails the test at once with the command that installs it;
 * it never skips. See docs/clients.md#running-them.
 */
import { spawn } from "child_process";
import fs from "fs";
import path from "path";

export const PYTHON_CLIENTS_DIR = process.env.PYTHON_CLIENTS_DIR ?? "/root/.cache/gitlab-v3-ci/python-clients";
const HERE = path.join(__dirname, "python-gitlab");
const INSTALL = `bash ${path.relative(process.cwd(), path.join(HERE, "install.sh"))}`;

export type PythonGitlabRelease = "1.4.0" | "8.6.0";

/** The interpreter of the environment that holds `release`, as its pinned requirements say. */
export function pythonGitlab(release: PythonGitlabRelease): string {
	const venv = path.join(PYTHON_CLIENTS_DIR, `python-gitlab-${release}`);
	const wanted = fs.readFileSync(path.join(HERE, `requirements-${release}.txt`), "utf8");
	let installed: string | null = null;
	try {
		installed = fs.readFileSync(path.join(venv, "requirements.txt"), "utf8");
	} catch {
		// not installed
	}
	if (installed !== wanted) {
		const why = installed === null ? "is not installed" : "is installed with other requirements";
		throw new Error(`python-gitlab ${release} ${why} in ${venv}: run \`${INSTALL}\` (PYTHON_CLIENTS_DIR chooses the folder)`);
	}
	return path.join(venv, "bin", "python");
}

export interface ScriptRun {
	code: number | null;
	stdout: string;
	stderr: string;
}

/** Runs one of the walk scripts in test/support/python-gitlab with `release`, its input as JSON on stdin. */
export function runPythonWalk(release: PythonGitlabRelease, script: string, input: unknown): Promise<ScriptRun> {
	const python = pythonGitlab(release);
	return new Promise((resolve, reject) => {
		const child = spawn(python, [path.join(HERE, script)]);
		let stdout = "";
		let stderr = "";
		child.stdout.setEncoding("utf8").on("data", (s: string) => (stdout += s));
		child.stderr.setEncoding("utf8").on("data", (s: string) => (stderr += s));
		// A non-zero exit is a result to report; only a script that could not start is an error.
		child.on("error", reject);
		child.on("close", code => resolve({ code, stdout, stderr }));
		child.stdin.end(JSON.stringify(input));
	});
}
