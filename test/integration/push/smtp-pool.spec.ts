/**
 * The push mailer's SMTP connections (lib/integrations/emails-on-push/smtp-pool.ts) against real
 * smtp-server instances: how many sessions are open, when one is replaced, and that the URL's
 * credentials reach the server.
 */
import type { AddressInfo } from "net";
import { SMTPServer, type SMTPServerOptions } from "smtp-server";
import { SmtpPool } from "../../../lib/integrations/emails-on-push/smtp-pool";

interface Server {
	url: string;
	/** Sessions the server has seen open, and how many are open now. */
	opened: number;
	readonly current: number;
	mostAtOnce: number;
	messages: number;
	logins: { username?: string; password?: string }[];
	closedOnce(): Promise<void>;
	stop(): Promise<void>;
}

const servers: Server[] = [];
const pools: SmtpPool[] = [];

async function startServer(options: Partial<SMTPServerOptions> = {}, refuseData?: () => number | null): Promise<Server> {
	const closeWaiters: (() => void)[] = [];
	let current = 0;
	const state = {
		opened: 0,
		mostAtOnce: 0,
		messages: 0,
		logins: [] as { username?: string; password?: string }[],
		get current() {
			return current;
		},
	};
	const server = new SMTPServer({
		authOptional: true,
		disabledCommands: ["STARTTLS"],
		logger: false,
		closeTimeout: 500,
		...options,
		onConnect(_session, callback) {
			state.opened++;
			current++;
			state.mostAtOnce = Math.max(state.mostAtOnce, current);
			callback();
		},
		onClose() {
			current--;
			for (const wake of closeWaiters.splice(0)) wake();
		},
		onAuth(auth, _session, callback) {
			state.logins.push({ username: auth.username, password: auth.password ?? undefined });
			callback(null, { user: auth.username });
		},
		onData(stream, _session, callback) {
			stream.resume();
			stream.on("end", () => {
				const code = refuseData?.() ?? null;
				if (code !== null) return callback(Object.assign(new Error("refused by test"), { responseCode: code }));
				state.messages++;
				callback();
			});
		},
	});
	server.on("error", () => undefined);
	await new Promise<void>(resolve => server.listen(0, "127.0.0.1", resolve));
	const port = (server.server.address() as AddressInfo).port;
	const handle: Server = Object.assign(state, {
		url: `smtp://127.0.0.1:${port}`,
		closedOnce: () => new Promise<void>(resolve => closeWaiters.push(resolve)),
		stop: () => new Promise<void>(resolve => server.close(() => resolve())),
	});
	servers.push(handle);
	return handle;
}

const pool = (url: string, size: number, maxMessages = 1000) => {
	const p = new SmtpPool({ url, size, timeoutMs: 3000, maxMessages });
	pools.push(p);
	return p;
};
const message = Buffer.from("From: a@example.com\r\nTo: b@example.com\r\nSubject: t\r\n\r\nbody\r\n");
const envelope = { from: "a@example.com", to: ["b@example.com"] };

afterAll(async () => {
	for (const p of pools) p.close();
	for (const s of servers) await s.stop();
});

it("opens no more sessions than its size, and sends every mail on them", async () => {
	const server = await startServer();
	const p = pool(server.url, 2);
	await Promise.all(Array.from({ length: 8 }, () => p.send(envelope, message)));
	await Promise.all(Array.from({ length: 8 }, () => p.send(envelope, message)));
	expect(server.messages).toBe(16);
	expect(server.opened).toBe(2);
	expect(server.mostAtOnce).toBe(2);
});

it("lets go of a session the server closed while it was idle: the next mail opens a new one and goes", async () => {
	const server = await startServer({ socketTimeout: 300 });
	const p = pool(server.url, 1);
	await p.send(envelope, message);
	await server.closedOnce();
	await p.send(envelope, message);
	expect(server.messages).toBe(2);
	expect(server.opened).toBe(2);
});

it("replaces a session after its number of mails", async () => {
	const server = await startServer();
	const p = pool(server.url, 1, 2);
	const closed = server.closedOnce();
	for (let i = 0; i < 5; i++) await p.send(envelope, message);
	await closed;
	expect(server.messages).toBe(5);
	expect(server.opened).toBe(3);
});

it("does not reuse a session after a refused mail", async () => {
	let refuse: number | null = 451;
	const server = await startServer({}, () => refuse);
	const p = pool(server.url, 1);
	await expect(p.send(envelope, message)).rejects.toMatchObject({ responseCode: 451 });
	refuse = null;
	await p.send(envelope, message);
	expect(server.opened).toBe(2);
	expect(server.messages).toBe(1);
});

it("logs in with the URL's user and password, percent-decoded, when the server offers AUTH", async () => {
	const server = await startServer({ allowInsecureAuth: true, authMethods: ["PLAIN", "LOGIN"] });
	const url = server.url.replace("smtp://", "smtp://gitlab%40example.com:p%3Ass%20w@");
	await pool(url, 1).send(envelope, message);
	expect(server.logins).toEqual([{ username: "gitlab@example.com", password: "p:ss w" }]);
	expect(server.messages).toBe(1);
});

it("once closed, fails the mails waiting for a session and every later one", async () => {
	const server = await startServer();
	const p = pool(server.url, 1);
	const first = p.send(envelope, message);
	const waiting = p.send(envelope, message);
	p.close();
	await expect(waiting).rejects.toThrow("SMTP pool is closed");
	await expect(p.send(envelope, message)).rejects.toThrow("SMTP pool is closed");
	await first.catch(() => undefined);
	expect(server.messages).toBeLessThanOrEqual(1);
});
