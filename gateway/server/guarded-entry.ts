/**
 * The one way into the gateway's code (docs/architecture.md#the-guarded-entry). Node hands a request
 * over in several ways: a request, one that waits for `100 Continue` (`checkContinue`), one with an
 * `Expect` it does not know (`checkExpectation`); an `Upgrade:` request comes as a plain request
 * (gateway/server/http-server.ts accepts no upgrade). Every one of them goes through `guardedEntry`: what
 * its handler throws, or the promise it returns rejects with, becomes the gateway's error answer (a
 * GitLab-style 4xx for what the client sent wrong, `500 {"message":"500 Internal Server Error"}`
 * logged with the request id otherwise) and the process goes on serving.
 *
 * Bytes that are no HTTP request (`clientError`) and a `CONNECT` never make a request object: they
 * are answered on the socket itself, in the same JSON, and the connection closed.
 */
import type { IncomingMessage, ServerResponse } from "http";
import type { Duplex } from "stream";

/** The Node event a request came with. */
export type Arrival = "request" | "checkContinue" | "checkExpectation";

export type EntryHandler = (req: IncomingMessage, res: ServerResponse, arrival: Arrival) => unknown;

/** The gateway's error answer (its `onError`: status and body from gateway/server/errors.ts, the unexpected logged with the request id). */
export type Refuse = (req: IncomingMessage, res: ServerResponse, err: unknown) => void;

/** Told when the error answer itself failed; the connection is then closed. */
export type OnBroken = (err: unknown, req: IncomingMessage) => void;

/** `handle`, guarded: nothing it throws or rejects with leaves this function. */
export function guardedEntry(handle: EntryHandler, refuse: Refuse, onBroken: OnBroken) {
	const failed = (req: IncomingMessage, res: ServerResponse, err: unknown) => {
		try {
			refuse(req, res, err);
		} catch (broken) {
			onBroken(broken, req);
			res.destroy();
		}
	};
	return function entry(req: IncomingMessage, res: ServerResponse, arrival: Arrival = "request"): void {
		let result: unknown;
		try {
			result = handle(req, res, arrival);
		} catch (err) {
			failed(req, res, err);
			return;
		}
		if (typeof (result as PromiseLike<unknown> | undefined)?.then === "function")
			(result as PromiseLike<unknown>).then(undefined, (err: unknown) => failed(req, res, err));
	};
}

const REASONS: Record<number, string> = {
	400: "Bad Request",
	405: "Method Not Allowed",
	408: "Request Timeout",
	413: "Payload Too Large",
	431: "Request Header Fields Too Large",
};

/** What Node's parser and timers report, as the status Node itself would answer (its default clientError handler). */
const CLIENT_ERRORS: Record<string, { status: number; message: string }> = {
	HPE_HEADER_OVERFLOW: { status: 431, message: "431 Request Header Fields Too Large" },
	HPE_CHUNK_EXTENSIONS_OVERFLOW: { status: 413, message: "413 Request Entity Too Large" },
	ERR_HTTP_REQUEST_TIMEOUT: { status: 408, message: "408 Request Timeout" },
};
const BAD_REQUEST = { status: 400, message: "400 Bad request" };

/** A whole answer written on a socket that has no response object, then the connection closed. */
function answerOnSocket(socket: Duplex, status: number, message: string): void {
	const body = JSON.stringify({ message });
	socket.write(
		`HTTP/1.1 ${status} ${REASONS[status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
			`X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${body}`,
	);
	socket.destroy();
}

/**
 * `clientError`: the bytes were no HTTP request (a bad request line or header, a head over Node's
 * limit, a request that took too long). Answered as Node would, with a GitLab body, unless the
 * connection is gone or an answer to an earlier request on it is being written (an answer in the
 * middle of another would corrupt both).
 */
export function refuseClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
	const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
	if (err.code === "ECONNRESET" || !socket.writable || inFlight?.headersSent) {
		socket.destroy();
		return;
	}
	const { status, message } = CLIENT_ERRORS[err.code ?? ""] ?? BAD_REQUEST;
	answerOnSocket(socket, status, message);
}

/** `CONNECT`: the gateway is no proxy. */
export function refuseConnect(_req: IncomingMessage, socket: Duplex): void {
	if (socket.writable) answerOnSocket(socket, 405, "405 Method Not Allowed");
	else socket.destroy();
}
