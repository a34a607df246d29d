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
 *   (gateway/artifact-upload.ts), so a refused one is answered before the client sends a byte.
 * And HEAD, which moleculer-web does not route, is answered on every GET route as GitLab (Grape)
 * answers it: the GET's status and headers, Content-Length included, and no body. OPTIONS is
 * answered here as Grape answers it, 204 with the path's methods in `Allow`, and never reaches an
 * action: moleculer-web, without CORS, would run the action of the method named in
 * `Access-Control-Request-Method` (a DELETE) or else the GET.
 */
import http from "http";
import { closeAfterAnswer } from "./body";
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
const CONTINUE = Symbol("continue");

/** Marks a route handler that sends `100 Continue` itself once the request is authorized (sendContinue). */
export const SENDS_CONTINUE = Symbol("sends continue");

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

/** The methods a request's path has routes for (none: an unknown path). */
type MethodsOf = (req: http.IncomingMessage) => string[];

/** The methods routes are declared with (HEAD goes as GET, OPTIONS is answered here). */
const ROUTED_METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH"];

/** A request's path as moleculer-web matches it: no query, no trailing slash. */
export function routedPath(req: http.IncomingMessage): string {
	const path = (req.url ?? "").split("?")[0];
	return path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
}

/** A MethodsOf from a route matcher (moleculer-web's resolveAlias). */
export function methodsFrom(resolves: (path: string, method: string) => boolean): MethodsOf {
	return req => {
		const path = routedPath(req);
		return ROUTED_METHODS.filter(method => resolves(path, method));
	};
}

/** Whether a handler (a route's alias function) sends `100 Continue` itself. */
export function sendsContinue(handler: unknown): boolean {
	return typeof handler === "function" && (handler as { [SENDS_CONTINUE]?: boolean })[SENDS_CONTINUE] === true;
}

/** `Allow` as Grape writes it: OPTIONS, then the path's methods, HEAD beside GET. */
function allowHeader(methods: string[]): string {
	const allowed = ["OPTIONS"];
	for (const method of methods) {
		if (!allowed.includes(method)) allowed.push(method);
		if (method === "GET" && !allowed.includes("HEAD")) allowed.push("HEAD");
	}
	return allowed.join(", ");
}

/** OPTIONS answered from the route table alone; an unknown path is refused as a GET of it would be. */
function answeredOptions(handler: Handler, methodsOf: MethodsOf, unknownPath: Handler): Handler {
	return (req, res) => {
		if (req.method !== "OPTIONS") return handler(req, res);
		// A body sent with OPTIONS is not read: what remains of it is thrown away, for a while only.
		closeAfterAnswer(req, res);
		const methods = methodsOf(req);
		if (!methods.length) return unknownPath(req, res);
		res.writeHead(204, { Allow: allowHeader(methods) });
		res.end();
	};
}

export function createHardenedServer(
	limits: ServerLimits,
	routes: Handler,
	refuse: (req: http.IncomingMessage, res: http.ServerResponse, err: Error) => void,
	methodsOf: MethodsOf,
	unknownPath: Handler,
	/** Whether the request's route sends `100 Continue` itself, once authorized. */
	holdsContinue: (req: http.IncomingMessage) => boolean,
) {
	const handler = answeredOptions(routedAsGet(routes), methodsOf, unknownPath);
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
		if (holdsContinue(req)) {
			(req as { [CONTINUE]?: () => void })[CONTINUE] = () => {
				if (!res.headersSent && !res.writableEnded) res.writeContinue();
			};
		} else res.writeContinue();
		handler(req, res);
	});
	return server;
}
