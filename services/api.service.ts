/**
 * The gateway: owns HTTP. Routes under /api/v3, GitLab error bodies, authentication by private
 * token, the project and the caller's access level resolved once per request, parameters checked
 * at the edge, pagination headers, body limits and rate limiting. Services behind it own rules
 * and data.
 *
 * Every request passes, in order: the HTTP server's limits (gateway/http-server.ts), the body
 * reader (gateway/body.ts), the client address (gateway/client-address.ts), then the caller
 * resolved at the edge (mixins/gateway-caller.mixin.ts: the token, the request limit counted on
 * what was verified, the project access, the action's parameter schema), then the cache or the
 * service. A GET that all of this would answer from the in-memory cache at once is answered before
 * moleculer-web takes it, with the same answer (gateway/cached-get-fast-path.ts).
 */
import type { IncomingMessage, ServerResponse } from "http";
import type { Context, Service, ServiceSchema, ServiceSettingSchema } from "moleculer";
import ApiGateway from "moleculer-web";
import { config } from "../config";
import { EncodedJson, type CachedAction } from "../gateway/cache-reads";
import { answerCachedGet, type FastPathGateway } from "../gateway/cached-get-fast-path";
import { bodyReader, checkAnnouncedLength, closeAfterAnswer, QS_OPTIONS } from "../gateway/body";
import { clientAddress, peerIsTrusted, trustedProxyList } from "../gateway/client-address";
import { toHttpError } from "../gateway/errors";
import { describeError, isJsonBody, JSON_TYPE, sendJson } from "../gateway/responses";
import { createHardenedServer, isHead, methodsFrom, routedPath, sendsContinue } from "../gateway/http-server";
import { linkBase } from "../gateway/links";
import { countedAgainstAddress } from "../gateway/rate-limit";
import { mergeAliases } from "../gateway/routes";
import { docsRoute, forgetOpenApi } from "../gateway/routes/docs.routes";
import type { ApiMeta } from "../lib/api/context";
import { isPaginated, paginationHeaders } from "../lib/api/pagination";
import { ArtifactStore } from "../lib/builds/artifact-store";
import { AccessCacheMixin } from "../mixins/access-cache.mixin";
import { httpRequestObserver } from "../middlewares/request-metrics.middleware";
import { callOptions, GatewayCallerMixin, type GatewayCallerMethods, type GatewayCallerVars, type GatewayRequest } from "../mixins/gateway-caller.mixin";
import { cutUploads, type UploadInFlight } from "../gateway/artifact-upload";
import { tracedRequests } from "../lib/tracing/http-span";

type Req = GatewayRequest;
type Res = ServerResponse;
type Ctx = Context<unknown, ApiMeta>;

const trustedProxies = trustedProxyList(config.trustedProxies);

interface Vars extends GatewayCallerVars {
	/** JSON of answers read from an in-memory cache, which hands out the same object on every hit. */
	encodedHits: WeakMap<object, string>;
	server: ReturnType<typeof createHardenedServer>;
	isHTTPS: boolean;
	/** Artifacts and traces: the gateway streams downloads from it and writes uploads into it (gateway/file-download.ts, gateway/artifact-upload.ts). */
	artifactStore: ArtifactStore;
	uploadsInFlight: Set<UploadInFlight>;
	/** What the fast path of a cached GET reads (gateway/cached-get-fast-path.ts). */
	fastPath: FastPathGateway;
}

interface Methods extends GatewayCallerMethods {
	linkBase(req: Req): string;
	// moleculer-web's own, used here (Moleculer binds methods to the service):
	httpHandler: (req: IncomingMessage, res: ServerResponse) => void;
	resolveAlias: FastPathGateway["resolveAlias"] & ((url: string, method?: string) => { alias: { handler?: unknown } } | false);
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
	/** The route's own settings; `encodedHits`: its onAfterCall sends an EncodedJson hit's bytes as JSON. */
	opts?: { encodedHits?: boolean };
	onAfterCall?: (this: ApiThis, ctx: Ctx, route: RouteLike, req: Req, res: Res, data: unknown) => unknown;
}

