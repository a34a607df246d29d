/**
 * The gateway's HTTP server, with the limits a hostile network needs and Node's defaults lack:
 * - request headers within `headersTimeout` (Node: 60 s), checked every second (Node checks every
 *   30 s, so a slowloris socket lived up to 90 s);
 * - a connection on which nothing moves for `idleTimeoutMs` is closed: a body that trickles, or a
 *   reader that stopped reading, holds no socket for the 5-minute request time;
 * - at most `maxConnections` open connections per process (more are closed on arrival);
 * - keep-alive longer than the usual load balancer idle timeout, so a reused connection is never
 *   cut under a client;
 * - `Expect: 100-continue` with a body larger than any route takes is refused before the client
 *   sends it.
 * And HEAD, which moleculer-web does not route, is answered on every GET route as GitLab (Grape)
 * answers it: the GET's status and headers, Content-Length included, and no body.
 */
import http from "http";
import { tooLarge } from "../lib/api/errors";

export interface ServerLimits {
	headersTimeoutMs: number;
	/** The whole request, body included (a 2 GiB artifacts upload must fit). */
	requestTimeoutMs: number;
	idleTimeoutMs: number;
	maxConnections: number;
	/** The largest body any route accepts. */
	maxBodyBytes: number;
}

const KEEP_ALIVE_MS = 65_000;

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

const HEAD = Symbol("head");

/** Whether the request came as HEAD (routed as GET; its response carries no body). */
export function isHead(req: http.IncomingMessage): boolean {
	return (req as { [HEAD]?: boolean })[HEAD] === true;
}

/**
 * A HEAD request goes on as a GET. Node made its response before this runs, as the answer to a
 * HEAD, so the response sends the headers and drops any body written to it.
 */
function routedAsGet(handler: Handler): Handler {
	return (req, res) => {
		if (req.method === "HEAD") {
			req.method = "GET";
			(req as { [HEAD]?: boolean })[HEAD] = true;
		}
		handler(req, res);
	};
}

export function createHardenedServer(limits: ServerLimits, routes: Handler, refuse: (req: http.IncomingMessage, res: http.ServerResponse, err: Error) => void) {
	const handler = routedAsGet(routes);
	const server = http.createServer(
		{
			headersTimeout: limits.headersTimeoutMs,
			requestTimeout: limits.requestTimeoutMs,
			keepAliveTimeout: KEEP_ALIVE_MS,
			connectionsCheckingInterval: 1000,
		},
		handler,
	);
	server.maxConnections = limits.maxConnections;
	server.timeout = limits.idleTimeoutMs;
	server.on("checkContinue", (req, res) => {
		const length = Number(req.headers["content-length"]);
		if (Number.isFinite(length) && length > limits.maxBodyBytes) return refuse(req, res, tooLarge());
		res.writeContinue();
		handler(req, res);
	});
	return server;
}
