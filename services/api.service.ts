/**
 * The gateway: owns HTTP. Routes under /api/v3, GitLab error bodies, authentication by private
 * token, the project and the caller's access level resolved once per request, pagination
 * headers, body limits and rate limiting. Services behind it own rules and data.
 */
import type { IncomingMessage, ServerResponse } from "http";
import type { Context, ServiceSchema } from "moleculer";
import ApiGateway from "moleculer-web";
import { config } from "../config";
import { extractToken, rateLimitKey } from "../gateway/auth";
import { toHttpError } from "../gateway/errors";
import { rateLimitStoreFactory } from "../gateway/rate-limit-store";
import { mergeAliases } from "../gateway/routes";
import { docsRoute } from "../gateway/routes/docs.routes";
import type { Caller, ProjectAccess } from "../lib/access";
import {
	ACCESS_CHANGED_EVENT,
	changedPatterns,
	lookupCacheKey,
	PROJECT_ACCESS,
	projectRefKey,
	RESOLVE_TOKEN,
	type AccessChange,
	type CachedLookup,
} from "../lib/auth-cache";
import type { ApiMeta } from "../lib/context";
import { hashToken, safeEqual } from "../lib/crypto";
import { notFound, tooLarge, unauthorized } from "../lib/errors";
import { isPaginated, paginationHeaders } from "../lib/pagination";
import { cleanTwice } from "../mixins/cache-cleaner.mixin";

type Req = IncomingMessage & {
	$params: Record<string, unknown>;
	$action?: { name: string; auth?: string };
	$alias?: { path: string };
	query: Record<string, unknown>;
	originalUrl?: string;
	body?: unknown;
};
type Res = ServerResponse;

const PROJECT_ROUTE = /^\/?projects\/:id(\/|$)/;
const bodyLimit = config.maxBodyBytes;
const callOptions = { timeout: config.requestTimeoutMs };

/**
 * GitLab (Grape) sends JSON as exactly `application/json`, and some v3 clients parse nothing
 * else (the gitlab npm package reads `application/json; charset=utf-8` as text).
 */
const JSON_TYPE = "application/json";

/** What moleculer-web would JSON-encode (not bytes, streams, or text with its own type). */
function isJsonBody(data: unknown): boolean {
	if (data === null || data === undefined || Buffer.isBuffer(data)) return false;
	const obj = data as { pipe?: unknown; type?: unknown };
	return typeof obj.pipe !== "function" && obj.type !== "Buffer";
}

function sendJson(res: Res, status: number, body: unknown) {
	if (res.headersSent) return res.end();
	const payload = JSON.stringify(body);
	res.writeHead(status, { "Content-Type": JSON_TYPE, "Content-Length": Buffer.byteLength(payload) });
	res.end(payload);
}

