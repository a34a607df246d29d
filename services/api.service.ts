/**
 * The gateway: owns HTTP. Routes under /api/v3, GitLab error bodies, authentication by private
 * token, the project and the caller's access level resolved once per request, parameters checked
 * at the edge, pagination headers, body limits and rate limiting. Services behind it own rules
 * and data.
 *
 * Every request passes, in order: the HTTP server's limits (gateway/http-server.ts), the body
 * reader (gateway/body.ts), the client address (gateway/client-address.ts), the token and the
 * request limit counted on what was verified (gateway/rate-limit.ts), the project access, and the
 * action's parameter schema (gateway/edge-validation.ts).
 */
import type { IncomingMessage, ServerResponse } from "http";
import type Redis from "ioredis";
import type { Context, Service, ServiceSchema, ServiceSettingSchema } from "moleculer";
import ApiGateway from "moleculer-web";
import { config } from "../config";
import { extractToken, RecentTokens, SUDO_CALLER, sudoCaller, sudoIdentifier, type TokenLookup } from "../gateway/auth";
import { CacheReads, type CachedAction } from "../gateway/cache-reads";
import { bodyReader, checkAnnouncedLength, closeAfterAnswer, QS_OPTIONS } from "../gateway/body";
import { clientAddress, peerIsTrusted, trustedProxyList } from "../gateway/client-address";
import { EdgeValidator, type ActionLike } from "../gateway/edge-validation";
import { toHttpError } from "../gateway/errors";
import { describeError, isJsonBody, JSON_TYPE, sendJson } from "../gateway/responses";
import { createHardenedServer, isHead, methodsFrom, routedPath, sendsContinue } from "../gateway/http-server";
import { linkBase } from "../gateway/links";
import { addressKey, countedAgainstAddress, RequestLimits, userKey } from "../gateway/rate-limit";
import { mergeAliases } from "../gateway/routes";
import { docsRoute, forgetOpenApi } from "../gateway/routes/docs.routes";
import { hasLevel, type Caller, type ProjectAccess } from "../lib/accounts/access";
import { MAX_PROJECT_REF, PROJECT_ACCESS, projectRefKey, RESOLVE_TOKEN } from "../lib/accounts/auth-cache";
import type { ApiMeta } from "../lib/api/context";
import { safeEqual } from "../lib/crypto/tokens";
import { forbidden, notFound, unauthorized } from "../lib/api/errors";
import { isPaginated, paginationHeaders } from "../lib/api/pagination";
import { limiterRedis } from "../lib/api/rate-limiter";
import { ArtifactStore } from "../lib/builds/artifact-store";
import { AccessCacheMixin } from "../mixins/access-cache.mixin";
import { cutUploads, type UploadInFlight } from "../gateway/artifact-upload";

type Req = IncomingMessage & {
	$params: Record<string, unknown>;
	$action?: ActionLike & { auth?: string; access?: number };
	$alias?: { path: string };
	$ctx?: Context<unknown, ApiMeta>;
	query: Record<string, unknown>;
	originalUrl?: string;
	body?: unknown;
	/** The answer came from the shared cache (see callAction). */
	$cacheHit?: boolean;
	/** The user's request count, under way since authenticate; authorize awaits it (a 429 first). */
	$counted?: Promise<void>;
};
type Res = ServerResponse;
type Ctx = Context<unknown, ApiMeta>;

const PROJECT_ROUTE = /^\/?projects\/:id(\/|$)/;
/** Whether a route (moleculer-web's alias object) is under /projects/:id, decided once per route. */
const projectRoutes = new WeakMap<object, boolean>();
function isProjectRoute(alias: { path: string }): boolean {
	let yes = projectRoutes.get(alias);
	if (yes === undefined) projectRoutes.set(alias, (yes = PROJECT_ROUTE.test(alias.path)));
	return yes;
}
/** GitLab's private tokens are 20 characters; later kinds stay far below this. */
const MAX_TOKEN_LENGTH = 255;
const callOptions = { timeout: config.requestTimeoutMs };
const trustedProxies = trustedProxyList(config.trustedProxies);

