/**
 * The IRC sender against a real ngircd: one pooled connection per server (joined once),
 * channel keys, nick targets, pacing between lines, time limits, and the SSRF guard.
 */
import net from "net";
import { parseTarget, type IrcTarget } from "../../../lib/integrations/irc-gateway/recipients";
import { IrcPool, type IrcSenderOptions } from "../../../lib/integrations/irc-gateway/sender";
import { PermanentError, TransientError } from "../../../lib/outbound/errors";
import { waitFor } from "../../support/http";
import { listenOnIrc, startIrcServer, type IrcListener, type IrcServer } from "../../support/peers/irc-server";

let irc: IrcServer;
let dev: IrcListener;
let keyed: IrcListener;
const pools: IrcPool[] = [];
const options: IrcSenderOptions = { nick: "gitlabbot", timeoutMs: 3000, intervalMs: 0, allowLocal: true, idleMs: 60000 };
const pool = (o: Partial<IrcSenderOptions> = {}) => {
	const p = new IrcPool({ ...options, ...o });
	pools.push(p);
	return p;
};
const target = (path: string): IrcTarget => parseTarget(`irc://127.0.0.1:${irc.port}/${path}`)!;
/**
 * A server that accepts and never answers. Closing it ends the connections it accepted too: a
 * listening server's close() leaves them open, and one left open keeps jest's process from ending.
 */
async function silentServer(): Promise<{ port: number; close: () => void }> {
	const accepted = new Set<net.Socket>();
	const server = net.createServer(socket => {
		accepted.add(socket);
		socket.on("error", () => undefined).on("close", () => accepted.delete(socket));
	});
	await new Promise<void>(r => server.listen(0, "127.0.0.1", () => r()));
	return {
		port: (server.address() as net.AddressInfo).port,
		close: () => {
			server.close();
			for (const socket of accepted) socket.destroy();
		},
	};
}
const joinsBy = (l: IrcListener, nick: string) => l.lines.filter(line => line.startsWith(`:${nick}!`) && / JOIN /.test(line)).length;

beforeAll(async () => {
	irc = await startIrcServer();
	[dev, keyed] = await Promise.all([listenOnIrc(irc, "#dev"), listenOnIrc(irc, "#keyed", { key: "sesame" })]);
});

afterAll(async () => {
	for (const p of pools) await p.close();
	await Promise.all([dev?.close(), keyed?.close()]);
	await irc?.stop();
});

it("sends lines in order over one connection that joins a channel once", async () => {
	const p = pool();
	await p.send(target("#dev"), ["one", "two"]);
	await p.send(target("dev"), ["three"]);
	await waitFor("three lines", () => dev.messages.length >= 3);
	expect(dev.messages.map(m => [m.from, m.target, m.text])).toEqual([
		["gitlabbot", "#dev", "one"],
		["gitlabbot", "#dev", "two"],
		["gitlabbot", "#dev", "three"],
	]);
	expect(p.size).toBe(1);
	expect(joinsBy(dev, "gitlabbot")).toBe(1);
});

it("pipelines concurrent sends on one connection: every send confirmed, the lines in the order of the sends", async () => {
	const p = pool({ nick: "pipebot" });
	const start = dev.messages.length;
	const sends = Array.from({ length: 20 }, (_, i) => p.send(target("#dev"), [`burst ${i} a`, `burst ${i} b`]));
	await Promise.all(sends);
	await waitFor("forty lines", () => dev.messages.length >= start + 40);
	expect(dev.messages.slice(start).map(m => m.text)).toEqual(Array.from({ length: 20 }, (_, i) => [`burst ${i} a`, `burst ${i} b`]).flat());
	expect(p.size).toBe(1);
});

