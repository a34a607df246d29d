/**
 * The gateway's moleculer-web routes, mounted from the route tables (gateway/routes): the internal
 * API (the shared secret; JSON and text bodies, or the raw stream), the API (the edge decision,
 * gateway/caller.mixin.ts; parsed bodies; JSON answers with pagination headers) and the API's own
 * description (no token).
 */
import type { ServerResponse } from "http";
import type { Context } from "moleculer";
import type net from "net";
import { config } from "../config";
import type { ApiMeta } from "../lib/api/context";
import { isPaginated, paginationHeaders, type Paginated } from "../lib/api/pagination";
import { checkAnnouncedLength, bodyReader } from "./server/body";
import { EncodedJson } from "../lib/cache/cache-reads";
import { callOptions, type GatewayCallerMethods, type GatewayRequest } from "./caller.mixin";
import { countedAgainstAddress } from "./edge/rate-limit";
import { isJsonBody, JSON_TYPE, USER_CONTENT_HEADERS } from "./server/responses";
import { mergeAliases, routeTables, V3_ROOT, V4_ROOT, v4RouteTables } from "./routes";
import { docsRoute } from "./openapi/docs.routes";
import type { RouteTable } from "./routes/types";

type Req = GatewayRequest;
type Ctx = Context<unknown, ApiMeta>;

/** The gateway as its routes' hooks see it. */
type RouteHost = GatewayCallerMethods & { linkBase(req: Req): string };

/** A moleculer-web route's own settings, as the hooks read them. */
interface RouteLike {
	opts?: { encodedHits?: boolean };
}

/** The routes, from `tables` (every resource's: v3's under /api/v3, `v4Tables` under /api/v4). */
export function gatewayRoutes(trustedProxies: net.BlockList, tables: RouteTable[] = routeTables, v4Tables: RouteTable[] = v4RouteTables) {
	return [
		internalStreamRoute(tables),
		internalRoute(tables),
		apiRoute(tables, v4Tables),
		// No token there: each request counts against the address, as an anonymous one elsewhere.
		{ ...docsRoute, use: [countedAgainstAddress(trustedProxies)] },
	];
}

/** The internal API's uploads: the shared secret, then the raw stream, with no timeout. */
function internalStreamRoute(tables: RouteTable[]) {
	return {
		name: "internal-stream",
		path: `${V3_ROOT}/internal`,
		authentication: false,
		authorization: false,
		bodyParsers: false,
		callOptions: { timeout: 0 },
		aliases: mergeAliases("internalStream", tables),
		async onBeforeCall(this: RouteHost, ctx: Ctx, route: unknown, req: Req) {
			await this.internalCaller(ctx, req);
			// Refuse an announced oversized body before reading a byte of it; the artifact store
			// counts the bytes of chunked uploads and checks they match the announced length.
			checkAnnouncedLength(req, config.maxArtifactBytes);
		},
		mappingPolicy: "restrict",
	};
}

/** The rest of the internal API: the shared secret, then a JSON or text body. */
function internalRoute(tables: RouteTable[]) {
	return {
		name: "internal",
		path: `${V3_ROOT}/internal`,
		authentication: false,
		authorization: false,
		bodyParsers: false,
		use: [bodyReader({ limit: config.maxBodyBytes, timeoutMs: config.bodyTimeoutMs, text: true })],
		callOptions,
		aliases: mergeAliases("internal", tables),
		async onBeforeCall(this: RouteHost, ctx: Ctx, route: unknown, req: Req) {
			await this.internalCaller(ctx, req);
			// A text/plain body (a build trace chunk) is not an object to merge into params.
			if (typeof req.body === "string") req.$params.text = req.body;
		},
		mappingPolicy: "restrict",
	};
}

/** The API, both versions: the edge decision before the call, the answer's type, headers and page after it. */
function apiRoute(tables: RouteTable[], v4Tables: RouteTable[]) {
	return {
		name: "api",
		path: "",
		// The edge decision is one hook, which resolves the caller and checks its access itself.
		authentication: false,
		authorization: false,
		bodyParsers: false,
		use: [bodyReader({ limit: config.maxBodyBytes, timeoutMs: config.bodyTimeoutMs })],
		callOptions,
		aliases: { ...mergeAliases("api", tables, V3_ROOT), ...mergeAliases("api", v4Tables, V4_ROOT) },
		mappingPolicy: "restrict",
		// A cache hit from Redis may come back as its JSON bytes (lib/cache/cache-reads.ts): sent as they are.
		encodedHits: true,
		onBeforeCall(this: RouteHost, ctx: Ctx, route: RouteLike, req: Req, res: ServerResponse, alias: { path: string; type?: string }) {
			return this.apiCaller(ctx, req, res, alias, !!route.opts?.encodedHits);
		},
		onAfterCall: apiAnswer,
	};
}

/** What the API sends for an action's answer: its type and headers set, and a page's rows with its pagination headers. */
function apiAnswer(this: RouteHost, ctx: Ctx, route: unknown, req: Req, res: ServerResponse, data: unknown) {
	if (data instanceof EncodedJson) {
		ctx.meta.$responseType = JSON_TYPE;
		return data.bytes;
	}
	if (!ctx.meta.$responseType && isJsonBody(data)) ctx.meta.$responseType = JSON_TYPE;
	// Anything else an action answers is what a user stored (a snippet's raw content).
	if (ctx.meta.$responseType !== JSON_TYPE) for (const [name, value] of Object.entries(USER_CONTENT_HEADERS)) res.setHeader(name, value);
	// moleculer-web wants a Location on every 201; without one from the service it is the URL posted to.
	if (ctx.meta.$statusCode === 201 && !ctx.meta.$location) ctx.meta.$location = (req.originalUrl ?? req.url ?? "").split("?")[0];
	return isPaginated(data) ? pageAnswer(this, ctx, req, res, data) : data;
}

/** A page: its Link and X-Total… headers (the private token left out of the links), and its rows as the body. */
function pageAnswer(host: RouteHost, ctx: Ctx, req: Req, res: ServerResponse, data: Paginated<unknown>) {
	const query = { ...req.query };
	delete query.private_token;
	const headers = paginationHeaders(data, host.linkBase(req), query);
	for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
	// A page from Redis brings its rows as their JSON bytes (lib/cache/cache-reads.ts `encodedPage`): sent as they are.
	const rows: unknown = data.rows;
	if (rows instanceof EncodedJson) {
		ctx.meta.$responseType = JSON_TYPE;
		return rows.bytes;
	}
	return rows;
}