interface Vars {
	cacheReads: CacheReads;
	recentTokens: RecentTokens;
	/** JSON of answers read from an in-memory cache, which hands out the same object on every hit. */
	encodedHits: WeakMap<object, string>;
	edgeValidator: EdgeValidator;
	limits: RequestLimits;
	limiterRedis: Redis | null;
	server: ReturnType<typeof createHardenedServer>;
	isHTTPS: boolean;
	/** Artifacts and traces: the gateway streams downloads from it and writes uploads into it (gateway/file-download.ts, gateway/artifact-upload.ts). */
	artifactStore: ArtifactStore;
	uploadsInFlight: Set<UploadInFlight>;
}

interface Methods {
	authenticate(ctx: Ctx, route: unknown, req: Req, res: Res): Promise<Caller | null>;
	authorize(ctx: Ctx, route: unknown, req: Req): Promise<void>;
	resolveCaller(ctx: Ctx, res: Res, address: string, token: TokenLookup): Promise<Caller>;
	projectAccess(ctx: Ctx, req: Req, counted: Promise<void>): Promise<ProjectAccess>;
	internalCaller(ctx: Ctx, req: Req): Promise<void>;
	linkBase(req: Req): string;
	// moleculer-web's own, used here (Moleculer binds methods to the service):
	httpHandler: (req: IncomingMessage, res: ServerResponse) => void;
	resolveAlias(url: string, method?: string): { alias: { handler?: unknown } } | false;
	sendResponse(req: Req, res: Res, data: unknown, action: unknown): void;
	encodeResponse(req: Req, res: Res, data: unknown): string;
}

/** The gateway as its hooks see it. */
type ApiThis = Service<ApiSettings> & Methods & Vars;

/**
 * moleculer-web's settings, as far as this file reads them (its own types give route hooks a
 * meta of `{}`, which ApiMeta is not, so the routes stay as moleculer-web takes them).
 */
interface ApiSettings extends ServiceSettingSchema {
	[setting: string]: unknown;
	requestTimeout: number;
	onError(this: ApiThis, req: Req, res: Res, err: unknown): void;
}

/** The parts of a moleculer-web route that callAction uses. */
interface RouteLike {
	callOptions?: object;
	onAfterCall?: (this: ApiThis, ctx: Ctx, route: RouteLike, req: Req, res: Res, data: unknown) => unknown;
}

