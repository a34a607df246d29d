/**
 * A real SMTP server for tests (npm smtp-server, no TLS, any auth: every login is taken and
 * recorded) on a free loopback port;
 * every accepted message is parsed with mailparser (pinned 3.9.31).
 * `refuse(code)` makes it answer the DATA command with that code until `accept()`;
 * `refuseRecipient(address, code)` refuses that one recipient (RCPT TO) until `acceptRecipients()`.
 * `hold()` keeps every message that arrives from being acknowledged until `release()`; a
 * message whose client went away meanwhile was never delivered and is not recorded.
 */
import { simpleParser, type ParsedMail } from "mailparser";
import { SMTPServer } from "smtp-server";
import type { AddressInfo } from "net";
import { performance } from "perf_hooks";

export interface SmtpSink {
	port: number;
	url: string;
	messages: ParsedMail[];
	/** performance.now() when each message was accepted, in the order of `messages`. */
	arrivals: number[];
	/** The logins of senders configured with a user and password, as the server received them. */
	logins: { username: string; password: string }[];
	/** Envelopes as received (RCPT TO addresses per message). */
	envelopes: { from: string; to: string[] }[];
	/** How many DATA commands were refused. */
	refused: number;
	/**
	 * Errors of client connections (a sender killed mid-session resets its socket): a real server
	 * logs them and goes on; smtp-server emits them on the server, which without a listener would
	 * throw in the test process.
	 */
	connectionErrors: Error[];
	refuse(code?: number): void;
	accept(): void;
	refuseRecipient(address: string, code?: number): void;
	acceptRecipients(): void;
	/** Messages received but not yet acknowledged (while held). */
	readonly held: number;
	hold(): void;
	release(): void;
	stop(): Promise<void>;
}

export async function startSmtpSink(): Promise<SmtpSink> {
	let refuseCode: number | null = null;
	const refusedRecipients = new Map<string, number>();
	let holding = false;
	const waiting: (() => void)[] = [];
	const closedSessions = new Set<string>();
	const sink = {
		messages: [] as ParsedMail[],
		arrivals: [] as number[],
		envelopes: [] as { from: string; to: string[] }[],
		logins: [] as { username: string; password: string }[],
		refused: 0,
		connectionErrors: [] as Error[],
	} as SmtpSink;
	const server = new SMTPServer({
		authOptional: true,
		disabledCommands: ["STARTTLS"],
		logger: false,
		// Pooled client connections stay open; stop() should not wait long for them.
		closeTimeout: 1000,
		onAuth(auth, _session, callback) {
			sink.logins.push({ username: auth.username ?? "", password: auth.password ?? "" });
			callback(null, { user: auth.username });
		},
		onRcptTo(address, _session, callback) {
			const code = refusedRecipients.get(address.address.toLowerCase());
			if (code === undefined) return callback();
			callback(Object.assign(new Error(`recipient ${address.address} refused by test`), { responseCode: code }));
		},
		onData(stream, session, callback) {
			if (refuseCode !== null) {
				sink.refused++;
				stream.resume();
				stream.on("end", () => callback(Object.assign(new Error("refused by test"), { responseCode: refuseCode })));
				return;
			}
			simpleParser(stream).then(
				mail => {
					const accept = () => {
						if (closedSessions.has(session.id)) return;
						sink.envelopes.push({
							from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
							to: session.envelope.rcptTo.map(r => r.address),
						});
						sink.messages.push(mail);
						sink.arrivals.push(performance.now());
						callback();
					};
					if (holding) waiting.push(accept);
					else accept();
				},
				err => callback(err),
			);
		},
		onClose(session) {
			closedSessions.add(session.id);
		},
	});
	await new Promise<void>((resolve, reject) => {
		server.once("error", reject);
		server.listen(0, "127.0.0.1", () => resolve());
	});
	server.on("error", err => sink.connectionErrors.push(err));
	const port = (server as unknown as { server: { address(): AddressInfo } }).server.address().port;
	sink.port = port;
	sink.url = `smtp://127.0.0.1:${port}`;
	sink.refuse = (code = 451) => void (refuseCode = code);
	sink.accept = () => void (refuseCode = null);
	sink.refuseRecipient = (address, code = 451) => void refusedRecipients.set(address.toLowerCase(), code);
	sink.acceptRecipients = () => refusedRecipients.clear();
	Object.defineProperty(sink, "held", { get: () => waiting.length });
	sink.hold = () => void (holding = true);
	sink.release = () => {
		holding = false;
		for (const accept of waiting.splice(0)) accept();
	};
	sink.stop = () => {
		waiting.length = 0;
		return new Promise<void>(resolve => server.close(() => resolve()));
	};
	return sink;
}
