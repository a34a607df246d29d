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

export function createHardenedServer(
	limits: ServerLimits,
	handler: Handler,
	refuse: (req: http.IncomingMessage, res: http.ServerResponse, err: Error) => void,
) {
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