const ApiService: ServiceSchema<ApiSettings, Methods, Vars> = {
	name: "api",
	mixins: [ApiGateway, AccessCacheMixin()],

	settings: {
		port: config.port,
		ip: "0.0.0.0",
		// A whole request, slow body included, within 5 minutes (moleculer-web's default); headers and
		// idle sockets are bounded far sooner (gateway/http-server.ts).
		requestTimeout: 300_000,
		path: "/api/v3",
		qsOptions: QS_OPTIONS,
		// Request lines can carry private_token in the query: never log them.
		logRequest: null,
		logResponse: null,
		logRequestParams: null,
		logResponseData: null,
		log4XXResponses: false,
		logRouteRegistration: "debug",
		routes: [
			{
				name: "internal-stream",
				path: "/internal",
				authentication: false,
				authorization: false,
				bodyParsers: false,
				callOptions: { timeout: 0 },
				aliases: mergeAliases("internalStream"),
				async onBeforeCall(this: ApiThis, ctx: Ctx, route: unknown, req: Req) {
					await this.internalCaller(ctx, req);
					// Refuse an announced oversized body before reading a byte of it; the artifact store
					// counts the bytes of chunked uploads and checks they match the announced length.
					checkAnnouncedLength(req, config.maxArtifactBytes);
				},
				mappingPolicy: "restrict",
			},
			{
				name: "internal",
				path: "/internal",
				authentication: false,
				authorization: false,
				bodyParsers: false,
				use: [bodyReader({ limit: config.maxBodyBytes, text: true })],
				callOptions,
				aliases: mergeAliases("internal"),
				async onBeforeCall(this: ApiThis, ctx: Ctx, route: unknown, req: Req) {
					await this.internalCaller(ctx, req);
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
				bodyParsers: false,
				use: [bodyReader({ limit: config.maxBodyBytes })],
				callOptions,
				aliases: mergeAliases("api"),
				mappingPolicy: "restrict",
				onBeforeCall(this: ApiThis, ctx: Ctx, route: unknown, req: Req) {
					ctx.meta.clientAddress = clientAddress(req, trustedProxies);
					// Credentials and whom an admin acts as are the gateway's business, never a service parameter.
					delete req.$params.private_token;
					delete req.$params.sudo;
				},
				onAfterCall(this: ApiThis, ctx: Ctx, route: unknown, req: Req, res: Res, data: unknown) {
					if (!ctx.meta.$responseType && isJsonBody(data)) ctx.meta.$responseType = JSON_TYPE;
					// moleculer-web wants a Location on every 201; without one from the service it is the URL posted to.
					if (ctx.meta.$statusCode === 201 && !ctx.meta.$location) ctx.meta.$location = (req.originalUrl ?? req.url ?? "").split("?")[0];
					if (!isPaginated(data)) return data;
					const query = { ...req.query };
					delete query.private_token;
					const headers = paginationHeaders(data, this.linkBase(req), query);
					for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
					return data.rows;
				},
			},
			// No token there: each request counts against the address, as an anonymous one elsewhere.
			{ ...docsRoute, use: [countedAgainstAddress(trustedProxies)] },
		],
		onError(this: ApiThis, req: Req, res: Res, err: unknown) {
			const { status, body, headers, unexpected } = toHttpError(err as Parameters<typeof toHttpError>[0]);
			const where = `${req.method} ${req.$alias?.path ?? "?"}`;
			if (unexpected) this.logger.error(`Unexpected error on ${where}:`, err);
			if (status === 503) this.logger.warn(`Backend unavailable on ${where}: ${describeError(err)}`);
			closeAfterAnswer(req, res);
			sendJson(res, status, body, headers);
		},
	},

	methods: {
		/** moleculer-web's server, with the limits of gateway/http-server.ts. */
		createServer() {
			this.server = createHardenedServer(
				{
					headersTimeoutMs: config.headersTimeoutMs,
					requestTimeoutMs: this.settings.requestTimeout,
					idleTimeoutMs: config.idleTimeoutMs,
					maxConnections: config.maxConnections,
					maxBodyBytes: Math.max(config.maxBodyBytes, config.maxArtifactBytes),
				},
				this.httpHandler,
				(req, res, err) => this.settings.onError.call(this, req as Req, res, err),
				methodsFrom((path, method) => !!this.resolveAlias(path, method)),
				(req, res) => this.settings.onError.call(this, req as Req, res, new ApiGateway.Errors.NotFoundError("NOT_FOUND", null)),
				req => {
					const found = this.resolveAlias(routedPath(req), req.method);
					return !!found && sendsContinue(found.alias.handler);
				},
			);
			this.isHTTPS = false;
		},

		/**
		 * Token → caller, and the request counted against what was verified: the user when the
		 * token resolves, the client address otherwise. Anonymous only where the action says
		 * `auth: "optional"` (or "none").
		 */
		async authenticate(ctx: Ctx, route: unknown, req: Req, res: Res): Promise<Caller | null> {
			const limits: RequestLimits = this.limits;
			const address = ctx.meta.clientAddress ?? "unknown";
			const mode = req.$action?.auth;
			const token = mode === "none" ? null : extractToken(req);
			if (!token) {
				await limits.count(res, addressKey(address));
				if (mode === "optional" || mode === "none") return null;
				throw unauthorized();
			}
			// No private token is that long: not worth a look-up.
			if (token.length > MAX_TOKEN_LENGTH) {
				await limits.count(res, addressKey(address));
				throw unauthorized();
			}
			const caller = await this.resolveCaller(ctx, res, address, this.recentTokens.lookup(token));
			// Counted against the user while authorize reads the project access (one Redis round trip
			// less per request); authorize awaits the count before anything else is answered or called.
			const counted = limits.count(res, userKey(caller.id));
			counted.catch(() => undefined); // awaited in authorize; never left unhandled
			req.$counted = counted;
			// Sudo: counted as the admin, acting as the user named.
			const sudo = sudoIdentifier(req);
			if (sudo === null) return caller;
			await counted;
			return sudoCaller(caller, sudo, ref => ctx.call<Caller, object>(SUDO_CALLER, { ref }, callOptions));
		},

		/**
		 * On /projects/:id/… routes: the project and the caller's level, once per request. Then, on
		 * every route, the action's parameters (converted in place), before any cache or service.
		 */
		async authorize(ctx: Ctx, route: unknown, req: Req): Promise<void> {
			const counted = req.$counted ?? Promise.resolve();
			if (req.$alias && isProjectRoute(req.$alias)) {
				const access = await this.projectAccess(ctx, req, counted);
				ctx.meta.access = access;
				ctx.meta.projectKey = String(access.project.id);
			} else await counted;
			if (!req.$action) return;
			await this.edgeValidator.validate(req.$action, req.$params);
			// The level the action declares (types/moleculer.d.ts), checked before any call or cache read.
			const needed = req.$action.access;
			if (needed !== undefined && !(ctx.meta.access && hasLevel(ctx.meta.access, needed))) throw forbidden();
		},

		/** The token's owner (from the cache when accounts has it there); an unknown token counts against the address. */
		async resolveCaller(ctx: Ctx, res: Res, address: string, token: TokenLookup): Promise<Caller> {
			try {
				const hit = await this.cacheReads.readKey(token.key);
				return hit === undefined ? await ctx.call<Caller, object>(RESOLVE_TOKEN.action, { tokenHash: token.hash }, callOptions) : (hit as Caller);
			} catch (err) {
				if ((err as { code?: number }).code === 401) await this.limits.count(res, addressKey(address));
				throw err;
			}
		},

		/**
		 * The project of a /projects/:id/… route and the caller's level in it: read from the shared
		 * cache while the request is still being counted, called from accounts on a miss. Nothing is
		 * answered or called before the count says the request may go on.
		 */
		async projectAccess(ctx: Ctx, req: Req, counted: Promise<void>): Promise<ProjectAccess> {
			const ref = req.$params.id;
			const user = ctx.meta.user ?? null;
			if (typeof ref !== "string" || !ref.trim()) {
				await counted;
				throw notFound("Project");
			}
			// Names no project: answered as an unknown one is, without a look-up.
			if (ref.length > MAX_PROJECT_REF) {
				await counted;
				throw user ? notFound("Project") : unauthorized();
			}
			const params = { project: projectRefKey(ref), userId: user ? user.id : 0, admin: !!user?.is_admin };
			const [, hit] = await Promise.all([counted, this.cacheReads.read({ name: PROJECT_ACCESS.action, cache: PROJECT_ACCESS.cache }, params, ctx.meta)]);
			if (hit !== undefined) return hit as ProjectAccess;
			return ctx.call<ProjectAccess, object>(PROJECT_ACCESS.action, params, callOptions).catch((err: { code?: number }) => {
				// Anonymous callers (on `auth: "optional"` routes) reach public projects only; anything
				// else asks them to sign in (docs/api.md#authentication), whether or not the project exists.
				if (!user && err?.code === 404) throw unauthorized();
				throw err;
			});
		},

		/**
		 * moleculer-web's call of the route's action, with one step first: a GET whose action declares
		 * `cache` is answered from the shared cache when the entry is there, so a hit crosses no
		 * transporter (and in one process makes no action context). The rest is moleculer-web's own.
		 */
		async callAction(
			route: RouteLike,
			actionName: string,
			req: Req & { $endpoint: { action: CachedAction } },
			res: Res,
			params: object,
			isStream: boolean,
		) {
			const ctx = req.$ctx!;
			let data = !isStream && req.method === "GET" ? await this.cacheReads.read(req.$endpoint.action, params, ctx.meta) : undefined;
			req.$cacheHit = data !== undefined;
			if (data === undefined) {
				const opts = { ...route.callOptions, ...(isStream ? { stream: req } : {}) };
				data = await ctx.call(req.$endpoint as never, params, opts);
			}
			if (route.onAfterCall) data = await route.onAfterCall.call(this, ctx, route, req, res, data);
			this.sendResponse(req, res, data, req.$endpoint.action);
			return true;
		},

		/**
		 * JSON, encoded once per cached answer: an in-memory cacher returns the very object it keeps
		 * until the entry is cleaned or replaced, so its encoding is kept beside it (and goes with it).
		 * A HEAD is told the length the GET's body has (Node counts only a body it sends).
		 */
		encodeResponse(req: Req, res: Res, data: unknown): string {
			let json: string | undefined;
			if (!req.$cacheHit || typeof data !== "object" || data === null) json = JSON.stringify(data);
			else {
				const encodedHits: WeakMap<object, string> = this.encodedHits;
				json = encodedHits.get(data);
				if (json === undefined) encodedHits.set(data, (json = JSON.stringify(data)));
			}
			if (isHead(req)) res.setHeader("Content-Length", Buffer.byteLength(json));
			return json;
		},

		/**
		 * The internal API: off (404) without INTERNAL_API_SECRET, 401 on a wrong secret, and 429
		 * for an address that keeps guessing (a right secret is never limited).
		 */
		async internalCaller(ctx: Ctx, req: Req): Promise<void> {
			if (!config.internalApiSecret) throw notFound();
			const address = clientAddress(req, trustedProxies);
			ctx.meta.clientAddress = address;
			const limits: RequestLimits = this.limits;
			await limits.refuseSecretGuesser(address);
			const given = req.headers["gitlab-shared-secret"];
			if (typeof given !== "string" || !safeEqual(given, config.internalApiSecret)) {
				await limits.secretFailed(address);
				throw unauthorized();
			}
		},

		/** Where this request's pagination links point (gateway/links.ts). */
		linkBase(req: Req): string {
			const scheme = peerIsTrusted(req, trustedProxies) && String(req.headers["x-forwarded-proto"] ?? "").toLowerCase() === "https" ? "https" : "http";
			return linkBase(req.headers.host, req.originalUrl ?? req.url ?? "/", { gitlabUrl: config.gitlabUrl, gitlabUrlSet: config.gitlabUrlSet, scheme });
		},
	},

	events: {
		/** Parameter schemas may have changed with the services. */
		"$services.changed"() {
			this.edgeValidator.forget();
			forgetOpenApi(this);
		},
	},

	created() {
		this.encodedHits = new WeakMap();
		this.artifactStore = new ArtifactStore(config.artifactsDir, config.maxArtifactBytes);
		this.uploadsInFlight = new Set();
		const cacheReads = new CacheReads(this.broker.cacher as never);
		this.cacheReads = cacheReads;
		this.recentTokens = new RecentTokens(tokenHash => cacheReads.keyOf({ name: RESOLVE_TOKEN.action, cache: RESOLVE_TOKEN.cache }, { tokenHash }, {}));
		this.edgeValidator = new EdgeValidator(this.broker.validator as never);
		// Before the server listens (the gateway mixin's `started`), so the first request finds them.
		const redis: Redis | null = config.redisUrl ? limiterRedis(config.redisUrl, this.logger) : null;
		this.limiterRedis = redis;
		this.limits = new RequestLimits(redis, {
			prefix: this.broker.namespace || "gitlab",
			perMinute: config.rateLimitPerMinute,
			authFailures: config.authFailureLimit,
		});
	},

	/**
	 * A graceful stop (SIGTERM) has already given in-flight requests the shutdown window; uploads
	 * still being written now are cut, so that their temporary files are removed before the exit.
	 */
	async stopped() {
		this.limiterRedis?.disconnect();
		await cutUploads(this.uploadsInFlight);
	},
};

export default ApiService;
