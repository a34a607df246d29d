// The NATS (JetStream) and Redis a test run uses: its own, started from the installed
// `nats-server` and `redis-server` on free loopback ports and stopped when the run ends, so
// `npm test` needs nothing running and runs beside anything else on the machine. TEST_NATS_URL and
// TEST_REDIS_URL, when set, name servers to use instead. A missing or too old binary stops the run
// at once, before anything is built, with one message naming the command that installs it.
const { spawn, spawnSync } = require("child_process");
const fs = require("fs");
const net = require("net");
const os = require("os");
const path = require("path");

/** Each server: its binary, the oldest version the project runs on, how its `--version` says it. */
const SERVERS = {
	// JetStream's `next_by_subj` (the push dead letters) came in nats-server 2.9.
	nats: { binary: "nats-server", minimum: [2, 9], version: /v(\d+)\.(\d+)\.(\d+)/, urlVariable: "TEST_NATS_URL" },
	// XAUTOCLAIM (the Redis Streams channel adapter) came in Redis 6.2.
	redis: { binary: "redis-server", minimum: [6, 2], version: /v=(\d+)\.(\d+)\.(\d+)/, urlVariable: "TEST_REDIS_URL" },
};

const INSTALL = [
	"Install them with:",
	"  sudo apt-get install nats-server redis-server    (Debian/Ubuntu; Debian 12 has 2.9.10 and 7.0; `npm test` does it)",
	"  brew install nats-server redis                    (macOS)",
	"An older distribution's nats-server: go install github.com/nats-io/nats-server/v2@v2.15.2 (then add ~/go/bin to PATH).",
	"Or point TEST_NATS_URL (nats-server -js) and TEST_REDIS_URL at servers that run already.",
].join("\n");

/** An executable by name, from PATH or where Debian puts it (nats-server lands in /usr/sbin). */
function executable(name, env) {
	const dirs = [...(env.PATH ?? "").split(path.delimiter), "/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"];
	for (const dir of dirs) {
		const candidate = path.join(dir, name);
		try {
			fs.accessSync(candidate, fs.constants.X_OK);
			return candidate;
		} catch {
			// not here
		}
	}
	return undefined;
}

/** "2.9.10" when `--version` names one; undefined when it cannot be read. */
function versionOf(binary, pattern) {
	const res = spawnSync(binary, ["--version"], { encoding: "utf8", timeout: 10_000 });
	const match = pattern.exec(`${res.stdout ?? ""}${res.stderr ?? ""}`);
	return match ? match.slice(1).map(Number) : undefined;
}

const atLeast = (version, minimum) => version[0] > minimum[0] || (version[0] === minimum[0] && version[1] >= minimum[1]);

/**
 * The binary of each server the run must start ({ nats, redis }; none for a TEST_*_URL that is
 * set). Throws one error naming every missing or too old binary and the command that installs
 * them; its stack is the message alone, which is all jest prints of it.
 */
function serverBinaries(env) {
	const found = {};
	const problems = [];
	for (const [kind, server] of Object.entries(SERVERS)) {
		if (env[server.urlVariable]) continue;
		const binary = executable(server.binary, env);
		const version = binary && versionOf(binary, server.version);
		const wanted = `${server.minimum.join(".")} or later`;
		if (!binary) problems.push(`  ${server.binary} is not installed (${wanted} is needed)`);
		else if (version && !atLeast(version, server.minimum)) problems.push(`  ${binary} is ${version.join(".")}: ${wanted} is needed`);
		else found[kind] = binary;
	}
	if (problems.length === 0) return found;
	const error = new Error(`npm test starts its own NATS and Redis from the installed servers, and cannot:\n${problems.join("\n")}\n${INSTALL}`);
	error.stack = error.message;
	throw error;
}

function answers(port) {
	return new Promise(resolve => {
		const socket = net.connect(port, "127.0.0.1");
		socket.once("connect", () => (socket.destroy(), resolve(true)));
		socket.once("error", () => resolve(false));
	});
}

function isFree(port) {
	return new Promise(resolve => {
		const server = net.createServer();
		server.unref();
		server.once("error", () => resolve(false));
		server.listen(port, "0.0.0.0", () => server.close(() => resolve(true)));
	});
}

// Below Linux's ephemeral range, as test/support/processes.ts hands out ports.
async function freePort() {
	for (let attempt = 0; attempt < 200; attempt++) {
		const port = 32000 + Math.floor(Math.random() * 700);
		if (await isFree(port)) return port;
	}
	throw new Error("no free port for the test servers");
}

const sleep = ms => new Promise(r => setTimeout(r, ms));

/** One server process, ready when its port answers. */
async function startServer(kind, binary, dir) {
	for (let attempt = 0; attempt < 5; attempt++) {
		const port = await freePort();
		const args =
			kind === "nats"
				? ["-a", "127.0.0.1", "-p", String(port), "-js", "-sd", path.join(dir, "js")]
				: ["--bind", "127.0.0.1", "--port", String(port), "--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no"];
		const log = fs.openSync(path.join(dir, `${kind}.log`), "a");
		const child = spawn(binary, args, { stdio: ["ignore", log, log] });
		fs.closeSync(log);
		for (let waited = 0; waited < 10_000 && child.exitCode === null; waited += 50) {
			if (await answers(port)) return { url: `${kind}://127.0.0.1:${port}`, child };
			await sleep(50);
		}
		child.kill("SIGKILL");
	}
	throw new Error(`${kind} did not start; its log is in ${dir}`);
}

/** Starts the servers `binaries` (from serverBinaries) names, and sets their TEST_*_URL in `env`. */
async function startTestServers(env, binaries) {
	const started = [];
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "glv3-test-servers-"));
	const stopAll = () => {
		for (const { child } of started) if (child.exitCode === null) child.kill("SIGKILL");
	};
	// However jest ends, the servers end with it.
	process.once("exit", stopAll);
	for (const [kind, binary] of Object.entries(binaries)) {
		const server = await startServer(kind, binary, dir);
		started.push(server);
		env[SERVERS[kind].urlVariable] = server.url;
	}
	return {
		async stop() {
			for (const { child } of started) {
				if (child.exitCode !== null) continue;
				child.kill("SIGTERM");
				await new Promise(resolve => {
					const timer = setTimeout(() => (child.kill("SIGKILL"), resolve()), 5000);
					child.once("exit", () => (clearTimeout(timer), resolve()));
				});
			}
			fs.rmSync(dir, { recursive: true, force: true });
		},
	};
}

module.exports = { serverBinaries, startTestServers };
