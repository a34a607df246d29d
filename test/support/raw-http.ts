/**
 * HTTP the way an attacker sends it: from a chosen loopback address (127.0.0.2 is as local as
 * 127.0.0.1, and lets a test be "the proxy" or "a client"), with headers fetch will not send
 * (a broken Host), or byte by byte over a raw socket.
 */
import http from "http";
import net from "net";

export interface RawReply {
	status: number;
	headers: http.IncomingHttpHeaders;
	body: any;
	text: string;
}

export interface FromOptions {
	method?: string;
	headers?: Record<string, string>;
	/** JSON-encoded unless a string or Buffer. */
	body?: unknown;
	/** Source address of the connection (default 127.0.0.1). */
	localAddress?: string;
}

/** One request over a fresh connection from `localAddress`. */
export function requestFrom(port: number, path: string, opts: FromOptions = {}): Promise<RawReply> {
	return new Promise((resolve, reject) => {
		const headers: Record<string, string | number> = { ...opts.headers };
		let payload: Buffer | undefined;
		if (opts.body !== undefined) {
			payload = Buffer.isBuffer(opts.body) ? opts.body : Buffer.from(typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body));
			headers["Content-Type"] ??= "application/json";
			headers["Content-Length"] = payload.length;
		}
		const options = { host: "127.0.0.1", port, path, method: opts.method ?? "GET", headers, localAddress: opts.localAddress, agent: false };
		const req = http.request(options, res => {
			const chunks: Buffer[] = [];
			res.on("data", c => chunks.push(c));
			res.on("end", () => {
				const text = Buffer.concat(chunks).toString("utf8");
				let body: unknown = text;
				try {
					body = JSON.parse(text);
				} catch {
					/* not JSON */
				}
				resolve({ status: res.statusCode ?? 0, headers: res.headers, body, text });
			});
		});
		req.on("error", reject);
		req.end(payload);
	});
}

export interface SocketOutcome {
	/** The response's raw text received before the server closed the connection (may be empty). */
	received: string;
	/** The server closed (or reset) the connection. */
	closed: boolean;
	/** Bytes of `chunks` written before the connection closed. */
	written: number;
}

/**
 * Writes `chunks` one by one, `gapMs` apart, over one connection, and reports what came back and
 * whether the server closed the connection. Stops writing once it is closed; gives up (and
 * reports `closed: false`) after the last chunk plus `waitMs`.
 */
export function trickle(port: number, chunks: (string | Buffer)[], gapMs: number, waitMs = 3000): Promise<SocketOutcome> {
	return new Promise(resolve => {
		const socket = net.connect(port, "127.0.0.1");
		let received = "";
		let written = 0;
		let closed = false;
		let timer: NodeJS.Timeout | null = null;
		const finish = () => {
			if (timer) clearTimeout(timer);
			socket.destroy();
			resolve({ received, closed, written });
		};
		socket.on("data", d => (received += d.toString("latin1")));
		socket.on("error", () => undefined);
		socket.on("close", () => {
			closed = true;
			finish();
		});
		let i = 0;
		const next = () => {
			if (closed) return;
			if (i >= chunks.length) {
				timer = setTimeout(finish, waitMs);
				return;
			}
			const chunk = chunks[i++];
			socket.write(chunk, () => (written += Buffer.byteLength(chunk)));
			timer = setTimeout(next, gapMs);
		};
		socket.once("connect", next);
	});
}

/** Opens a connection and resolves once it is established, or with null when the server ends it at once. */
export function openConnection(port: number): Promise<net.Socket | null> {
	return new Promise(resolve => {
		const socket = net.connect(port, "127.0.0.1");
		socket.on("error", () => resolve(null));
		socket.once("close", () => resolve(null));
		socket.once("connect", () => {
			// The server may accept at the TCP level and then close at once (over its connection cap):
			// a live connection still answers a request.
			socket.write("GET /api/v3/nothing HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
			socket.once("data", () => resolve(socket));
		});
	});
}