const ApiService: ServiceSchema<any> = {
	name: "api",
	mixins: [ApiGateway as unknown as Partial<ServiceSchema>],

	settings: {
		port: config.port,
		ip: "0.0.0.0",
		path: "/api/v3",
		// Request lines can carry private_token in the query: never log them.
		logRequest: null,
		logResponse: null,
		logRequestParams: null,
		logResponseData: null,
		log4XXResponses: false,
		logRouteRegistration: "debug",
		rateLimit: config.rateLimitPerMinute
			? {
					window: 60 * 1000,
					limit: config.rateLimitPerMinute,
					headers: true,
					key: rateLimitKey,
					StoreFactory: rateLimitStoreFactory(config.redisUrl),
				}
			: undefined,
		routes: [
			{
				name: "internal-stream",
				path: "/internal",
				authentication: false,
				authorization: false,
				bodyParsers: false,
				callOptions: { timeout: 0 },
				aliases: mergeAliases("internalStream"),
				onBeforeCall(this: any, ctx: Context<unknown, { contentLength?: number }>, route: unknown, req: Req) {
					this.checkSharedSecret(req);
					// Refuse an announced oversized body before reading a byte of it; the service
					// counts the bytes of chunked uploads and checks they match the announced length.
					const length = Number(req.headers["content-length"]);
					if (req.headers["content-length"] !== undefined && Number.isSafeInteger(length)) {
						if (length > config.maxArtifactBytes) throw tooLarge();
						ctx.meta.contentLength = length;
					}
				},
				mappingPolicy: "restrict",
			},
			{
				name: "internal",
				path: "/internal",
				authentication: false,
				authorization: false,
				bodyParsers: {
					json: { strict: false, limit: bodyLimit },
					text: { type: "text/plain", limit: bodyLimit },
				},
				callOptions,
				aliases: mergeAliases("internal"),
				onBeforeCall(this: any, ctx: Context, route: unknown, req: Req) {
					this.checkSharedSecret(req);
					// A text/plain body (a build trace chunk) is not an object to merge into params.
					if (typeof req.body === "string") req.$params.text = req.body;
				},
				mappingPolicy: "restrict",
			},
			{
				name: "api",
				path: "",
				authentication: true,
				authorization: true,
				bodyParsers: {
					json: { strict: false, limit: bodyLimit },
					urlencoded: { extended: true, limit: bodyLimit, parameterLimit: 1000 },
				},
				callOptions,
				aliases: mergeAliases("api"),
				mappingPolicy: "restrict",
				onBeforeCall(ctx: Context, route: unknown, req: Req) {
					// Credentials are the gateway's business, never a service parameter.
					delete req.$params.private_token;
				},
				onAfterCall(ctx: Context<unknown, ApiMeta>, route: unknown, req: Req, res: Res, data: unknown) {
					if (!ctx.meta.$responseType && isJsonBody(data)) ctx.meta.$responseType = JSON_TYPE;
					// moleculer-web wants a Location on every 201; without one from the service it is the URL posted to.
					if (ctx.meta.$statusCode === 201 && !ctx.meta.$location) ctx.meta.$location = (req.originalUrl ?? req.url ?? "").split("?")[0];
					if (!isPaginated(data)) return data;
					const url = new URL(req.originalUrl ?? req.url ?? "/", `http://${req.headers.host ?? "localhost"}`);
					const query = { ...req.query };
					delete query.private_token;
					const headers = paginationHeaders(data, `${url.protocol}//${url.host}${url.pathname}`, query);
					for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
					return data.rows;
				},
			},
			docsRoute,
		],
		onError(this: any, req: Req, res: Res, err: any) {
			const { status, body, unexpected } = toHttpError(err);
			if (unexpected) this.logger.error(`Unexpected error on ${req.method} ${req.$alias?.path ?? "?"}:`, err);
			if (status === 503) this.logger.warn(`Backend unavailable on ${req.method} ${req.$alias?.path ?? "?"}: ${err?.name} ${err?.message}`);
			sendJson(res, status, body);
		},
	},

	methods: {
		/** Token → caller. Anonymous only where the action says `auth: "optional"` (or "none"). */
		async authenticate(ctx: Context<unknown, ApiMeta>, route: unknown, req: Req): Promise<Caller | null> {
			const mode = req.$action?.auth;
			const token = extractToken(req);
			if (!token) {
				if (mode === "optional" || mode === "none") return null;
				throw unauthorized();
			}
			if (mode === "none") return null;
			return this.cachedCall(ctx, RESOLVE_TOKEN, { tokenHash: hashToken(token) }) as Promise<Caller>;
		},

		/** On /projects/:id/… routes: the project and the caller's level, once per request. */
		async authorize(ctx: Context<unknown, ApiMeta>, route: unknown, req: Req): Promise<void> {
			if (!req.$alias || !PROJECT_ROUTE.test(req.$alias.path)) return;
			const ref = req.$params.id;
			if (typeof ref !== "string" || !ref.trim()) throw notFound("Project");
			const user = ctx.meta.user ?? null;
			const access: ProjectAccess = await this.cachedCall(ctx, PROJECT_ACCESS, {
				project: projectRefKey(ref),
				userId: user ? user.id : 0,
				admin: !!user?.is_admin,
			}).catch((err: { code?: number }) => {
				// Anonymous callers (on `auth: "optional"` routes) reach public projects only; anything
				// else asks them to sign in (docs/api.md#authentication), whether or not the project exists.
				if (!user && err?.code === 404) throw unauthorized();
				throw err;
			});
			ctx.meta.access = access;
			ctx.meta.projectKey = String(access.project.id);
		},

		/**
		 * An accounts look-up, answered from the entry accounts cached when there is one (one cache
		 * read instead of a round trip); otherwise called, and accounts caches the answer.
		 */
		async cachedCall<T>(ctx: Context, spec: CachedLookup, params: Record<string, unknown>): Promise<T> {
			const cacher = this.broker.cacher as any;
			if (cacher && cacher.connected !== false) {
				const hit = await cacher.get(lookupCacheKey(cacher, spec, params)).catch(() => undefined);
				if (hit !== undefined && hit !== null) return hit as T;
			}
			return ctx.call<T, Record<string, unknown>>(spec.action, params, callOptions);
		},

		/** The internal API: off (404) without INTERNAL_API_SECRET, 401 on a wrong secret. */
		checkSharedSecret(req: Req) {
			if (!config.internalApiSecret) throw notFound();
			const given = req.headers["gitlab-shared-secret"];
			if (typeof given !== "string" || !safeEqual(given, config.internalApiSecret)) throw unauthorized();
		},
	},

	events: {
		/** With a per-process cacher, this gateway's copies of access entries must go too. */
		async [ACCESS_CHANGED_EVENT](ctx: Context<AccessChange>) {
			await cleanTwice(this.broker, changedPatterns(ctx.params), "access look-ups");
		},
	},

	started() {
		// Longer than the usual load balancer idle timeout, so a reused connection is never cut under a client.
		const server = (this as any).server;
		if (server) {
			server.keepAliveTimeout = 65000;
			server.headersTimeout = 66000;
		}
	},

	async stopped() {
		for (const route of (this as any).routes ?? []) await route.rateLimit?.store?.close?.();
	},
};

export default ApiService;
