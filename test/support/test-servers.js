// The NATS (JetStream) and Redis a test run uses: its own, started from the installed
// `nats-server` and `redis-server` on free loopback ports and stopped when the run ends, so
// `npm test` needs nothing running and runs beside anything else on the machine. TEST_NATS_URL and
// TEST_REDIS_URL, when set, name servers to use instead. A missing binary stops the run at once
// with the command that installs it.
const { spawn } = require("child_process");
const fs = require("fs");
const net = require("net");
const os = require("os");
const path = require("path");

const INSTALL = "apt-get install nats-server redis-server   (Debian/Ubuntu; .ci/run does it)";

function executable(name) {
	const dirs = [...(process.env.PATH ?? "").split(path.delimiter), "/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"];
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
async function startServer(kind, dir) {
	const binary = executable(kind === "nats" ? "nats-server" : "redis-server");
	if (!binary) throw new Error(`${kind === "nats" ? "nats-server" : "redis-server"} is not installed; install it with:\n  ${INSTALL}`);
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

async function startTestServers(env) {
	const started = [];
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "glv3-test-servers-"));
	const stopAll = () => {
		for (const { child } of started) if (child.exitCode === null) child.kill("SIGKILL");
	};
	// However jest ends, the servers end with it.
	process.once("exit", stopAll);
	for (const kind of ["nats", "redis"]) {
		const name = kind === "nats" ? "TEST_NATS_URL" : "TEST_REDIS_URL";
		if (env[name]) continue;
		const server = await startServer(kind, dir);
		started.push(server);
		env[name] = server.url;
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

module.exports = { startTestServers };
