/**
 * The push benchmark's peers in a process of their own, so that what they cost is not counted
 * against the load generator's event loop (nor theirs against it): a task tracker (HTTP, the
 * slice of the API the commenter uses), an SMTP sink (smtp-server) and an IRC server (ngircd)
 * with a listening client. Each records, per benchmark run, when the delivery of each event
 * arrived (epoch ms with sub-millisecond precision, comparable across processes), recognised by
 * the marker `<run>-e<index>x` in the commit message that the comment, the mail and the IRC line
 * all carry.
 *
 * Run as a script by `startRemotePeers` (bench/support/remote-peers.ts):
 *   node peers-process.js <control port>
 * Its control server on 127.0.0.1 answers
 *   GET /peers              {trackerUrl, smtpUrl, ircPort}
 *   GET /counts?run=<run>   {tracker, mail, irc}: how many distinct events each has seen
 *   GET /receipts?run=<run> {tracker, mail, irc}: index → arrival times, per kind
 */
import crypto from "crypto";
import http from "http";
import type { AddressInfo } from "net";
import { performance } from "perf_hooks";
import { SMTPServer } from "smtp-server";
import { listenOnIrc, startIrcServer } from "../../test/support/peers/irc-server";

export const PEER_KINDS = ["tracker", "mail", "irc"] as const;
export type PeerKind = (typeof PEER_KINDS)[number];
/** index → arrival times (one entry per arrival: more than one is a duplicate). */
export type Receipts = Record<PeerKind, Record<number, number[]>>;

/** A run's name, of the form the peers read in a marker (MARKER). */
export const newRunId = () => `b${crypto.randomBytes(4).toString("hex")}`;
/** The marker a benchmark puts in each event's commit message. */
export const marker = (run: string, index: number) => `${run}-e${index}x`;
const MARKER = /\b(b[0-9a-f]{8})-e(\d+)x\b/;

/** Runs remembered (the oldest is forgotten beyond), and arrivals per run and kind. */
const MAX_RUNS = 16;
const MAX_ARRIVALS = 200_000;
/** The most of one message a peer reads (a push mail is a few kilobytes). */
const MAX_MESSAGE_BYTES = 1024 * 1024;

const now = () => performance.timeOrigin + performance.now();

class ReceiptBook {
	private readonly runs = new Map<string, Receipts & { count: number }>();

	record(kind: PeerKind, text: string, at = now()): void {
		const m = MARKER.exec(text);
		if (!m) return;
		let run = this.runs.get(m[1]);
		if (!run) {
			if (this.runs.size >= MAX_RUNS) this.runs.delete(this.runs.keys().next().value!);
			run = { tracker: {}, mail: {}, irc: {}, count: 0 };
			this.runs.set(m[1], run);
		}
		if (run.count >= MAX_ARRIVALS) return;
		run.count++;
		(run[kind][Number(m[2])] ??= []).push(at);
	}

	/** How many distinct events of a run each kind has seen. */
	counts(run: string): Record<PeerKind, number> {
		const r = this.get(run);
		return { tracker: Object.keys(r.tracker).length, mail: Object.keys(r.mail).length, irc: Object.keys(r.irc).length };
	}

	get(run: string): Receipts {
		const r = this.runs.get(run);
		return r ? { tracker: r.tracker, mail: r.mail, irc: r.irc } : { tracker: {}, mail: {}, irc: {} };
	}
}

function readBody(stream: NodeJS.ReadableStream, limit: number): Promise<string> {
	return new Promise((resolve, reject) => {
		const chunks: Buffer[] = [];
		let size = 0;
		stream.on("data", (c: Buffer) => {
			size += c.length;
			if (size <= limit) chunks.push(c);
		});
		stream.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
		stream.on("error", reject);
	});
}

/** GET /tasks/:id, POST /tasks/:id/stories, PUT /tasks/:id under /api/1.0, with a bearer token. */
async function startTracker(book: ReceiptBook): Promise<string> {
	const server = http.createServer((req, res) => void readBody(req, MAX_MESSAGE_BYTES).then(body => answer(req, res, body)));
	const answer = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => {
		const send = (status: number, payload: unknown) => {
			res.writeHead(status, { "Content-Type": "application/json" });
			res.end(JSON.stringify(payload));
		};
		if (!/^Bearer \S+$/.test(req.headers.authorization ?? "")) return send(401, { errors: [{ message: "Not Authorized" }] });
		const m = /^\/api\/1\.0\/tasks\/(\d+)(\/stories)?$/.exec((req.url ?? "").split("?")[0]);
		if (!m) return send(404, { errors: [{ message: "task: Not a recognized ID" }] });
		if (req.method === "POST" && m[2]) {
			book.record("tracker", body);
			return send(201, { data: { gid: `${m[1]}-story`, text: "" } });
		}
		if (req.method === "GET" || req.method === "PUT") return send(200, { data: { gid: m[1], completed: false } });
		send(405, { errors: [{ message: "Method not allowed" }] });
	};
	server.keepAliveTimeout = 60_000;
	await new Promise<void>(resolve => server.listen(0, "127.0.0.1", resolve));
	return `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/1.0`;
}

/** Accepts every message; the raw message (headers and body) is searched for the marker once. */
async function startSmtp(book: ReceiptBook): Promise<string> {
	const server = new SMTPServer({
		authOptional: true,
		disabledCommands: ["STARTTLS"],
		logger: false,
		closeTimeout: 1000,
		onData(stream, _session, callback) {
			readBody(stream, MAX_MESSAGE_BYTES).then(
				raw => {
					book.record("mail", raw);
					callback();
				},
				(err: Error) => callback(err),
			);
		},
	});
	await new Promise<void>((resolve, reject) => {
		server.once("error", reject);
		server.listen(0, "127.0.0.1", () => resolve());
	});
	// A sender's connection reset (a worker stopped mid-session) is emitted on the server: a real server goes on.
	server.on("error", () => undefined);
	const port = (server as unknown as { server: { address(): AddressInfo } }).server.address().port;
	return `smtp://127.0.0.1:${port}`;
}

async function serve([controlPort]: string[]): Promise<void> {
	const book = new ReceiptBook();
	const [trackerUrl, smtpUrl, ircServer] = await Promise.all([startTracker(book), startSmtp(book), startIrcServer()]);
	const stop = () => void ircServer.stop().finally(() => process.exit(0));
	process.on("SIGTERM", stop);
	process.on("SIGINT", stop);
	await listenOnIrc(ircServer, "#bench", { onMessage: text => book.record("irc", text) });
	const peers = { trackerUrl, smtpUrl, ircPort: ircServer.port, ircChannel: "#bench" };
	http.createServer((req, res) => {
		const url = new URL(req.url ?? "/", "http://localhost");
		const reply = (status: number, body: unknown) => {
			res.writeHead(status, { "Content-Type": "application/json" });
			res.end(JSON.stringify(body));
		};
		if (url.pathname === "/peers") return reply(200, peers);
		if (url.pathname === "/counts") return reply(200, book.counts(url.searchParams.get("run") ?? ""));
		if (url.pathname === "/receipts") return reply(200, book.get(url.searchParams.get("run") ?? ""));
		reply(404, { message: "404 Not Found" });
	}).listen(Number(controlPort), "127.0.0.1");
}

if (require.main === module)
	serve(process.argv.slice(2)).catch(err => {
		console.error(err);
		process.exit(1);
	});
