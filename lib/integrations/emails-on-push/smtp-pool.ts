/**
 * SMTP connections kept open for the push mailer: up to `size` sessions, each sending one mail at a
 * time; a mail beyond waits for the first session free. nodemailer's SMTPConnection speaks the
 * protocol (EHLO, STARTTLS, AUTH, pipelining, dot-stuffing); this only keeps and hands out its
 * connections, and sends messages already composed (mime-message.ts).
 *
 * A session that fails in any way is closed, never reused: the next mail opens a fresh one. One
 * that the server closes while idle leaves the pool at once. A session is replaced after
 * `maxMessages` mails, as some servers limit the mails per connection. Not nodemailer's own pool,
 * which keeps a session after a refused mail (docs/architecture.md#smtp-pool-not-nodemailer).
 */
import net from "net";
import SMTPConnection from "nodemailer/lib/smtp-connection";
import { writeInTurns } from "../../outbound/write-in-turns";

export interface SmtpPoolOptions {
	/** `smtp://` or `smtps://`, with user and password, and nodemailer's query options (`?ignoreTLS=true`, `?tls.rejectUnauthorized=false`). */
	url: string;
	size: number;
	/** Connecting, the greeting and every wait for the server's answer. */
	timeoutMs: number;
	maxMessages: number;
}

type ConnectionOptions = SMTPConnection.Options & { auth?: { user: string; pass: string } };

/** The connection options of an SMTP URL, read as nodemailer reads one (so a URL that worked with it works here). */
export function smtpConnectionOptions(url: string): ConnectionOptions {
	const where = new URL(url);
	const secure = where.protocol === "smtps:";
	const options: Record<string, unknown> = {
		host: where.hostname.replace(/^\[|\]$/g, "") || "localhost",
		port: Number(where.port) || (secure ? 465 : 587),
		secure,
	};
	if (where.username || where.password) options.auth = { user: decodeURIComponent(where.username), pass: decodeURIComponent(where.password) };
	const tls: Record<string, unknown> = {};
	for (const [key, text] of where.searchParams) {
		const value = text === "true" ? true : text === "false" ? false : text !== "" && !isNaN(Number(text)) ? Number(text) : text;
		const name = key.startsWith("tls.") ? key.slice(4) : key;
		if (["__proto__", "constructor", "prototype"].includes(name)) continue;
		if (name !== key) tls[name] = value;
		else if (!key.includes(".") && !["host", "port", "secure", "auth", "connection"].includes(key)) options[key] = value;
	}
	if (Object.keys(tls).length) options.tls = tls;
	return options;
}

/**
 * A plain TCP connection to the server within `timeoutMs`, whose writes of one turn of the event
 * loop leave together: a mail's headers, body and final dot in one write
 * (lib/outbound/write-in-turns.ts). Over TLS, SMTPConnection puts its TLS socket on top.
 */
function connectSocket(host: string, port: number, timeoutMs: number): Promise<net.Socket> {
	return new Promise((resolve, reject) => {
		const socket = net.connect({ host, port });
		const fail = (err: Error) => {
			clearTimeout(timer);
			socket.destroy();
			reject(err);
		};
		const timer = setTimeout(() => fail(Object.assign(new Error("Connection timeout"), { code: "ETIMEDOUT" })), timeoutMs);
		socket.once("error", fail);
		socket.once("connect", () => {
			clearTimeout(timer);
			socket.off("error", fail);
			resolve(writeInTurns(socket));
		});
	});
}

interface Session {
	connection: SMTPConnection;
	sent: number;
	/** Closed by either side or failed: never handed out again. */
	closed: boolean;
}

export class SmtpPool {
	private readonly options: ConnectionOptions;
	private readonly idle: Session[] = [];
	/** Sessions open or opening, idle ones included. */
	private open = 0;
	/** Mails waiting for a session: each gets one, or null to open one itself. */
	private readonly waiting: ((session: Session | null) => void)[] = [];
	private closed = false;

	constructor(private readonly settings: SmtpPoolOptions) {
		this.options = smtpConnectionOptions(settings.url);
	}

	async send(envelope: { from: string; to: string[] }, message: Buffer): Promise<void> {
		const session = await this.acquire();
		try {
			await new Promise<void>((resolve, reject) => session.connection.send(envelope, message, err => (err ? reject(err) : resolve())));
		} catch (err) {
			this.discard(session);
			throw err;
		}
		session.sent++;
		this.release(session);
	}

	/** Quits the idle sessions, and each busy one when its mail is done; mails still waiting fail. */
	close(): void {
		this.closed = true;
		for (const session of this.idle.splice(0)) this.discard(session);
		for (const wake of this.waiting.splice(0)) wake(null);
	}

	private async acquire(): Promise<Session> {
		for (;;) {
			if (this.closed) throw new Error("SMTP pool is closed");
			const session = this.idle.pop();
			if (session) {
				if (!session.closed) return session;
				continue;
			}
			if (this.open < this.settings.size) {
				this.open++;
				try {
					return await this.connect();
				} catch (err) {
					this.open--;
					this.waiting.shift()?.(null);
					throw err;
				}
			}
			const handed = await new Promise<Session | null>(resolve => this.waiting.push(resolve));
			if (handed) return handed;
		}
	}

	private release(session: Session): void {
		if (this.closed || session.closed || session.sent >= this.settings.maxMessages) {
			this.discard(session, true);
			return;
		}
		const next = this.waiting.shift();
		if (next) next(session);
		else this.idle.push(session);
	}

	/** Closes the session (with QUIT when it is still sound) and frees its place for a waiting mail. */
	private discard(session: Session, polite = false): void {
		if (!session.closed) {
			session.closed = true;
			if (polite) session.connection.quit();
			else session.connection.close();
		}
		const at = this.idle.indexOf(session);
		if (at >= 0) this.idle.splice(at, 1);
		this.open--;
		this.waiting.shift()?.(null);
	}

	private async connect(): Promise<Session> {
		const { host, port, auth } = this.options;
		const socket = await connectSocket(host as string, port as number, this.settings.timeoutMs);
		const connection = new SMTPConnection({
			...this.options,
			connection: socket,
			connectionTimeout: this.settings.timeoutMs,
			greetingTimeout: this.settings.timeoutMs,
			socketTimeout: this.settings.timeoutMs,
			logger: false,
		});
		const session: Session = { connection, sent: 0, closed: false };
		return new Promise((resolve, reject) => {
			let settled = false;
			const fail = (err: Error) => {
				if (settled) return this.lost(session);
				settled = true;
				session.closed = true;
				connection.close();
				reject(err);
			};
			// A send in flight gets its error through its callback; these cover the rest.
			connection.on("error", fail);
			connection.once("end", () => fail(Object.assign(new Error("Connection closed"), { code: "ECONNECTION" })));
			connection.connect(err => {
				if (err) return fail(err);
				const ready = () => {
					settled = true;
					resolve(session);
				};
				if (!auth || !connection.allowsAuth) return ready();
				connection.login({ credentials: { user: auth.user, pass: auth.pass } }, loginErr => (loginErr ? fail(loginErr) : ready()));
			});
		});
	}

	/** A session the server closed or broke after it opened: an idle one leaves the pool now, a busy one when its send fails. */
	private lost(session: Session): void {
		if (this.idle.includes(session)) this.discard(session);
		else session.closed = true;
	}
}
