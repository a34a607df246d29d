/**
 * A push mail as the bytes of one RFC 5322 message: a single text/plain part, UTF-8. Pure, and
 * written for the push mail's one shape rather than through nodemailer's general MIME tree,
 * which cost the mailer about five times the CPU per mail (docs/architecture.md#push-connections).
 * Header words outside printable ASCII are RFC 2047 encoded words, long header lines are folded,
 * and the body is 7bit when it can be, else quoted-printable.
 */
import crypto from "crypto";
import { domainToASCII } from "url";
import { encodeWord, encodeWords, foldLines } from "nodemailer/lib/mime-funcs";
import { encode as qpEncode, wrap as qpWrap } from "nodemailer/lib/qp";
import type { PushEmail } from "./push-email";

/** A push mail (push-email.ts) for one recipient: push-mailer sends a mail per address. */
export type OutgoingMail = PushEmail & { to: string };

export interface ComposedMail {
	/** The SMTP envelope (MAIL FROM, RCPT TO). */
	envelope: { from: string; to: string[] };
	message: Buffer;
}

/** RFC 5322's limit for a line, CRLF excluded. */
const MAX_LINE = 998;
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
/** A display name that needs neither quotes nor encoding: atext and spaces. */
const PLAIN_PHRASE = /^[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~ ]*$/;

/** No header can carry a line break of its own: one would start a header of the client's choosing. */
const oneLine = (value: string) => value.replace(/[\r\n]+/g, " ");

/** `Name <a@b>` given where an address belongs is the address inside the brackets. */
function bareAddress(address: string): string {
	const inner = /<([^<>]*)>\s*$/.exec(address);
	const bare = oneLine(inner ? inner[1] : address).trim();
	const at = bare.lastIndexOf("@");
	// An internationalised domain goes in its ASCII (punycode) form, as nodemailer sent it.
	if (at < 0 || PRINTABLE_ASCII.test(bare)) return bare;
	return `${bare.slice(0, at + 1)}${domainToASCII(bare.slice(at + 1)) || bare.slice(at + 1)}`;
}

function mailbox(name: string, address: string): string {
	const phrase = oneLine(name).trim();
	if (!phrase) return address;
	if (PLAIN_PHRASE.test(phrase)) return `${phrase} <${address}>`;
	if (PRINTABLE_ASCII.test(phrase)) return `"${phrase.replace(/[\\"]/g, "\\$&")}" <${address}>`;
	return `${encodeWord(phrase, "Q", 52)} <${address}>`;
}

/** `Name: value`, encoded where it is not ASCII and folded to 76 columns where it has spaces to fold at. */
function headerLine(name: string, value: string): string {
	const text = oneLine(value);
	const line = foldLines(`${name}: ${PRINTABLE_ASCII.test(text) ? text : encodeWords(text, "Q", 52)}`, 76);
	if (line.split("\r\n").every(l => l.length <= MAX_LINE)) return line;
	// A run without spaces longer than a line allows: encoded words can be folded anywhere.
	return foldLines(`${name}: ${encodeWord(text, "Q", 52)}`, 76);
}

function body(text: string): { encoding: string; content: string } {
	const crlf = text.replace(/\r\n|\r|\n/g, "\r\n");
	const sevenBit = /^[\t\r\n\x20-\x7e]*$/.test(crlf) && crlf.split("\r\n").every(l => l.length <= MAX_LINE);
	if (sevenBit) return { encoding: "7bit", content: crlf };
	return { encoding: "quoted-printable", content: qpWrap(qpEncode(crlf), 76) };
}

/** RFC 5322 date in UTC: `Wed, 25 Nov 2026 12:00:00 +0000`. */
const mailDate = (date: Date) => date.toUTCString().replace(/GMT$/, "+0000");

export function composeMail(mail: OutgoingMail, now: Date = new Date()): ComposedMail {
	const from = bareAddress(mail.from.address);
	const to = bareAddress(mail.to);
	const replyTo = bareAddress(mail.replyTo);
	const domain = from.slice(from.lastIndexOf("@") + 1) || "localhost";
	const { encoding, content } = body(mail.text);
	const lines = [
		headerLine("From", mailbox(mail.from.name, from)),
		`Reply-To: ${replyTo}`,
		`To: ${to}`,
		headerLine("Subject", mail.subject),
		...Object.entries(mail.headers).map(([name, value]) => headerLine(name, value)),
		`Message-ID: <${crypto.randomUUID()}@${domain}>`,
		`Date: ${mailDate(now)}`,
		"MIME-Version: 1.0",
		"Content-Type: text/plain; charset=utf-8",
		`Content-Transfer-Encoding: ${encoding}`,
		"",
		content.endsWith("\r\n") ? content : `${content}\r\n`,
	];
	return { envelope: { from, to: [to] }, message: Buffer.from(lines.join("\r\n")) };
}
