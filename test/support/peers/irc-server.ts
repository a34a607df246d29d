/**
 * A real IRC server for tests: Debian's ngircd (`apt-get install -y ngircd`) on a free loopback
 * port, with its own config in a scratch directory, plus a plain-socket listening client that
 * joins a channel and records what it hears. Flood penalties are off so paced senders are the
 * only thing that slows messages down.
 */
import { spawn, type ChildProcess } from "child_process";
import fs from "fs";
import net from "net";
import os from "os";
import path from "path";
import { performance } from "perf_hooks";
import { freePort } from "../processes";

export interface IrcServer {
	host: string;
	port: number;
	/** The server's log so far (ngircd -n writes it to stdout/stderr). */
	log(): string;
	stop(): Promise<void>;
}

function connectable(port: number): Promise<boolean> {
	return new Promise(resolve => {
		const s = net.connect(port, "127.0.0.1");
		s.once("connect", () => (s.destroy(), resolve(true)));
		s.once("error", () => resolve(false));
	});
}

/** Starts ngircd on `port` (default: a free one). */
export async function startIrcServer(port?: number): Promise<IrcServer> {
	port ??= await freePort();
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ngircd-"));
	// Started as root, ngircd drops to `nobody`, which must still read its files and write its pid.
	fs.chmodSync(dir, 0o755);
	fs.mkdirSync(path.join(dir, "run"), { mode: 0o777 });
	fs.chmodSync(path.join(dir, "run"), 0o777);
	const conf = path.join(dir, "ngircd.conf");
	fs.writeFileSync(
		conf,
		[
			"[Global]",
			"\tName = irc.test.local",
			"\tInfo = loopback test ircd",
			"\tListen = 127.0.0.1",
			`\tPorts = ${port}`,
			`\tPidFile = ${path.join(dir, "run", "ngircd.pid")}`,
			'\tMotdPhrase = "test server"',
			"\tAdminInfo1 = test",
			"\tAdminInfo2 = test",
			"\tAdminEMail = test@localhost",
			"[Limits]",
			"\tMaxConnectionsIP = 0",
			"\tMaxNickLength = 30",
			"\tPingTimeout = 120",
			"\tPongTimeout = 20",
			"\tMaxPenaltyTime = 0",
			"[Options]",
			"\tDNS = no",
			"\tIdent = no",
			"\tPAM = no",
			"",
		].join("\n"),
		{ mode: 0o644 },
	);
	let output = "";
	const child: ChildProcess = spawn("ngircd", ["-n", "-f", conf], { stdio: ["ignore", "pipe", "pipe"] });
	child.stdout!.on("data", d => (output += d));
	child.stderr!.on("data", d => (output += d));
	const exited = new Promise<void>(resolve => child.once("exit", () => resolve()));
	let spawnError: Error | null = null;
	child.once("error", err => (spawnError = err));

	const deadline = Date.now() + 10000;
	while (!(await connectable(port))) {
		if (spawnError) throw new Error(`ngircd did not start (${(spawnError as Error).message}); install it: apt-get install -y ngircd`);
		if (child.exitCode !== null) throw new Error(`ngircd exited with ${child.exitCode}:\n${output}`);
		if (Date.now() > deadline) {
			child.kill("SIGKILL");
			throw new Error(`ngircd did not listen on ${port}:\n${output}`);
		}
		await new Promise(r => setTimeout(r, 50));
	}
	return {
		host: "127.0.0.1",
		port,
		log: () => output,
		async stop() {
			if (child.exitCode === null && child.signalCode === null) {
				child.kill("SIGTERM");
				const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
				await exited;
				clearTimeout(timer);
			}
			fs.rmSync(dir, { recursive: true, force: true });
		},
	};
}

export interface HeardMessage {
	from: string;
	target: string;
	text: string;
}

export interface IrcListener {
	nick: string;
	messages: HeardMessage[];
	/** performance.now() when each message arrived, in the order of `messages`. */
	times: number[];
	/** Raw lines from the server, for debugging. */
	lines: string[];
	close(): Promise<void>;
}

/**
 * A client that registers, joins `channel` (creating it with `key` as channel key when given)
 * and records every PRIVMSG to the channel or to itself.
 */
export function listenOnIrc(
	server: Pick<IrcServer, "host" | "port">,
	channel: string,
	opts: { nick?: string; key?: string; onMessage?: (text: string) => void } = {},
): Promise<IrcListener> {
	const nick = opts.nick ?? `listener${Math.random().toString(36).slice(2, 8)}`;
	const socket = net.connect(server.port, server.host);
	const listener: IrcListener = {
		nick,
		messages: [],
		times: [],
		lines: [],
		close: () =>
			new Promise<void>(resolve => {
				if (socket.destroyed) return resolve();
				socket.once("close", () => resolve());
				socket.end("QUIT :bye\r\n");
				setTimeout(() => socket.destroy(), 1000).unref();
			}),
	};
	return new Promise((resolve, reject) => {
		let buffer = "";
		const timer = setTimeout(() => (socket.destroy(), reject(new Error(`IRC listener did not join ${channel}:\n${listener.lines.join("\n")}`))), 10000);
		socket.setEncoding("utf8");
		socket.on("error", err => (clearTimeout(timer), reject(err)));
		socket.on("connect", () => socket.write(`NICK ${nick}\r\nUSER ${nick} 0 * :test listener\r\n`));
		socket.on("data", (chunk: string) => {
			buffer += chunk;
			let nl: number;
			while ((nl = buffer.indexOf("\r\n")) >= 0) {
				const line = buffer.slice(0, nl);
				buffer = buffer.slice(nl + 2);
				listener.lines.push(line);
				const m = /^(?::(\S+) )?(\S+)(?: (.*))?$/.exec(line);
				if (!m) continue;
				const [, prefix = "", command, rest = ""] = m;
				if (command === "PING") socket.write(`PONG ${rest}\r\n`);
				else if (command === "001") {
					socket.write(`JOIN ${channel}\r\n`);
					if (opts.key) socket.write(`MODE ${channel} +k ${opts.key}\r\n`);
				} else if (command === "366") {
					// End of NAMES: joined. With a key, wait for the MODE echo instead.
					if (!opts.key) {
						clearTimeout(timer);
						resolve(listener);
					}
				} else if (command === "MODE" && opts.key && rest.startsWith(`${channel} +k`)) {
					clearTimeout(timer);
					resolve(listener);
				} else if (command === "PRIVMSG") {
					const sp = rest.indexOf(" ");
					const target = rest.slice(0, sp);
					const text = rest.slice(sp + 1).replace(/^:/, "");
					listener.messages.push({ from: prefix.split("!")[0], target, text });
					listener.times.push(performance.now());
					opts.onMessage?.(text);
				}
			}
		});
	});
}
