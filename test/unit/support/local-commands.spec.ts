/**
 * What `npm start` and `npm test` do before anything else, on a machine whose node is older than
 * the project's (scripts/local.sh): fetch the Node .nvmrc names into a cache and put it first on
 * PATH, or fail at once with the command that fixes it; and what a missing peer looks like to
 * `.ci/peers --check`, which every jest run's global setup runs. npm and the old node are stand-ins
 * here (the real fetch is the README's walk, timed there): no network, no install.
 */
import fs from "fs";
import os from "os";
import path from "path";
import { runCommand } from "../../support/commands";
import { ROOT } from "../../support/processes";

const RELEASE = fs.readFileSync(path.join(ROOT, ".nvmrc"), "utf8").trim();
let dir: string;

beforeEach(() => {
	dir = fs.mkdtempSync(path.join(os.tmpdir(), "glv3-local-commands-"));
	fs.mkdirSync(path.join(dir, "bin"));
	// A Node 20 first on PATH, as the machine has it.
	fs.writeFileSync(path.join(dir, "bin/node"), '#!/bin/sh\n[ "$1" = --version ] && echo v20.20.2 || echo 20\n', { mode: 0o755 });
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** ensure_node in a shell whose PATH starts with the stand-ins, then the major of the node it leaves first on PATH. */
function ensureNode(npm: string) {
	fs.writeFileSync(path.join(dir, "bin/npm"), `#!/bin/sh\n${npm}\n`, { mode: 0o755 });
	const script = `. scripts/local.sh && ensure_node && node -p 'process.versions.node.split(".")[0]'`;
	return runCommand("bash", ["-c", script], {
		cwd: ROOT,
		env: { PATH: `${path.join(dir, "bin")}:/usr/bin:/bin`, HOME: dir, LOCAL_NODE_DIR: path.join(dir, "node") },
	});
}

it("fetches the Node .nvmrc names with npm into its cache, once, and puts it first on PATH", async () => {
	// The stand-in npm records its arguments and installs this process's Node (24) where --prefix says.
	const npm = `echo "$@" >> ${dir}/npm-calls
prefix=$(echo "$@" | sed -n 's/.*--prefix \\([^ ]*\\).*/\\1/p')
mkdir -p "$prefix/node_modules/.bin" && ln -s ${process.execPath} "$prefix/node_modules/.bin/node"`;
	const first = await ensureNode(npm);
	expect([first.status, first.stdout.trim()]).toEqual([0, "24"]);
	expect(first.stderr).toContain(`Node 24 is needed; the node on PATH is v20.20.2. Fetching node@${RELEASE} from the npm registry into ${dir}/node`);
	const calls = fs.readFileSync(path.join(dir, "npm-calls"), "utf8").trim().split("\n");
	expect(calls).toEqual([expect.stringMatching(new RegExp(`--prefix ${dir}/node\\.\\d+ node@${RELEASE.replaceAll(".", "\\.")}$`))]);
	// The second time it is there: no fetch.
	const second = await ensureNode(npm);
	expect([second.status, second.stdout.trim(), second.stderr]).toEqual([0, "24", ""]);
	expect(fs.readFileSync(path.join(dir, "npm-calls"), "utf8").trim().split("\n")).toHaveLength(1);
});

it("fails, leaving nothing behind, with the command that fixes it when npm cannot fetch it", async () => {
	const run = await ensureNode('echo "npm error code E404" >&2; exit 1');
	expect(run.status).toBe(1);
	expect(run.stderr).toContain("Could not fetch Node");
	expect(run.stderr).toContain("npm error code E404");
	expect(run.stderr).toContain(`Fix: install Node 24 yourself (\`nvm install\` reads .nvmrc) and run the command again.`);
	expect(fs.readdirSync(dir).sort()).toEqual(["bin"]);
});

it("names each missing peer with what brings it, and nothing when all are here", async () => {
	const check = (env: Record<string, string>) => runCommand("bash", [".ci/peers", "--check"], { cwd: ROOT, env: { ...process.env, ...env } });
	const missing = await check({ JAEGER_BIN: path.join(dir, "no-jaeger"), TEST_MONGO_URL: "", FERRETDB_BIN: path.join(dir, "no-ferretdb") });
	expect([missing.status, missing.stdout]).toEqual([1, "  ferretdb: bash .ci/build-ferretdb\n  jaeger: bash .ci/build-jaeger\n"]);
	// A server the run is given instead (TEST_MONGO_URL) needs no FerretDB; this machine has the rest (global setup checked).
	const given = await check({ TEST_MONGO_URL: "mongodb://127.0.0.1:1", FERRETDB_BIN: path.join(dir, "no-ferretdb") });
	expect([given.status, given.stdout]).toEqual([0, ""]);
});