it("writes a send's lines and its PING to the socket at once: one write, not one a line", async () => {
	const p = pool({ nick: "onewrite" });
	const before = dev.messages.length;
	await p.send(target("#dev"), ["warm"]);
	await waitFor("the first line", () => dev.messages.length > before);
	const start = dev.messages.length;
	const socket = net.Socket.prototype as unknown as Record<"_write" | "_writev", (...args: unknown[]) => void>;
	const writes = [jest.spyOn(socket, "_write"), jest.spyOn(socket, "_writev")];
	try {
		await p.send(target("#dev"), ["first", "second"]);
		const toIrc = writes.flatMap(w => w.mock.contexts).filter(s => (s as net.Socket).remotePort === irc.port);
		expect(toIrc.length).toBe(1);
	} finally {
		for (const w of writes) w.mockRestore();
	}
	await waitFor("two lines", () => dev.messages.length >= start + 2);
	expect(dev.messages.slice(start).map(m => m.text)).toEqual(["first", "second"]);
});

it("sends a line longer than one IRC message in several, as irc-framework splits it", async () => {
	const p = pool({ nick: "longbot" });
	const start = dev.messages.length;
	const long = "x".repeat(500);
	await p.send(target("#dev"), [long]);
	await waitFor(
		"the split line",
		() =>
			dev.messages
				.slice(start)
				.map(m => m.text)
				.join("") === long,
	);
	expect(dev.messages.slice(start).length).toBe(2);
});

it("joins a keyed channel with its key, and refuses a wrong key for good", async () => {
	const p = pool({ nick: "keybot" });
	await p.send(target("keyed?key=sesame"), ["with key"]);
	await waitFor("the keyed line", () => keyed.messages.some(m => m.text === "with key"));
	const other = pool({ nick: "badkeybot" });
	await expect(other.send(target("keyed?key=wrong"), ["nope"])).rejects.toBeInstanceOf(PermanentError);
});

it("never lets a target without the key post into a keyed channel another target joined", async () => {
	// One pool and one nick, as the worker has: a push that knows the key, then one (another project's) that does not.
	const p = pool({ nick: "sharedbot" });
	await p.send(target("keyed?key=sesame"), ["keyed push"]);
	await waitFor("the keyed push", () => keyed.messages.some(m => m.text === "keyed push"));
	await expect(p.send(target("keyed"), ["keyless push"])).rejects.toBeInstanceOf(PermanentError);
	await expect(p.send(target("keyed?key=wrong"), ["wrong-key push"])).rejects.toBeInstanceOf(PermanentError);
	await p.send(target("keyed?key=sesame"), ["keyed again"]);
	await waitFor("the second keyed push", () => keyed.messages.some(m => m.text === "keyed again"));
	expect(keyed.messages.filter(m => m.from.startsWith("sharedbot")).map(m => m.text)).toEqual(["keyed push", "keyed again"]);
});

it("ends a connection on which the server sends a line longer than any IRC line, instead of buffering it", async () => {
	// A hostile server (no real one does this): it registers the client, then sends bytes without a
	// newline, a chunk every few milliseconds, for as long as the client stays.
	let clientLeft = false;
	let sendSettled = false;
	let leftWhileSending = false;
	const hostile = net.createServer(socket => {
		socket.on("error", () => undefined);
		socket.on("close", () => {
			clientLeft = true;
			leftWhileSending = !sendSettled;
		});
		socket.write(":srv 001 gitlabbot :welcome\r\n");
		const chunk = Buffer.alloc(16 * 1024, "x");
		const timer = setInterval(() => (socket.destroyed ? clearInterval(timer) : socket.write(chunk)), 5);
	});
	await new Promise<void>(r => hostile.listen(0, "127.0.0.1", () => r()));
	const port = (hostile.address() as net.AddressInfo).port;
	try {
		const p = pool({ timeoutMs: 5000 });
		// The join is never confirmed: the send fails after its time limit either way. What matters is
		// that the client left before that, on the line past its bound (it would otherwise read on and
		// keep everything, the connection staying open after the failed join).
		await expect(p.send(parseTarget(`irc://127.0.0.1:${port}/#x`)!, ["hello"]).finally(() => (sendSettled = true))).rejects.toBeInstanceOf(TransientError);
		expect([clientLeft, leftWhileSending]).toEqual([true, true]);
		expect(p.size).toBe(0);
	} finally {
		hostile.close();
	}
});

