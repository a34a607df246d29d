/**
 * The caller, resolved once at the edge (docs/architecture.md#authentication): the gateway's
 * moleculer-web hooks. On the API, one hook runs the edge decision (gateway/edge/edge-pipeline.ts: the
 * token and whom it names, the request counted against what was verified, the project access, the
 * action's parameters and level, the cached answer of a GET); on the internal API, the shared
 * secret. What they resolve goes to the services in `ctx.meta`, which never look it up again. The
 * pieces the decision reads are made here, once, and the fast path of a cached GET reads the same.
 */
import type { IncomingMessage, ServerResponse } from "http";
import type Redis from "ioredis";
import type { Context, Logger, Service, ServiceBroker, ServiceSchema } from "moleculer";
import { config, INTERNAL_SECRET_COMMAND, MIN_INTERNAL_SECRET_LENGTH } from "../config";
import { RecentTokens } from "./edge/auth";
import { CacheReads } from "../lib/cache/cache-reads";
import { clientAddress, trustedProxyList } from "./server/client-address";
import { decide, type EdgeAction, type EdgeRequest, type UsualWay } from "./edge/edge-pipeline";
import { EdgeValidator } from "./edge/edge-validation";
import { RequestLimits } from "./edge/rate-limit";
import { ACCESS_CHANGED_EVENT, changedTargets, RESOLVE_TOKEN, type AccessChange } from "../lib/accounts/auth-cache";
import type { ApiMeta } from "../lib/api/context";
import { notFound, unauthorized } from "../lib/api/errors";
import { limiterRedis } from "../lib/api/rate-limiter";
import { safeEqual } from "../lib/crypto/tokens";

/** A request as moleculer-web hands it to the gateway's hooks. */
export type GatewayRequest = IncomingMessage & {
	$params: Record<string, unknown>;
	$action?: EdgeAction;
	$alias?: { path: string; type?: string };
	$ctx?: Context<unknown, ApiMeta>;
	query: Record<string, unknown>;
	originalUrl?: string;
	body?: unknown;
	/** What the cache answered a GET with at the edge (undefined: call the action). */
	$cachedAnswer?: unknown;
	/** The answer is the object the in-memory cache keeps (the gateway's callAction), its encoding kept beside it. */
	$sharedEntry?: boolean;
};
type Req = GatewayRequest;
/** A moleculer-web alias as the hook reads it: its path, its type, and its function when it is one. */
type GatewayAlias = { path: string; type?: string; handler?: unknown };
type Res = ServerResponse;
type Ctx = Context<unknown, ApiMeta>;

/** The gateway's calls of services: one request timeout for all. */
export const callOptions = { timeout: config.requestTimeoutMs };
const trustedProxies = trustedProxyList(config.trustedProxies);

export interface GatewayCallerVars {
	/** The gateway's reads of the shared cache (also its cached answers). */
	cacheReads: CacheReads;
	recentTokens: RecentTokens;
	edgeValidator: EdgeValidator;
	limits: RequestLimits;
	limiterRedis: Redis | null;
}

export interface GatewayCallerMethods {
	apiCaller(ctx: Ctx, req: Req, res: Res, alias: GatewayAlias, encodedHits: boolean): Promise<void>;
	internalCaller(ctx: Ctx, req: Req): Promise<void>;
}

type CallerThis = Service & GatewayCallerMethods & GatewayCallerVars;

export function GatewayCallerMixin(): Partial<ServiceSchema> {
	return {
		methods: { apiCaller, internalCaller },
		events: {
			"$services.changed": forgetParameterSchemas,
			[ACCESS_CHANGED_EVENT]: forgetChangedOwners,
		},
		created() {
			// Before the server listens (the gateway mixin's `started`), so the first request finds them.
			Object.assign(this, edgePieces(this.broker, this.logger));
		},
		started() {
			sayHowTheInternalApiStands(this.logger);
		},
		stopped() {
			(this.limiterRedis as Redis | null)?.disconnect();
		},
	};
}

/**
 * The API's hook: the edge decision, every step awaited. Anonymous only where the action says
 * `auth: "optional"` (or "none"); a GET's cached answer is kept for callAction.
 */
async function apiCaller(this: CallerThis, ctx: Ctx, req: Req, res: Res, alias: GatewayAlias, encodedHits: boolean): Promise<void> {
	readRequestFacts(ctx.meta, req);
	const request = edgeRequestOf(req, alias, ctx.meta);
	if (!req.$action) request.grantAuth = grantAuthOf(this.broker, alias);
	req.$cachedAnswer = await decide(this, request, usualWayOf(ctx, res, encodedHits));
}

