/**
 * The push mailer's SMTP side against a real smtp-server: pooled delivery in two writes a mail,
 * and how failures are sorted (5xx permanent; refused, silent or 4xx servers transient); without
 * SMTP, one .eml file per delivery.
 */
import { spawn } from "child_process";
import fs from "fs";
import net from "net";
import os from "os";
import path from "path";
import { simpleParser } from "mailparser";
import { createMailer, type Mailer } from "../../../lib/integrations/emails-on-push/mailer";
import { PermanentError, TransientError } from "../../../lib/outbound/errors";
import { startSmtpSink, type SmtpSink } from "../../support/peers/smtp-sink";

let sink: SmtpSink;
const mailers: Mailer[] = [];
const mailer = (smtpUrl: string, timeoutMs = 3000) => {
	const m = createMailer({ smtpUrl, dataDir: "/nonexistent", timeoutMs, poolSize: 1 });
	mailers.push(m);
	return m;
};
const message = (subject: string) => ({
	from: { name: "Jane", address: "gitlab@example.com" },
	to: "dev@example.com",
	replyTo: "gitlab@example.com",
	subject,
	text: "line one\n.\nline three\n",
	headers: { "X-GitLab-Project": "p" },
});

beforeAll(async () => {
	sink = await startSmtpSink();
});

afterEach(() => sink.accept());

afterAll(async () => {
	for (const m of mailers) m.close();
	await sink?.stop();
});

it("sends a mail on a pooled connection in two writes: the envelope, then the whole message", async () => {
	const m = mailer(sink.url);
	await m.send(message("warm-up"), "k1");
	const socket = net.Socket.prototype as unknown as Record<"_write" | "_writev", (...args: unknown[]) => void>;
	const writes = [jest.spyOn(socket, "_write"), jest.spyOn(socket, "_writev")];
	try {
		await m.send(message("measured"), "k2");
		const toSink = writes.flatMap(w => w.mock.contexts).filter(s => (s as net.Socket).remotePort === sink.port);
		// MAIL FROM, RCPT TO and DATA pipelined; after the 354, headers, body and the final dot.
		expect(toSink.length).toBe(2);
	} finally {
		for (const w of writes) w.mockRestore();
	}
	const mail = sink.messages.find(x => x.subject === "measured");
	expect(mail?.text).toBe("line one\n.\nline three\n");
	expect(sink.envelopes.at(-1)).toEqual({ from: "gitlab@example.com", to: ["dev@example.com"] });
});

it("answers a refused message (5xx) as permanent, a deferred one (4xx) as transient", async () => {
	const m = mailer(sink.url);
	sink.refuse(550);
	await expect(m.send(message("refused"), "k3")).rejects.toThrow(PermanentError);
	sink.refuse(451);
	await expect(m.send(message("deferred"), "k4")).rejects.toThrow(TransientError);
	sink.accept();
	await m.send(message("accepted again"), "k5");
	expect(sink.messages.map(x => x.subject)).toContain("accepted again");
});

it("answers a server that is not listening as transient", async () => {
	const closed = net.createServer();
	await new Promise<void>(resolve => closed.listen(0, "127.0.0.1", resolve));
	const port = (closed.address() as net.AddressInfo).port;
	await new Promise(resolve => closed.close(resolve));
	const err = await mailer(`smtp://127.0.0.1:${port}`)
		.send(message("nobody"), "k6")
		.catch((e: unknown) => e);
	expect(err).toBeInstanceOf(TransientError);
	expect((err as Error).message).toMatch(/^SMTP: .*ECONNREFUSED/);
});

it("gives up on a server that accepts but never greets, within its time limit, as transient", async () => {
	const sockets: net.Socket[] = [];
	const silent = net.createServer(s => void sockets.push(s));
	await new Promise<void>(resolve => silent.listen(0, "127.0.0.1", resolve));
	try {
		const port = (silent.address() as net.AddressInfo).port;
		const err = await mailer(`smtp://127.0.0.1:${port}`, 300)
			.send(message("silence"), "k7")
			.catch((e: unknown) => e);
		expect(err).toBeInstanceOf(TransientError);
		// Whichever of SMTPConnection's two timers (socket, greeting) fires first.
		expect((err as Error).message).toMatch(/^SMTP: (Timeout|Greeting never received)$/);
	} finally {
		for (const s of sockets) s.destroy();
		await new Promise(resolve => silent.close(resolve));
	}
});

it("gives up connecting to a server that takes no more connections (SYNs dropped), within its time limit, as transient", async () => {
	// A listener whose process does not accept (its thread blocked for 10 s, then it exits on its own):
	// once its queue (backlog 1) is full, the kernel drops new SYNs.
	const code = `const s = require("net").createServer();
		s.listen({ port: 0, host: "127.0.0.1", backlog: 1 }, () => {
			process.stdout.write(s.address().port + "\\n");
			setTimeout(() => {
				Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10000);
				process.exit(0);
			}, 50);
		});`;
	const stuck = spawn(process.execPath, ["-e", code], { stdio: ["ignore", "pipe", "ignore"] });
	const fillers: net.Socket[] = [];
	try {
		const port = await new Promise<number>(resolve => stuck.stdout.once("data", (d: Buffer) => resolve(Number(String(d).trim()))));
		await new Promise(resolve => setTimeout(resolve, 200));
		for (let i = 0; i < 4; i++) fillers.push(net.connect(port, "127.0.0.1").on("error", () => undefined));
		await new Promise(resolve => setTimeout(resolve, 200));
		const err = await mailer(`smtp://127.0.0.1:${port}`, 300)
			.send(message("unanswered"), "k8")
			.catch((e: unknown) => e);
		expect(err).toBeInstanceOf(TransientError);
		expect((err as Error).message).toBe("SMTP: Connection timeout");
	} finally {
		for (const f of fillers) f.destroy();
		stuck.kill("SIGKILL");
	}
});

it("without SMTP writes one .eml file per delivery, and a repeated delivery rewrites the same file", async () => {
	const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "mailer-files-"));
	try {
		const m = createMailer({ smtpUrl: "", dataDir, timeoutMs: 1000 });
		await m.send(message("to a file"), "event-1-0-dev@example.com");
		await m.send(message("to a file, again"), "event-1-0-dev@example.com");
		const files = fs.readdirSync(path.join(dataDir, "mail"));
		expect(files).toEqual([expect.stringMatching(/^event-1-0-dev_example\.com-[0-9a-f]{12}\.eml$/)]);
		const mail = await simpleParser(fs.readFileSync(path.join(dataDir, "mail", files[0])));
		expect(mail.subject).toBe("to a file, again");
		expect(mail.text).toBe("line one\n.\nline three\n");
		expect(mail.from?.value).toEqual([{ name: "Jane", address: "gitlab@example.com" }]);
	} finally {
		fs.rmSync(dataDir, { recursive: true, force: true });
	}
});