it("keeps at most maxConnections: the one unused the longest quits, and when all are sending a new one waits for a retry", async () => {
	const p = pool({ maxConnections: 2 });
	for (const nick of ["lru1", "lru2", "lru3"]) await p.send(parseTarget(`irc://${nick}@127.0.0.1:${irc.port}/#dev`)!, [`from ${nick}`]);
	await waitFor("three lines", () => ["lru1", "lru2", "lru3"].every(nick => dev.messages.some(m => m.text === `from ${nick}`)));
	expect(p.size).toBe(2);

	const { port, close } = await silentServer();
	try {
		const busy = pool({ maxConnections: 2, timeoutMs: 1000 });
		const stuck = ["a", "b"].map(nick => busy.send(parseTarget(`irc://${nick}@127.0.0.1:${port}/#x`)!, ["waiting"]));
		await expect(busy.send(parseTarget(`irc://c@127.0.0.1:${port}/#x`)!, ["third"])).rejects.toThrow(/2 connections, all sending/);
		for (const send of stuck) await expect(send).rejects.toBeInstanceOf(TransientError);
	} finally {
		close();
	}
});

it("sends to a nick without joining", async () => {
	const p = pool({ nick: "nickbot" });
	await p.send(target(`${dev.nick},isnick`), ["psst"]);
	await waitFor("the private line", () => dev.messages.some(m => m.text === "psst"));
	expect(dev.messages.find(m => m.text === "psst")).toEqual({ from: "nickbot", target: dev.nick, text: "psst" });
});

it("takes another nick when its own is in use", async () => {
	const p = pool({ nick: dev.nick });
	await p.send(target("#dev"), ["from the twin"]);
	await waitFor("the twin's line", () => dev.messages.some(m => m.text === "from the twin"));
	expect(dev.messages.find(m => m.text === "from the twin")!.from).toMatch(new RegExp(`^${dev.nick.slice(0, 20)}\\d+$`));
});

it("paces lines on one connection", async () => {
	const p = pool({ nick: "pacebot", intervalMs: 250 });
	const start = dev.messages.length;
	await p.send(target("#dev"), ["p1", "p2", "p3"]);
	await waitFor("paced lines", () => dev.messages.length >= start + 3);
	const times = dev.times.slice(start, start + 3);
	// Lower bounds only: pacing can make lines later, never earlier.
	expect(times[1] - times[0]).toBeGreaterThanOrEqual(200);
	expect(times[2] - times[1]).toBeGreaterThanOrEqual(200);
});

it("gives up on a server that never answers, within its time limit, as a transient failure", async () => {
	const { port, close } = await silentServer();
	try {
		const p = pool({ timeoutMs: 500 });
		await expect(p.send(parseTarget(`irc://127.0.0.1:${port}/#x`)!, ["hello?"])).rejects.toBeInstanceOf(TransientError);
		await expect(p.send(parseTarget(`irc://127.0.0.1:1/#x`)!, ["refused"])).rejects.toBeInstanceOf(TransientError);
	} finally {
		close();
	}
});

it("refuses loopback and non-IRC ports unless local requests are allowed", async () => {
	const p = pool({ allowLocal: false });
	await expect(p.send(target("#dev"), ["blocked"])).rejects.toBeInstanceOf(PermanentError);
	await expect(p.send(parseTarget("irc://localhost:6667/#dev")!, ["blocked"])).rejects.toThrow(/local network/);
	await expect(p.send(parseTarget("irc://127.0.0.1:6667/#dev")!, ["blocked"])).rejects.toThrow(/local network/);
	await expect(p.send(parseTarget("irc://[::ffff:127.0.0.1]:6667/#dev")!, ["blocked"])).rejects.toThrow(/local network/);
	expect(dev.messages.some(m => m.text === "blocked")).toBe(false);
});
