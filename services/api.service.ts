/**
 * The gateway: owns HTTP (docs/architecture.md#the-edge). Routes under /api/v3, GitLab error
 * bodies, authentication by private token, the project and the caller's access level resolved once
 * per request, parameters checked at the edge, pagination headers, body limits and rate limiting.
 * Services behind it own rules and data. This file wires the gateway's parts, all in gateway/:
 *
 * every request enters through one guarded entry on the hardened server (http-server.ts,
 * guarded-entry.ts); a GET the edge decision can answer at once from the in-memory cache is answered
 * there (cached-get-fast-path.ts), anything else goes to moleculer-web's routes (api-routes.ts):
 * the body reader (body.ts), the edge decision in one hook (caller.mixin.ts, edge-pipeline.ts), then
 * the cache's answer or the service (answers.mixin.ts). Both ways take the same decision.
 */
import type { IncomingMessage, ServerResponse } from "http";
import type { Service, ServiceSchema, ServiceSettingSchema } from "moleculer";
import ApiGateway from "moleculer-web";
import { config } from "../config";
import { gatewayRoutes } from "../gateway/api-routes";
import { GatewayAnswersMixin, type AnswersMethods, type AnswersVars } from "../gateway/answers.mixin";
import { cutUploads, type UploadInFlight } from "../gateway/files/artifact-upload";
import { closeAfterAnswer, QS_OPTIONS } from "../gateway/server/body";
import { answerCachedGet, type FastPathGateway } from "../gateway/edge/cached-get-fast-path";
import { GatewayCallerMixin, type GatewayCallerMethods, type GatewayCallerVars, type GatewayRequest } from "../gateway/caller.mixin";
import { trustedProxyList } from "../gateway/server/client-address";
import { toHttpError } from "../gateway/server/errors";
import { createHardenedServer } from "../gateway/server/http-server";
import { requestIdOf } from "../gateway/server/request-id";
import { describeError, JSON_TYPE, sendJson } from "../gateway/server/responses";
import { API_ROOT } from "../gateway/routes";
import { RouteIndex, type IndexedAlias } from "../gateway/server/route-index";
import { isNotRouted, routedPath, Routing } from "../gateway/server/routing";
import { forgetOpenApi } from "../gateway/openapi/docs.routes";
import { paginationHeaders } from "../lib/api/pagination";
import type { ArtifactStorage } from "../lib/builds/artifact-storage";
import { openArtifactStore } from "../lib/builds/artifact-stores";
import { httpRequestObserver } from "../middlewares/request-metrics.middleware";
import { AccessCacheMixin } from "../mixins/cache.mixin";

type Req = GatewayRequest;
type Res = ServerResponse;

const trustedProxies = trustedProxyList(config.trustedProxies);

interface Vars extends GatewayCallerVars, AnswersVars {
	server: ReturnType<typeof createHardenedServer>;
	isHTTPS: boolean;
	routing: Routing;
	routeIndex: RouteIndex;
	/** moleculer-web's alias table. */
	aliases: IndexedAlias[];
	/** Artifacts and traces: the gateway streams downloads from it and writes uploads into it (gateway/files/). */
	artifactStore: ArtifactStorage;
	uploadsInFlight: Set<UploadInFlight>;
	/** What the fast path of a cached GET reads (gateway/edge/cached-get-fast-path.ts). */
	fastPath: FastPathGateway;
}

