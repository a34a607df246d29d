/**
 * Outgoing mail for the push mailer: SMTP when SMTP_URL is set (a pool of kept connections,
 * smtp-pool.ts), otherwise one `.eml` file per message under DATA_DIR/mail (named by event and
 * recipient, so a repeated delivery rewrites the same file). Either way the message is composed
 * once (mime-message.ts). SMTP failures are sorted into transient (connection problems, 4xx: retry
 * later) and permanent (5xx: the server will not take it).
 */
import crypto from "crypto";
import fs from "fs";
import path from "path";
import { PermanentError, TransientError } from "../../outbound/errors";
import { composeMail, type OutgoingMail } from "./mime-message";
import { SmtpPool } from "./smtp-pool";
import { ATTR } from "../../tracing/attributes";
import { outboundCall } from "../../tracing/outbound-span";

export interface MailerOptions {
	smtpUrl: string;
	dataDir: string;
	timeoutMs: number;
	/** SMTP connections kept open (each sends one mail at a time); default 4. */
	poolSize?: number;
}

export interface Mailer {
	/** `key` names the .eml file when mail goes to files. */
	send(mail: OutgoingMail, key: string): Promise<void>;
	close(): void;
	readonly target: string;
}

/** A session is replaced after this many mails (a reconnect costs a handshake; some servers cap mails per connection). */
const MAILS_PER_CONNECTION = 1000;

function smtpError(err: unknown): Error {
	const e = err as { responseCode?: number; message?: string };
	const msg = `SMTP: ${e.message ?? String(err)}`;
	if (typeof e.responseCode === "number" && e.responseCode >= 500) return new PermanentError(msg, e.responseCode);
	return new TransientError(msg, e.responseCode);
}

export function createMailer(opts: MailerOptions): Mailer {
	if (opts.smtpUrl) {
		const pool = new SmtpPool({ url: opts.smtpUrl, size: opts.poolSize ?? 4, timeoutMs: opts.timeoutMs, maxMessages: MAILS_PER_CONNECTION });
		const server = new URL(opts.smtpUrl);
		// Where the mail goes, for its span (lib/tracing/outbound-span.ts): the server, never its credentials.
		const where = { [ATTR.serverAddress]: server.hostname, [ATTR.serverPort]: Number(server.port) || (server.protocol === "smtps:" ? 465 : 587) };
		const responseCode = (err: unknown) => (err as { status?: number } | undefined)?.status;
		return {
			target: `smtp://${server.host}`,
			async send(mail) {
				const { envelope, message } = composeMail(mail);
				const send = async () => {
					try {
						await pool.send(envelope, message);
					} catch (err) {
						throw smtpError(err);
					}
				};
				await outboundCall("SMTP send", { ...where, [ATTR.smtpRecipients]: envelope.to.length }, send, (_, err) =>
					responseCode(err) ? { attributes: { [ATTR.smtpResponseCode]: responseCode(err)! } } : {},
				);
			},
			close: () => pool.close(),
		};
	}
	const dir = path.join(opts.dataDir, "mail");
	return {
		target: dir,
		async send(mail, key) {
			const { message } = composeMail(mail);
			await fs.promises.mkdir(dir, { recursive: true });
			const name = `${key.replace(/[^A-Za-z0-9_.-]/g, "_").slice(0, 80)}-${crypto.createHash("sha256").update(key).digest("hex").slice(0, 12)}.eml`;
			const tmp = path.join(dir, `.${name}.${process.pid}.tmp`);
			await fs.promises.writeFile(tmp, message);
			await fs.promises.rename(tmp, path.join(dir, name));
		},
		close: () => undefined,
	};
}
