/**
 * The python-gitlab releases the client tests run, each in its own virtual environment that
 * test/support/python-gitlab/install.sh made (.ci/peers runs it) under PYTHON_CLIENTS_DIR.
 * A missing or outdated environment fails the test at once with the command that installs it;
 * it never skips. See docs/clients.md#running-them.
 */
import fs from "fs";
import path from "path";
import { runWalk, type WalkRun } from "./client-walks";
import { PEER_CACHE } from "./peer-cache";

export const PYTHON_CLIENTS_DIR = process.env.PYTHON_CLIENTS_DIR ?? path.join(PEER_CACHE, "python-clients");
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

/** Runs one of the walk scripts in test/support/python-gitlab with `release`, its input as JSON on stdin. */
export function runPythonWalk(release: PythonGitlabRelease, script: string, input: unknown): Promise<WalkRun> {
	return runWalk(pythonGitlab(release), [path.join(HERE, script)], input);
}
