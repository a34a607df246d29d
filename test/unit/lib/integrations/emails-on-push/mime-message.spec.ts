/** The push mail's bytes (lib/integrations/emails-on-push/mime-message.ts), read back by a real mail parser (mailparser). */
import { simpleParser } from "mailparser";
import { composeMail, type OutgoingMail } from "../../../../../lib/integrations/emails-on-push/mime-message";

const mail = (over: Partial<OutgoingMail> = {}): OutgoingMail => ({
	from: { name: "Jane", address: "gitlab@example.com" },
	to: "dev@example.com",
	replyTo: "gitlab@example.com",
	subject: "[Git][group/project][master] fix #12 crash on start",
	text: "Jane pushed to branch master at group / project\n\n\nCommits:\n",
	headers: { "X-GitLab-Project": "project", "X-GitLab-Project-Id": "7", "X-GitLab-Project-Path": "group/project", "X-GitLab-Author": "jane" },
	...over,
});

const lines = (message: Buffer) => message.toString("latin1").split("\r\n");
const headerBlock = (message: Buffer) => lines(message).slice(0, lines(message).indexOf(""));

it("writes one plain-text message: sender, recipient, subject, GitLab headers, a date and a message id, CRLF throughout", async () => {
	const { envelope, message } = composeMail(mail(), new Date("2026-11-25T12:34:56Z"));
	expect(envelope).toEqual({ from: "gitlab@example.com", to: ["dev@example.com"] });
	expect(message.toString("latin1")).not.toMatch(/[^\r]\n/);
	expect(headerBlock(message)).toEqual([
		"From: Jane <gitlab@example.com>",
		"Reply-To: gitlab@example.com",
		"To: dev@example.com",
		"Subject: [Git][group/project][master] fix #12 crash on start",
		"X-GitLab-Project: project",
		"X-GitLab-Project-Id: 7",
		"X-GitLab-Project-Path: group/project",
		"X-GitLab-Author: jane",
		expect.stringMatching(/^Message-ID: <[0-9a-f-]{36}@example\.com>$/),
		"Date: Wed, 25 Nov 2026 12:34:56 +0000",
		"MIME-Version: 1.0",
		"Content-Type: text/plain; charset=utf-8",
		"Content-Transfer-Encoding: 7bit",
	]);
	const parsed = await simpleParser(message);
	expect(parsed.from?.value).toEqual([{ name: "Jane", address: "gitlab@example.com" }]);
	expect(parsed.text).toBe("Jane pushed to branch master at group / project\n\n\nCommits:\n");
	expect(parsed.headers.get("x-gitlab-project-path")).toBe("group/project");
	expect(composeMail(mail()).message.toString()).not.toBe(composeMail(mail()).message.toString());
});

it("encodes what is not ASCII in the sender's name, the subject, the headers and the body, and reads back the same", async () => {
	const text = "Zoë pushed — “quoted”\nrésumé\n";
	const { message } = composeMail(
		mail({
			from: { name: 'Zoë "Z" Ölund, Jr.', address: "gitlab@example.com" },
			subject: "Ünïcode subject ✓",
			text,
			headers: { "X-GitLab-Project": "Prøject" },
		}),
	);
	expect(message.toString("latin1")).toMatch(/^[\x20-\x7e\r\n\t]*$/);
	expect(headerBlock(message)).toContain("Content-Transfer-Encoding: quoted-printable");
	const parsed = await simpleParser(message);
	expect(parsed.from?.value).toEqual([{ name: 'Zoë "Z" Ölund, Jr.', address: "gitlab@example.com" }]);
	expect(parsed.subject).toBe("Ünïcode subject ✓");
	// An encoded word, as nodemailer wrote it (mailparser decodes only the headers it knows).
	expect(headerBlock(message)).toContain("X-GitLab-Project: =?UTF-8?Q?Pr=C3=B8ject?=");
	expect(parsed.text).toBe(text);
});

it("quotes an ASCII name with specials, so it stays one name and one address", async () => {
	const { message } = composeMail(mail({ from: { name: "Doe, John (dev) \\o/", address: "gitlab@example.com" } }));
	expect(headerBlock(message)[0]).toBe('From: "Doe, John (dev) \\\\o/" <gitlab@example.com>');
	const parsed = await simpleParser(message);
	expect(parsed.from?.value).toEqual([{ name: "Doe, John (dev) \\o/", address: "gitlab@example.com" }]);
});

it("keeps a line break in a subject or a header from starting a header of its own", async () => {
	const { message } = composeMail(
		mail({
			subject: "hello\r\nBcc: victim@example.org",
			headers: { "X-GitLab-Project": "p\nBcc: other@example.org" },
			from: { name: "J\r\nBcc: x@y.z", address: "gitlab@example.com" },
		}),
	);
	expect(headerBlock(message).filter(l => /^bcc:/i.test(l))).toEqual([]);
	const parsed = await simpleParser(message);
	expect(parsed.headers.has("bcc")).toBe(false);
	expect(parsed.subject).toBe("hello Bcc: victim@example.org");
});

it("folds long headers to 76 columns, and cuts one long word into encoded words no line can exceed", async () => {
	const words = "word ".repeat(60).trim();
	const long = "x".repeat(3000);
	for (const subject of [words, long]) {
		const { message } = composeMail(mail({ subject }));
		for (const line of headerBlock(message)) expect(line.length).toBeLessThanOrEqual(998);
		expect((await simpleParser(message)).subject).toBe(subject);
	}
	expect(headerBlock(composeMail(mail({ subject: words })).message).every(l => l.length <= 78)).toBe(true);
});

it("sends a body with lines over 998 characters or bare carriage returns as quoted-printable, line breaks as CRLF", async () => {
	const text = `${"a".repeat(1500)}\nnext\rline\r\n.\n`;
	const { message } = composeMail(mail({ text }));
	expect(headerBlock(message)).toContain("Content-Transfer-Encoding: quoted-printable");
	for (const line of lines(message)) expect(line.length).toBeLessThanOrEqual(998);
	expect((await simpleParser(message)).text).toBe(`${"a".repeat(1500)}\nnext\nline\n.\n`);
});

it("takes the address out of a `Name <address>` sender, and puts an international domain in its ASCII form", () => {
	const { envelope, message } = composeMail(mail({ from: { name: "Jane", address: "GitLab <gitlab@example.com>" }, to: "dev@bücher.example" }));
	expect(envelope).toEqual({ from: "gitlab@example.com", to: ["dev@xn--bcher-kva.example"] });
	expect(headerBlock(message).slice(0, 3)).toEqual(["From: Jane <gitlab@example.com>", "Reply-To: gitlab@example.com", "To: dev@xn--bcher-kva.example"]);
});