interface Methods extends GatewayCallerMethods, AnswersMethods {
	requestId(req: IncomingMessage): string;
	/** Replaces moleculer-web's own (gateway/server/route-index.ts): its routing and the gateway's own answers use it. */
	resolveAlias: ConstructorParameters<typeof Routing>[0];
	// moleculer-web's own, used here (Moleculer binds methods to the service):
	httpHandler: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
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

const ApiService: ServiceSchema<ApiSettings, Methods, Vars> = {
	name: "api",
	// The first mixin's methods win: the gateway's answers replace moleculer-web's callAction and encodeResponse.
	mixins: [GatewayAnswersMixin(), ApiGateway, GatewayCallerMixin(), AccessCacheMixin()],

	settings: {
		port: config.port,
		ip: "0.0.0.0",
		// A whole request, slow body included, within 5 minutes (moleculer-web's default); headers and
		// idle sockets are bounded far sooner (gateway/server/http-server.ts).
		requestTimeout: 300_000,
		// Each version's tables under its root: /api/v3 and /api/v4, the same hooks for both.
		path: API_ROOT,
		qsOptions: QS_OPTIONS,
		// Request lines can carry private_token in the query: never log them.
		logRequest: null,
		logResponse: null,
		logRequestParams: null,
		logResponseData: null,
		log4XXResponses: false,
		logRouteRegistration: "debug",
		routes: gatewayRoutes(trustedProxies),
		// The request's one id, for its context as for its answer and its log lines (gateway/server/request-id.ts).
		rootCallOptions(this: ApiThis, options: { requestID?: string }, req: IncomingMessage) {
			options.requestID = this.requestId(req);
		},
		onError(this: ApiThis, req: Req, res: Res, err: unknown) {
			// No route took it: a 405 when the path has routes for other methods (gateway/server/routing.ts).
			if (isNotRouted(req, err)) err = this.routing.notRouted(req, err);
			const { status, body, headers, unexpected } = toHttpError(err as Parameters<typeof toHttpError>[0]);
			const id = this.requestId(req);
			const where = `${req.method} ${req.$alias?.path ?? routedPath(req)} (request ${id})`;
			if (unexpected) this.logger.error(`Unexpected error on ${where}:`, err);
			if (status === 503) this.logger.warn(`Backend unavailable on ${where}: ${describeError(err)}`);
			closeAfterAnswer(req, res);
			sendJson(res, status, body, { ...headers, "X-Request-ID": id });
		},
	},

	methods: {
		/** moleculer-web's server: the limits and the one guarded entry of gateway/server/http-server.ts. */
		createServer() {
			this.routing = new Routing((path, method) => this.resolveAlias(path, method));
			const pageHeaders = new WeakMap<object, { base: string; headers: Record<string, string> }>();
			this.fastPath = {
				routeName: "api",
				trustedProxies,
				routes: this.routing,
				endpointOf: name => this.broker.findNextActionEndpoint(name) as ReturnType<FastPathGateway["endpointOf"]>,
				requestId: req => this.requestId(req),
				pieces: this,
				send: (req, res, data) => {
					(req as Req).$sharedEntry = true;
					res.setHeader("Content-Type", JSON_TYPE);
					res.end(this.encodeResponse(req as Req, res, data));
				},
				// A cached page's headers, kept beside it for the address its links are built on.
				pageHeaders: (req, page) => {
					const base = this.linkBase(req as Req);
					const kept = pageHeaders.get(page);
					if (kept?.base === base) return kept.headers;
					const headers = paginationHeaders(page, base, {});
					pageHeaders.set(page, { base, headers });
					return headers;
				},
				refuse: (req, res, err) => this.settings.onError.call(this, req as Req, res, err),
				observe: httpRequestObserver(this.broker),
			};
			this.server = createHardenedServer(
				{
					headersTimeoutMs: config.headersTimeoutMs,
					requestTimeoutMs: this.settings.requestTimeout,
					idleTimeoutMs: config.idleTimeoutMs,
					maxConnections: config.maxConnections,
					maxBodyBytes: Math.max(config.maxBodyBytes, config.maxArtifactBytes),
				},
				{
					// A cached GET the gateway can answer at once skips moleculer-web (gateway/edge/cached-get-fast-path.ts).
					route: (req, res) => answerCachedGet(this.fastPath, req, res) ?? this.httpHandler(req, res),
					refuse: (req, res, err) => this.settings.onError.call(this, req as Req, res, err),
					onBroken: (err, req) => this.logger.error(`The error answer failed (request ${this.requestId(req)}):`, err),
					routes: this.routing,
					requestId: req => this.requestId(req),
				},
			);
			this.isHTTPS = false;
		},

		requestId(req: IncomingMessage): string {
			return requestIdOf(req, () => this.broker.generateUid());
		},

		// moleculer-web's default method too: its handler passes none for an OPTIONS without Access-Control-Request-Method.
		resolveAlias(path: string, method: string = "GET") {
			return this.routeIndex.resolve(this.aliases, path, method);
		},
	},

	events: {
		/** Parameter schemas may have changed with the services. */
		"$services.changed"() {
			forgetOpenApi(this);
		},
	},

	created() {
		this.routeIndex = new RouteIndex();
		this.artifactStore = openArtifactStore(config, this.logger);
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