/** The `auth` a download's grant action declares (its alias function names it: gateway/files/file-download.ts); undefined for anything else. */
function grantAuthOf(broker: ServiceBroker, alias: { handler?: unknown }): string | undefined {
	const grantAction = (alias.handler as { grantAction?: unknown } | null | undefined)?.grantAction;
	if (typeof grantAction !== "string") return undefined;
	const endpoint = broker.findNextActionEndpoint(grantAction);
	return endpoint instanceof Error ? undefined : (endpoint.action as { auth?: string }).auth;
}

/** What the request itself says, before any decision: its client's address, and what the gateway keeps from the services. */
function readRequestFacts(meta: ApiMeta, req: Req): void {
	meta.clientAddress = clientAddress(req, trustedProxies);
	// Credentials and whom an admin acts as are the gateway's business, never a service parameter.
	delete req.$params.private_token;
	delete req.$params.sudo;
	// v4's conditional DELETE (docs/api.md#v4-conditional-delete), read by the services that honour it.
	const ifUnmodifiedSince = req.headers["if-unmodified-since"];
	if (typeof ifUnmodifiedSince === "string") meta.ifUnmodifiedSince = ifUnmodifiedSince;
}

/** The request as the edge decision reads it; a cached answer only for a GET that is not streamed. */
function edgeRequestOf(req: Req, alias: { path: string; type?: string }, meta: ApiMeta): EdgeRequest {
	return { http: req, alias, action: req.$action, params: req.$params, meta, readsCache: req.method === "GET" && alias.type !== "stream" };
}

/** How the decision's needs are answered here: calls in the request's context, with the gateway's timeout. */
function usualWayOf(ctx: Ctx, res: Res, encodedHits: boolean): UsualWay {
	return { res, call: <T>(action: string, params: object) => ctx.call<T, object>(action, params, callOptions), encodedHits };
}

/**
 * The internal API: off (404) without INTERNAL_API_SECRET, 401 on a wrong secret, and 429 once an
 * address has sent too many wrong ones. A long secret is never refused: a runner is not stopped by
 * another one's mistakes behind the same address (a shared NAT, an Ingress), and its length keeps
 * guessing infeasible. A short one is refused too from an address that guessed wrong too often,
 * since only that limit stands between it and a guesser.
 */
async function internalCaller(this: CallerThis, ctx: Ctx, req: Req): Promise<void> {
	if (!config.internalApiSecret) throw notFound();
	const address = clientAddress(req, trustedProxies);
	ctx.meta.clientAddress = address;
	const right = bringsInternalSecret(req, config.internalApiSecret);
	if (right && config.internalApiSecretStrong) return;
	await this.limits.refuseSecretGuesser(address);
	if (right) return;
	await this.limits.secretFailed(address);
	throw unauthorized();
}

/** Whether the request's `Gitlab-Shared-Secret` is the internal API's, compared in constant time. */
function bringsInternalSecret(req: Req, secret: string): boolean {
	const given = req.headers["gitlab-shared-secret"];
	return typeof given === "string" && safeEqual(given, secret);
}

/** Parameter schemas may have changed with the services. */
function forgetParameterSchemas(this: CallerThis): void {
	this.edgeValidator.forget();
}

/** The token owners kept here go with the cached look-ups a change cleans (mixins/cache.mixin.ts). */
function forgetChangedOwners(this: CallerThis, ctx: Context<AccessChange>): void {
	const { keys, patterns } = changedTargets(ctx.params);
	this.recentTokens.forgetOwners(keys, patterns);
}

/** The pieces the edge decision reads (and the limiter's Redis, closed at stop), made once for the gateway. */
function edgePieces(broker: ServiceBroker, logger: Logger): GatewayCallerVars {
	const cacheReads = new CacheReads(broker.cacher as never);
	const recentTokens = new RecentTokens(tokenHash => cacheReads.keyOf({ name: RESOLVE_TOKEN.action, cache: RESOLVE_TOKEN.cache }, { tokenHash }, {}));
	const redis: Redis | null = config.redis ? limiterRedis(config.redis, logger) : null;
	const limits = new RequestLimits(redis, {
		prefix: broker.namespace || "gitlab",
		perMinute: config.rateLimitPerMinute,
		authFailures: config.authFailureLimit,
	});
	return { cacheReads, recentTokens, edgeValidator: new EdgeValidator(broker.validator as never), limits, limiterRedis: redis };
}

/** Says once how the internal API stands: off, or guarded by a secret too short (config/index.ts). */
function sayHowTheInternalApiStands(logger: Logger): void {
	if (!config.internalApiSecret) logger.info("The internal API (/api/v3/internal: builds, pushes) is off: set INTERNAL_API_SECRET to turn it on.");
	else if (!config.internalApiSecretStrong)
		logger.warn(
			`INTERNAL_API_SECRET is shorter than ${MIN_INTERNAL_SECRET_LENGTH} characters: an address that sends too many wrong secrets is refused, ` +
				`the right one included, until the limit resets. Generate a longer one with ${INTERNAL_SECRET_COMMAND}`,
		);
}
