/**
 * The test run's own servers (test/support/test-servers.js): a binary too old for the project
 * stops the run before anything starts, with one message naming each and the install command.
 */
import fs from "fs";
import os from "os";
import path from "path";

// A plain script: jest's global setup loads it before any TypeScript is compiled.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { serverBinaries } = require("../../support/test-servers") as { serverBinaries: (env: Record<string, string>) => Record<string, string> };

/** A directory holding executables that print `--version` as these old releases do. */
function oldServers(): string {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "glv3-old-servers-"));
	const script = (name: string, says: string) => fs.writeFileSync(path.join(dir, name), `#!/bin/sh\necho "${says}"\n`, { mode: 0o755 });
	script("nats-server", "nats-server: v2.8.4");
	script("redis-server", "Redis server v=6.0.16 sha=00000000:0 malloc=jemalloc-5.2.1 bits=64 build=a3fdef44459b3ad6");
	return dir;
}

it("names every server binary that is too old, once, with the command that installs new ones, and nothing else", () => {
	const dir = oldServers();
	try {
		let thrown: Error | undefined;
		try {
			serverBinaries({ PATH: dir });
		} catch (err) {
			thrown = err as Error;
		}
		expect(thrown?.message).toBe(
			[
				"npm test starts its own NATS and Redis from the installed servers, and cannot:",
				`  ${dir}/nats-server is 2.8.4: 2.9 or later is needed`,
				`  ${dir}/redis-server is 6.0.16: 6.2 or later is needed`,
				"Install them with:",
				"  sudo apt-get install nats-server redis-server    (Debian/Ubuntu; Debian 12 has 2.9.10 and 7.0; `npm test` does it)",
				"  brew install nats-server redis                    (macOS)",
				"An older distribution's nats-server: go install github.com/nats-io/nats-server/v2@v2.15.2 (then add ~/go/bin to PATH).",
				"Or point TEST_NATS_URL (nats-server -js) and TEST_REDIS_URL at servers that run already.",
			].join("\n"),
		);
		// What jest prints of a failed global setup: the message alone, no stack frames.
		expect(thrown?.stack).toBe(thrown?.message);
	} finally {
		fs.rmSync(dir, { recursive: true, force: true });
	}
});

it("asks for no binary of a server the run is pointed at", () => {
	const dir = oldServers();
	try {
		expect(serverBinaries({ PATH: dir, TEST_NATS_URL: "nats://127.0.0.1:4222", TEST_REDIS_URL: "redis://127.0.0.1:6379" })).toEqual({});
	} finally {
		fs.rmSync(dir, { recursive: true, force: true });
	}
});

it("finds this machine's servers", () => {
	expect(Object.keys(serverBinaries({ PATH: process.env.PATH ?? "" }))).toEqual(["nats", "redis"]);
});
