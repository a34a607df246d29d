/**
 * The fast path of a cached GET (docs/architecture.md#the-fast-path): a request that the gateway
 * can answer entirely from what it already holds is answered before moleculer-web makes a
 * context for it, so it skips the framework's per-request machinery (its `rest` action, the route
 * middlewares, the hook's promises) as a cache hit already skips the service.
 *
 * The decision is the edge's own (gateway/edge/edge-pipeline.ts), made at once; this file only says
 * which requests it is tried on, which are those where nothing needs more than it reads:
 * - a GET (or HEAD) without a query string, a body, a `Sudo` or a conditional header;
 * - with a private token (a request without one is not worth resolving its route);
 * - a route of the API whose action declares `cache`, needs a caller and runs in this process;
 * - and an answer in the in-process cache (the all-in-one's) that is JSON; a page of results gets
 *   the pagination headers the usual way gives it (no query: its links name only `page` and `per_page`).
 * Anything else, and every refusal but a 429, goes the usual way, which gives its own answer: the
 * fast path never answers differently, it only answers sooner. The request is counted against the
 * user as the usual way counts it, and a 429 is answered by the gateway's error handler.
 */
import type { IncomingMessage, ServerResponse } from "http";
import type net from "net";
import { isPaginated, type Paginated } from "../../lib/api/pagination";
import { extractToken } from "./auth";
import { clientAddress } from "../server/client-address";
import { decideNow, type EdgeAction, type EdgePieces } from "./edge-pipeline";
import { MAX_TOKEN_LENGTH } from "./project-route";
import { isJsonBody } from "../server/responses";
import type { Routing } from "../server/routing";

/** An action as the registry describes it, with its visibility. */
type FastPathAction = EdgeAction & { visibility?: string };

export interface FastPathGateway {
	/** The API route's name: only its aliases are answered here. */
	routeName: string;
	trustedProxies: net.BlockList;
	routes: Routing;
	/** The action's endpoint, as moleculer-web finds it (an Error: none). */
	endpointOf(actionName: string): { local?: boolean; action: FastPathAction } | Error;
	/** The request's id, as moleculer-web would name it (gateway/server/request-id.ts). */
	requestId(req: IncomingMessage): string;
	/** The pieces the edge decision reads, where the gateway's hook reads them: the same objects, never copies. */
	pieces: EdgePieces;
	/** Writes a cached answer as the usual way writes it (the gateway's JSON, its type and length). */
	send(req: IncomingMessage, res: ServerResponse, data: object): void;
	/** A page's pagination headers, as the usual way writes them for a request without a query. */
	pageHeaders(req: IncomingMessage, page: Paginated<unknown>): Record<string, string>;
	/** Answers an error as the gateway's error handler does. */
	refuse(req: IncomingMessage, res: ServerResponse, err: unknown): void;
	/** Records the request in the HTTP metrics. */
	observe(ms: number, status: number): void;
}

/** Headers that bring something the fast path does not read: a body, a sudo, a conditional request. */
const SLOW_HEADERS = ["content-length", "transfer-encoding", "sudo", "if-none-match", "if-modified-since"];

/**
 * Answers `req` from the cache when it can: the answer under way (its failures are the entry's,
 * gateway/server/guarded-entry.ts). Undefined when it leaves the request to the usual way, having counted,
 * written and changed nothing.
 */
export function answerCachedGet(gateway: FastPathGateway, req: IncomingMessage, res: ServerResponse): Promise<void> | undefined {
	if (req.method !== "GET" || req.url === undefined || req.url.includes("?")) return undefined;
	const headers = req.headers;
	for (const name of SLOW_HEADERS) if (headers[name] !== undefined) return undefined;
	const pieces = gateway.pieces;
	if (!pieces.cacheReads.sharesEntries) return undefined;
	const token = extractToken(req);
	if (!token || token.length > MAX_TOKEN_LENGTH) return undefined;

	const found = gateway.routes.of(req, "GET");
	if (!found) return undefined;
	const { alias, params } = found;
	if (alias.route?.opts?.name !== gateway.routeName || alias.type !== "call" || typeof alias.action !== "string") return undefined;
	const endpoint = gateway.endpointOf(alias.action);
	if (endpoint instanceof Error || !endpoint.local) return undefined;
	const action = endpoint.action;
	if (!action.cache || action.auth === "none" || (action.visibility != null && action.visibility !== "published")) return undefined;

	const meta = { clientAddress: clientAddress(req, gateway.trustedProxies) };
	const decided = decideNow(pieces, { http: req, alias, action, params, meta, readsCache: true });
	const data = decided?.cached;
	if (typeof data !== "object" || data === null || !isJsonBody(data)) return undefined;

	const started = performance.now();
	res.setHeader("X-Request-ID", gateway.requestId(req));
	return pieces.limits.count(res, decided!.countKey).then(
		() => {
			if (isPaginated(data)) {
				for (const [name, value] of Object.entries(gateway.pageHeaders(req, data))) res.setHeader(name, value);
				gateway.send(req, res, data.rows);
			} else gateway.send(req, res, data);
			gateway.observe(performance.now() - started, res.statusCode);
		},
		(err: unknown) => {
			gateway.refuse(req, res, err);
			gateway.observe(performance.now() - started, res.statusCode);
		},
	);
}
