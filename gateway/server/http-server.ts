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
 *   sends it; an artifacts upload gets its `100 Continue` only once it is authorized
 *   (gateway/files/artifact-upload.ts), so a refused one is answered before the client sends a byte;
 *   any other `Expect` is a 417.
 * Every request, whichever way Node hands it over, enters through one guarded entry
 * (gateway/server/guarded-entry.ts), named and traced once on the way in (lib/tracing/http-span.ts); an
 * `Upgrade:` request is answered as a plain request (no upgrade is accepted), and every answer
 * carries `X-Content-Type-Options: nosniff`.
 * HEAD, which moleculer-web does not route, is answered on every GET route as GitLab (Grape)
 * answers it: the GET's status and headers, Content-Length included, and no body. OPTIONS is
 * answered here as Grape answers it, 204 with the path's methods in `Allow` (the same a 405 names,
 * gateway/server/routing.ts), and never reaches an action: moleculer-web, without CORS, would run the action of the method named in
 * `Access-Control-Request-Method` (a DELETE) or else the GET.
 */
import http from "http";
import ApiGateway from "moleculer-web";
import { closeAfterAnswer } from "./body";
import { guardedEntry, refuseClientError, refuseConnect, type Arrival, type OnBroken, type Refuse } from "./guarded-entry";
import type { Routing } from "./routing";
import { badRequest, expectationFailed, tooLarge } from "../../lib/api/errors";
import { tracedRequests } from "../../lib/tracing/http-span";

export interface ServerLimits {
	headersTimeoutMs: number;
	/** The whole request, body included (a 2 GiB artifacts upload must fit). */
	requestTimeoutMs: number;
	idleTimeoutMs: number;
	maxConnections: number;
	/** The largest body any route accepts. */
	maxBodyBytes: number;
}

/** What the server hands requests to: the gateway. */
export interface Gateway {
	/** Routes a request (a HEAD comes as a GET); may return a promise, which the entry awaits for its failure. */
	route(req: http.IncomingMessage, res: http.ServerResponse): unknown;
	/** The gateway's error answer. */
	refuse: Refuse;
	onBroken: OnBroken;
	/** The route table, as OPTIONS, `Expect` and the request's span read it. */
	routes: Routing;
	/** The request's one id (gateway/server/request-id.ts). */
	requestId(req: http.IncomingMessage): string;
}

const KEEP_ALIVE_MS = 65_000;

const HEAD = Symbol("head");
const CONTINUE = Symbol("continue");

/** Sends the `100 Continue` held back for this request, if any (once). */
export function sendContinue(req: http.IncomingMessage): void {
	const held = req as { [CONTINUE]?: () => void };
	const send = held[CONTINUE];
	delete held[CONTINUE];
	send?.();
}

/** Whether the request came as HEAD (routed as GET; its response carries no body). */
export function isHead(req: http.IncomingMessage): boolean {
	return (req as { [HEAD]?: boolean })[HEAD] === true;
}

/** OPTIONS answered from the route table alone; an unknown path is refused as a GET of it would be. */
function answerOptions(gateway: Gateway, req: http.IncomingMessage, res: http.ServerResponse): void {
	// A body sent with OPTIONS is not read: what remains of it is thrown away, for a while only.
	closeAfterAnswer(req, res);
	const allow = gateway.routes.allow(req);
	if (allow === undefined) throw new ApiGateway.Errors.NotFoundError("NOT_FOUND", null);
	res.writeHead(204, { Allow: allow });
	res.end();
}

/** `Expect: 100-continue`: refused when the body cannot fit, held back when the route sends it itself, sent otherwise. */
function answerContinue(limits: ServerLimits, gateway: Gateway, req: http.IncomingMessage, res: http.ServerResponse): void {
	const length = Number(req.headers["content-length"]);
	if (Number.isFinite(length) && length > limits.maxBodyBytes) throw tooLarge();
	if (gateway.routes.sendsContinue(req)) {
		(req as { [CONTINUE]?: () => void })[CONTINUE] = () => {
			if (!res.headersSent && !res.writableEnded) res.writeContinue();
		};
	} else res.writeContinue();
}

/** What the guarded entry runs for every request. */
function handle(limits: ServerLimits, gateway: Gateway, req: http.IncomingMessage, res: http.ServerResponse, arrival: Arrival): unknown {
	res.setHeader("X-Content-Type-Options", "nosniff");
	// HTTP/1.1 requires Host; Node would answer its absence with a bare 400 of its own.
	if (req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor === 1) throw badRequest("400 Bad request");
	if (arrival === "checkExpectation") throw expectationFailed();
	if (arrival === "checkContinue") answerContinue(limits, gateway, req, res);
	if (req.method === "OPTIONS") return answerOptions(gateway, req, res);
	// A HEAD goes on as a GET. Node made its response as the answer to a HEAD: it sends the headers
	// and drops any body written to it.
	if (req.method === "HEAD") {
		req.method = "GET";
		(req as { [HEAD]?: boolean })[HEAD] = true;
	}
	return gateway.route(req, res);
}

export function createHardenedServer(limits: ServerLimits, gateway: Gateway) {
	const guarded = guardedEntry((req, res, arrival) => handle(limits, gateway, req, res, arrival), gateway.refuse, gateway.onBroken);
	// Named and traced once, before anything reads the request, its refusal included (docs/operations.md#traces).
	const entry = tracedRequests(guarded, { requestId: req => gateway.requestId(req), routeOf: req => gateway.routes.template(req) });
	const server = http.createServer(
		{
			headersTimeout: limits.headersTimeoutMs,
			requestTimeout: limits.requestTimeoutMs,
			keepAliveTimeout: KEEP_ALIVE_MS,
			connectionsCheckingInterval: 1000,
			// An `Upgrade:` request is a plain request, through the same entry, whatever listens for upgrades.
			shouldUpgradeCallback: () => false,
			// The entry answers a request without Host itself, in GitLab's words.
			requireHostHeader: false,
		},
		entry,
	);
	server.maxConnections = limits.maxConnections;
	server.timeout = limits.idleTimeoutMs;
	server.on("checkContinue", (req: http.IncomingMessage, res: http.ServerResponse) => entry(req, res, "checkContinue"));
	server.on("checkExpectation", (req: http.IncomingMessage, res: http.ServerResponse) => entry(req, res, "checkExpectation"));
	server.on("clientError", refuseClientError);
	server.on("connect", refuseConnect);
	return server;
}
