/**
 * Outgoing mail for the push mailer (nodemailer): SMTP when SMTP_URL is set, otherwise one
 * `.eml` file per message under DATA_DIR/mail (named by event and recipient, so a repeated
 * delivery rewrites the same file). SMTP failures are sorted into transient (connection
 * problems, 4xx: retry later) and permanent (5xx: the server will not take it).
 */
import crypto from "crypto";
import fs from "fs";
import path from "path";
import nodemailer, { type SendMailOptions, type Transporter } from "nodemailer";
import { PermanentError, TransientError } from "../../outbound/errors";

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
