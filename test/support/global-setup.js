// Before any test file: compiles the sources once (the e2e tests run the built services as
// production does, and the built tools: the seed script, the bench's support), and starts the
// tests' own NATS (JetStream) and Redis on free loopback ports (test/support/test-servers.js), so
// `npm test` needs no server running; a missing server binary stops the run first, with the command
// that installs it. Type errors fail the run under CI and warn elsewhere.
const { spawnSync } = require("child_process");
const path = require("path");
const { serverBinaries, startTestServers } = require("./test-servers");

module.exports = async function globalSetup() {
	const binaries = serverBinaries(process.env);
	const root = path.resolve(__dirname, "../..");
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
