// Before any test file: checks that node_modules is the lockfile's and that every peer of the suite is here (.ci/peers --check: one
// failure naming them all, with the command that brings them, instead of a failure per test),
// compiles the sources once (the e2e tests run the built services as production does, and the built
// tools: the seed script, the bench's support), and starts the tests' own NATS (JetStream) and Redis
// on free loopback ports (test/support/test-servers.js), so `npm test` needs no server running.
// Type errors fail the run under CI and warn elsewhere.
const { spawnSync } = require("child_process");
const path = require("path");
const { serverBinaries, startTestServers } = require("./test-servers");

/**
 * The dependencies are the lockfile's: otherwise a command the suite runs as a user would
 * (`npm run start:cluster`) would reinstall them under the running suite (scripts/local.sh).
 */
function requireFreshDependencies(root) {
	if (spawnSync("bash", ["-c", ". scripts/local.sh && deps_fresh"], { cwd: root }).status === 0) return;
	const error = new Error("node_modules is older than package-lock.json: run `npm ci` (or `npm test`, which does it first).");
	error.stack = error.message;
	throw error;
}

/** Throws one error naming every missing peer, and the command that brings them all. */
function requirePeers(root) {
	const res = spawnSync("bash", [path.join(root, ".ci/peers"), "--check"], { cwd: root, encoding: "utf8" });
	if (res.status === 0) return;
	const error = new Error(
		`The test suite's peers are not all on this machine; missing:\n${res.stdout.trimEnd()}${res.stderr ? `\n${res.stderr.trimEnd()}` : ""}\n` +
			"`npm test` brings them all before it runs the suite (Debian packages through apt-get, as root or with sudo; the Go servers and\n" +
			"Python environments built into ~/.cache/gitlab-v3-ci); `bash .ci/peers` alone does only that.",
	);
	error.stack = error.message;
	throw error;
}

module.exports = async function globalSetup() {
	const root = path.resolve(__dirname, "../..");
	requireFreshDependencies(root);
	requirePeers(root);
	const binaries = serverBinaries(process.env);
	const tsc = path.join(root, "node_modules/typescript/bin/tsc");
	const res = spawnSync(process.execPath, [tsc, "-p", "tsconfig.tools.json"], { cwd: root, encoding: "utf8" });
	if (res.status !== 0) {
		const out = `${res.stdout}${res.stderr}`.trim();
		if (process.env.CI) throw new Error(`TypeScript build failed:\n${out}`);
		console.warn(`\nTypeScript build reported errors (continuing outside CI):\n${out.split("\n").slice(0, 20).join("\n")}\n`);
	}
	// The workers jest starts next inherit this process's environment: test/support/servers.ts reads it.
	globalThis.__testServers = await startTestServers(process.env, binaries);
};