const ApiService: ServiceSchema<ApiSettings, Methods, Vars> = {
	name: "api",
	mixins: [ApiGateway, GatewayCallerMixin(), AccessCacheMixin()],

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
				use: [bodyReader({ limit: config.maxBodyBytes, timeoutMs: config.bodyTimeoutMs, text: true })],
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
				use: [bodyReader({ limit: config.maxBodyBytes, timeoutMs: config.bodyTimeoutMs })],
				callOptions,
				aliases: mergeAliases("api"),
				mappingPolicy: "restrict",
				// A cache hit from Redis may come back as its JSON bytes (gateway/cache-reads.ts): sent as they are.
				encodedHits: true,
				onBeforeCall(this: ApiThis, ctx: Ctx, route: unknown, req: Req) {
					ctx.meta.clientAddress = clientAddress(req, trustedProxies);
					// Credentials and whom an admin acts as are the gateway's business, never a service parameter.
					delete req.$params.private_token;
					delete req.$params.sudo;
				},
				onAfterCall(this: ApiThis, ctx: Ctx, route: unknown, req: Req, res: Res, data: unknown) {
					if (data instanceof EncodedJson) {
						ctx.meta.$responseType = JSON_TYPE;
						return data.bytes;
					}
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
				// Every request is named and traced where it enters (lib/tracing/http-span.ts); a cached GET
				// the gateway can answer at once skips moleculer-web (gateway/cached-get-fast-path.ts).
				tracedRequests(
					(req, res) => {
						if (!answerCachedGet(this.fastPath, req, res)) this.httpHandler(req, res);
					},
					req => {
						const found = this.resolveAlias(routedPath(req), req.method) as { alias: { fullPath?: string } } | false;
						return found ? found.alias.fullPath : undefined;
					},
				),
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
		 * moleculer-web's call of the route's action, with one step first: a GET whose action declares
		 * `cache` is answered from the shared cache when the entry is there, so a hit crosses no
		 * transporter (and in one process makes no action context); on a route with `encodedHits`, a
		 * hit may be the JSON bytes Redis holds, sent unparsed. The rest is moleculer-web's own.
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
			const reads = this.cacheReads;
			const action = req.$endpoint.action;
			let data: unknown;
			if (!isStream && req.method === "GET")
				data = route.opts?.encodedHits ? await reads.answer(action, params, ctx.meta) : await reads.read(action, params, ctx.meta);
			req.$sharedEntry = data !== undefined && reads.sharesEntries;
			if (data === undefined) {
				const opts = { ...route.callOptions, ...(isStream ? { stream: req } : {}) };
				data = await ctx.call(req.$endpoint as never, params, opts);
			}
			if (route.onAfterCall) data = await route.onAfterCall.call(this, ctx, route, req, res, data);
			this.sendResponse(req, res, data, action);
			return true;
		},

		/**
		 * JSON, encoded once per cached answer: an in-memory cacher returns the very object it keeps
		 * until the entry is cleaned or replaced, so its encoding is kept beside it (and goes with it).
		 * A hit from Redis is a new object every time: encoded, not remembered (a weak entry per
		 * request would only slow the collector down).
		 * A HEAD is told the length the GET's body has (Node counts only a body it sends).
		 */
		encodeResponse(req: Req, res: Res, data: unknown): string {
			let json: string | undefined;
			if (!req.$sharedEntry || typeof data !== "object" || data === null) json = JSON.stringify(data);
			else {
				const encodedHits: WeakMap<object, string> = this.encodedHits;
				json = encodedHits.get(data);
				if (json === undefined) encodedHits.set(data, (json = JSON.stringify(data)));
			}
			if (isHead(req)) res.setHeader("Content-Length", Buffer.byteLength(json));
			return json;
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
			forgetOpenApi(this);
		},
	},

	created() {
		this.encodedHits = new WeakMap();
		this.fastPath = {
			routeName: "api",
			trustedProxies,
			resolveAlias: (path, method) => this.resolveAlias(path, method),
			endpointOf: name => this.broker.findNextActionEndpoint(name) as ReturnType<FastPathGateway["endpointOf"]>,
			// As moleculer-web names a request: X-Correlation-ID, else X-Request-ID, else a new id.
			requestId: req => String(req.headers["x-correlation-id"] || (req.headers["x-request-id"] ?? this.broker.generateUid())),
			hooks: this,
			send: (req, res, data) => {
				(req as Req).$sharedEntry = true;
				res.setHeader("Content-Type", JSON_TYPE);
				res.end(this.encodeResponse(req as Req, res, data));
			},
			refuse: (req, res, err) => this.settings.onError.call(this, req as Req, res, err),
			observe: httpRequestObserver(this.broker),
		};
		this.artifactStore = new ArtifactStore(config.artifactsDir, config.maxArtifactBytes);
		this.uploadsInFlight = new Set();
	},

	/**
	 * A graceful stop (SIGTERM) has already given in-flight requests the shutdown window; uploads
	 * still being written now are cut, so that their temporary files are removed before the exit.
	 */
	async stopped() {
		await cutUploads(this.uploadsInFlight);
	},
};

export default ApiService;
