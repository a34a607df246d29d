/**
 * Outgoing mail for the push mailer (nodemailer): SMTP when SMTP_URL is set, otherwise one
 * `.eml` file per message under DATA_DIR/mail (named by event and recipient, so a repeated
 * delivery rewrites the same file). SMTP failures are sorted into transient (connection
 * problems, 4xx: retry later) and permanent (5xx: the server will not take it).
 */
import crypto from "crypto";
import fs from "fs";
import net from "net";
import path from "path";
import nodemailer, { type SendMailOptions, type Transporter } from "nodemailer";
import { PermanentError, TransientError } from "../../outbound/errors";
import { writeInTurns } from "../../outbound/write-in-turns";

export interface MailerOptions {
	smtpUrl: string;
	dataDir: string;
	timeoutMs: number;
	/** SMTP connections kept open (each sends one mail at a time); default 4. */
	poolSize?: number;
}

export interface Mailer {
	/** `key` names the .eml file when mail goes to files. */
	send(message: SendMailOptions, key: string): Promise<void>;
	close(): void;
	readonly target: string;
}

function smtpError(err: unknown): Error {
	const e = err as { responseCode?: number; message?: string; code?: string };
	const msg = `SMTP: ${e.message ?? String(err)}`;
	if (typeof e.responseCode === "number" && e.responseCode >= 500) return new PermanentError(msg, e.responseCode);
	return new TransientError(msg, e.responseCode);
}

type SocketCallback = (err: Error | null, socketOptions?: { connection: net.Socket }) => void;

/**
 * nodemailer's `getSocket`: connects to the host and port nodemailer would (its defaults: localhost,
 * 587 or 465 for smtps), within `timeoutMs`, and hands over a socket whose writes of one turn
 * leave together: a mail's headers, body and final dot in one write instead of three
 * (lib/outbound/write-in-turns.ts). nodemailer greets, upgrades to TLS and times out as ever;
 * over TLS its own TLS socket writes below the wrapper, so only plain SMTP is coalesced.
 */
function smtpSocket(timeoutMs: number) {
	return (options: { host?: string; port?: number | string; secure?: boolean }, callback: SocketCallback): void => {
		const port = Number(options.port) || (options.secure ? 465 : 587);
		const socket = net.connect({ host: options.host || "localhost", port });
		const fail = (err: Error) => {
			clearTimeout(timer);
			socket.destroy();
			callback(err);
		};
		const timer = setTimeout(() => fail(Object.assign(new Error("Connection timeout"), { code: "ETIMEDOUT" })), timeoutMs);
		socket.once("error", fail);
		socket.once("connect", () => {
			clearTimeout(timer);
			socket.off("error", fail);
			callback(null, { connection: writeInTurns(socket) });
		});
	};
}

export function createMailer(opts: MailerOptions): Mailer {
	if (opts.smtpUrl) {
		const transport: Transporter = nodemailer.createTransport({
			url: opts.smtpUrl,
			pool: true,
			maxConnections: opts.poolSize ?? 4,
			// A pooled connection is replaced after this many mails (a reconnect costs a handshake).
			maxMessages: 1000,
			connectionTimeout: opts.timeoutMs,
			greetingTimeout: opts.timeoutMs,
			socketTimeout: opts.timeoutMs,
			getSocket: smtpSocket(opts.timeoutMs),
		} as never);
		const where = new URL(opts.smtpUrl);
		return {
			target: `smtp://${where.host}`,
			async send(message) {
				try {
					await transport.sendMail(message);
				} catch (err) {
					throw smtpError(err);
				}
			},
			close: () => transport.close(),
		};
	}
	const dir = path.join(opts.dataDir, "mail");
	const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: "unix" });
	return {
		target: dir,
		async send(message, key) {
			const info = (await transport.sendMail(message)) as unknown as { message: Buffer };
			await fs.promises.mkdir(dir, { recursive: true });
			const name = `${key.replace(/[^A-Za-z0-9_.-]/g, "_").slice(0, 80)}-${crypto.createHash("sha256").update(key).digest("hex").slice(0, 12)}.eml`;
			const tmp = path.join(dir, `.${name}.${process.pid}.tmp`);
			await fs.promises.writeFile(tmp, info.message);
			await fs.promises.rename(tmp, path.join(dir, name));
		},
		close: () => transport.close(),
	};
}
