/**
 * The fast path of a cached GET (docs/architecture.md#the-fast-path): a request that the gateway
 * can answer entirely from what it already holds is answered before moleculer-web makes a
 * context for it, so it skips the framework's per-request machinery (its `rest` action, the route
 * middlewares, the hooks' promises) as a cache hit already skips the service.
 *
 * It is the same decision the hooks make, made at once from the same pieces, and taken only when
 * nothing about the request needs more than them:
 * - a GET (or HEAD) without a query string, a body, a `Sudo` or a conditional header;
 * - a route of the API whose action declares `cache` and needs a caller;
 * - a private token whose owner the gateway keeps (gateway/auth.ts);
 * - on /projects/:id/…, the caller's access to the project in the cache, at the level the action asks;
 * - the parameters passing the action's schema, converted as the hooks convert them;
 * - the answer in the in-process cache (the all-in-one's); a page of results gets the pagination
 *   headers the hooks give it (no query: its links name only `page` and `per_page`).
 * Anything else, and every refusal but a 429, goes the usual way, which gives its own answer: the
 * fast path never answers differently, it only answers sooner. The request is counted against the
 * user as the usual way counts it, and a 429 is answered by the gateway's error handler.
 */
import type { IncomingMessage, ServerResponse } from "http";
import type net from "net";
import { hasLevel, type Caller, type ProjectAccess } from "../lib/accounts/access";
import { isPaginated, type Paginated } from "../lib/api/pagination";
import { extractToken, type RecentTokens } from "./auth";
import type { CacheReads, CachedAction } from "./cache-reads";
import { clientAddress } from "./client-address";
import type { EdgeValidator } from "./edge-validation";
import { routedPath } from "./http-server";
import { ACCESS_LOOKUP, accessLookupParams, isProjectRoute, mayNameProject, MAX_TOKEN_LENGTH } from "./project-route";
import { userKey, type RequestLimits } from "./rate-limit";
import { isJsonBody } from "./responses";

/** An action as the registry describes it, with the access rules it declares (types/moleculer.d.ts). */
type FastPathAction = CachedAction & { params?: object; auth?: string; access?: number; visibility?: string };

/** A moleculer-web alias, as far as the fast path reads it. */
interface AliasLike {
	path: string;
	type?: string;
	action?: unknown;
	route?: { opts?: { name?: string } };
}

export interface FastPathGateway {
	/** The API route's name: only its aliases are answered here. */
	routeName: string;
	trustedProxies: net.BlockList;
	/** moleculer-web's alias resolution (the first alias that matches, as its own routing takes). */
	resolveAlias(path: string, method: string): { alias: AliasLike; params: Record<string, unknown> } | false;
	/** The action's endpoint, as moleculer-web finds it (an Error: none). */
	endpointOf(actionName: string): { local?: boolean; action: FastPathAction } | Error;
	/** What moleculer-web would name the request: its `X-Request-ID` (empty: none is sent). */
	requestId(req: IncomingMessage): string;
	/** The hooks' own pieces, read where the hooks read them (mixins/gateway-caller.mixin.ts): the same objects, never copies. */
	hooks: { recentTokens: RecentTokens; cacheReads: CacheReads; edgeValidator: EdgeValidator; limits: RequestLimits };
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
 * Answers `req` from the cache when it can, and says whether it did; when it did not, nothing has
 * been counted, written or changed.
 */
export function answerCachedGet(gateway: FastPathGateway, req: IncomingMessage, res: ServerResponse): boolean {
	const { recentTokens, cacheReads, edgeValidator, limits } = gateway.hooks;
	if (req.method !== "GET" || req.url === undefined || req.url.includes("?")) return false;
	const headers = req.headers;
	for (const name of SLOW_HEADERS) if (headers[name] !== undefined) return false;
	if (!cacheReads.sharesEntries) return false;
	// From the headers alone (no query, no body): a request without one is not worth resolving its route.
	const token = extractToken(req);
	if (!token || token.length > MAX_TOKEN_LENGTH) return false;

	const found = gateway.resolveAlias(routedPath(req), "GET");
	if (!found) return false;
	const { alias, params } = found;
	if (alias.route?.opts?.name !== gateway.routeName || alias.type !== "call" || typeof alias.action !== "string") return false;
	const endpoint = gateway.endpointOf(alias.action);
	if (endpoint instanceof Error || !endpoint.local) return false;
	const action = endpoint.action;
	if (!action.cache || action.auth === "none" || (action.visibility != null && action.visibility !== "published")) return false;

	const user: Caller | undefined = recentTokens.ownerOf(recentTokens.lookup(token));
	if (!user) return false;

	// The meta the hooks give the action (mixins/gateway-caller.mixin.ts), which its cache key may read.
	const meta: { clientAddress: string; user: Caller; access?: ProjectAccess; projectKey?: string } = {
		clientAddress: clientAddress(req, gateway.trustedProxies),
		user,
	};
	if (isProjectRoute(alias)) {
		if (!mayNameProject(params.id)) return false;
		const access = cacheReads.peek(cacheReads.keyOf(ACCESS_LOOKUP, accessLookupParams(params.id, user), meta)) as ProjectAccess | undefined;
		if (access === undefined) return false;
		meta.access = access;
		meta.projectKey = String(access.project.id);
	}
	if (!edgeValidator.passesNow(action, params)) return false;
	if (action.access !== undefined && !(meta.access && hasLevel(meta.access, action.access))) return false;
	const data = cacheReads.peek(cacheReads.keyOf(action, params, meta));
	if (typeof data !== "object" || data === null || !isJsonBody(data)) return false;

	const started = performance.now();
	const id = gateway.requestId(req);
	if (id) res.setHeader("X-Request-ID", id);
	limits.count(res, userKey(user.id)).then(
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
	return true;
}
