/**
 * One HTTP exchange as raw bytes: whatever a test writes goes on the wire as it is (no client
 * library normalises a path, an escape or a header), and the first final answer comes back parsed
 * (interim `1xx` answers noted). Each exchange has its own connection, closed afterwards.
 */
import net from "net";

export interface RawAnswer {
	status: number;
	headers: Record<string, string>;
	body: Buffer;
	/** Interim answers before it (`100 Continue`). */
	interim: number[];
}

export interface ExchangeOptions {
	/** The harness's own bound on the wait (never a claim about the server's speed). */
	timeoutMs: number;
	/** The request was a HEAD: the answer has no body, whatever its length says. */
	head?: boolean;
}

const HEAD_END = Buffer.from("\r\n\r\n");

interface Head {
	status: number;
	headers: Record<string, string>;
	length: number;
}

function parseHead(bytes: Buffer): Head {
	const lines = bytes.toString("latin1").split("\r\n");
	const status = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0])?.[1];
	if (!status) throw new Error(`not an HTTP answer: ${JSON.stringify(lines[0].slice(0, 80))}`);
	const headers: Record<string, string> = {};
	for (const line of lines.slice(1)) {
		const colon = line.indexOf(":");
		if (colon <= 0) continue;
		const name = line.slice(0, colon).trim().toLowerCase();
		const value = line.slice(colon + 1).trim();
		headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
	}
	return { status: Number(status), headers, length: bytes.length };
}

/** A chunked body's bytes, or null while it is incomplete. */
function dechunk(bytes: Buffer): Buffer | null {
	const parts: Buffer[] = [];
	let at = 0;
	for (;;) {
		const lineEnd = bytes.indexOf("\r\n", at);
		if (lineEnd < 0) return null;
		const size = parseInt(bytes.subarray(at, lineEnd).toString("latin1").split(";")[0], 16);
		if (!Number.isFinite(size)) throw new Error("a chunk size that does not parse");
		// The last chunk, then the trailers (if any) and an empty line.
		if (size === 0) return bytes.indexOf(HEAD_END, lineEnd) >= 0 ? Buffer.concat(parts) : null;
		const start = lineEnd + 2;
		if (bytes.length < start + size + 2) return null;
		parts.push(bytes.subarray(start, start + size));
		at = start + size + 2;
	}
}

/** The first final answer in `bytes`, or null while it is incomplete (`closed`: nothing more will come). */
function parseAnswer(bytes: Buffer, head: boolean, closed: boolean): RawAnswer | null {
	const interim: number[] = [];
	let rest = bytes;
	for (;;) {
		const end = rest.indexOf(HEAD_END);
		if (end < 0) return null;
		const parsed = parseHead(rest.subarray(0, end));
		rest = rest.subarray(end + 4);
		if (parsed.status >= 100 && parsed.status < 200) {
			interim.push(parsed.status);
			continue;
		}
		const { status, headers } = parsed;
		if (head || status === 204 || status === 304) return { status, headers, body: Buffer.alloc(0), interim };
		if (/chunked/i.test(headers["transfer-encoding"] ?? "")) {
			const body = dechunk(rest);
			return body ? { status, headers, body, interim } : null;
		}
		if (headers["content-length"] !== undefined) {
			const length = Number(headers["content-length"]);
			return rest.length >= length ? { status, headers, body: rest.subarray(0, length), interim } : null;
		}
		return closed ? { status, headers, body: rest, interim } : null;
	}
}

/** Writes `request` on a new connection to 127.0.0.1:`port` and resolves with the first final answer. */
export function exchange(port: number, request: Buffer | string, opts: ExchangeOptions): Promise<RawAnswer> {
	return new Promise((resolve, reject) => {
		const socket = net.connect(port, "127.0.0.1");
		let received = Buffer.alloc(0);
		let done = false;
		const finish = (err: Error | null, answer?: RawAnswer) => {
			if (done) return;
			done = true;
			clearTimeout(timer);
			socket.destroy();
			if (err) reject(err);
			else resolve(answer!);
		};
		const timer = setTimeout(() => finish(new Error(`no answer within ${opts.timeoutMs} ms`)), opts.timeoutMs);
		const check = (closed: boolean) => {
			try {
				const answer = parseAnswer(received, !!opts.head, closed);
				if (answer) finish(null, answer);
				else if (closed)
					finish(new Error(`closed without a whole answer (${received.length} bytes: ${JSON.stringify(received.toString("latin1").slice(0, 120))})`));
			} catch (err) {
				finish(err as Error);
			}
		};
		socket.on("data", chunk => {
			received = Buffer.concat([received, chunk]);
			check(false);
		});
		// The server may close (or reset) while the request is still being written: what it answered counts.
		socket.on("error", () => check(true));
		socket.on("close", () => check(true));
		socket.on("connect", () => socket.write(request));
	});
}
