/**
 * The caller, resolved once at the edge (docs/architecture.md#authentication): the gateway's
 * moleculer-web hooks. On the API, one hook runs the edge decision (gateway/edge-pipeline.ts: the
 * token and whom it names, the request counted against what was verified, the project access, the
 * action's parameters and level, the cached answer of a GET); on the internal API, the shared
 * secret. What they resolve goes to the services in `ctx.meta`, which never look it up again. The
 * pieces the decision reads are made here, once, and the fast path of a cached GET reads the same.
 */
import type { IncomingMessage, ServerResponse } from "http";
import type Redis from "ioredis";
import type { Context, Service, ServiceSchema } from "moleculer";
import { config, INTERNAL_SECRET_COMMAND, MIN_INTERNAL_SECRET_LENGTH } from "../config";
import { RecentTokens } from "./auth";
import { CacheReads } from "./cache-reads";
import { clientAddress, trustedProxyList } from "./client-address";
import { decide, type EdgeAction } from "./edge-pipeline";
import { EdgeValidator } from "./edge-validation";
import { RequestLimits } from "./rate-limit";
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
	apiCaller(ctx: Ctx, req: Req, res: Res, alias: { path: string; type?: string }, encodedHits: boolean): Promise<void>;
	internalCaller(ctx: Ctx, req: Req): Promise<void>;
}

type CallerThis = Service & GatewayCallerMethods & GatewayCallerVars;

export function GatewayCallerMixin(): Partial<ServiceSchema> {
	return {
		methods: {
			/**
			 * The API's hook: the edge decision, every step awaited. Anonymous only where the action
			 * says `auth: "optional"` (or "none"); a GET's cached answer is kept for callAction.
			 */
			async apiCaller(this: CallerThis, ctx: Ctx, req: Req, res: Res, alias: { path: string; type?: string }, encodedHits: boolean): Promise<void> {
				ctx.meta.clientAddress = clientAddress(req, trustedProxies);
				// Credentials and whom an admin acts as are the gateway's business, never a service parameter.
				delete req.$params.private_token;
				delete req.$params.sudo;
				// v4's conditional DELETE (docs/api.md#v4-conditional-delete), read by the services that honour it.
				const ifUnmodifiedSince = req.headers["if-unmodified-since"];
				if (typeof ifUnmodifiedSince === "string") ctx.meta.ifUnmodifiedSince = ifUnmodifiedSince;
				const request = {
					http: req,
					alias,
					action: req.$action,
					params: req.$params,
					meta: ctx.meta,
					readsCache: req.method === "GET" && alias.type !== "stream",
				};
				const call = <T>(action: string, params: object) => ctx.call<T, object>(action, params, callOptions);
				req.$cachedAnswer = await decide(this, request, { res, call, encodedHits });
			},

			/**
			 * The internal API: off (404) without INTERNAL_API_SECRET, 401 on a wrong secret, and 429
			 * once an address has sent too many wrong ones. A long secret is never refused: a runner is
			 * not stopped by another one's mistakes behind the same address (a shared NAT, an Ingress),
			 * and its length keeps guessing infeasible. A short one is refused too from an address that
			 * guessed wrong too often, since only that limit stands between it and a guesser.
			 */
			async internalCaller(this: CallerThis, ctx: Ctx, req: Req): Promise<void> {
				if (!config.internalApiSecret) throw notFound();
				const address = clientAddress(req, trustedProxies);
				ctx.meta.clientAddress = address;
				const given = req.headers["gitlab-shared-secret"];
				const right = typeof given === "string" && safeEqual(given, config.internalApiSecret);
				if (right && config.internalApiSecretStrong) return;
				const limits: RequestLimits = this.limits;
				await limits.refuseSecretGuesser(address);
				if (right) return;
				await limits.secretFailed(address);
				throw unauthorized();
			},
		},

		events: {
			/** Parameter schemas may have changed with the services. */
			"$services.changed"(this: CallerThis) {
				this.edgeValidator.forget();
			},
			/** The token owners kept here go with the cached look-ups a change cleans (mixins/access-cache.mixin.ts). */
			[ACCESS_CHANGED_EVENT](this: CallerThis, ctx: Context<AccessChange>) {
				const { keys, patterns } = changedTargets(ctx.params);
				this.recentTokens.forgetOwners(keys, patterns);
			},
		},

		created() {
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

		/** Says once how the internal API stands: off, or guarded by a secret too short (config/index.ts). */
		started() {
			if (!config.internalApiSecret)
				this.logger.info("The internal API (/api/v3/internal: builds, pushes) is off: set INTERNAL_API_SECRET to turn it on.");
			else if (!config.internalApiSecretStrong)
				this.logger.warn(
					`INTERNAL_API_SECRET is shorter than ${MIN_INTERNAL_SECRET_LENGTH} characters: an address that sends too many wrong secrets is refused, ` +
						`the right one included, until the limit resets. Generate a longer one with ${INTERNAL_SECRET_COMMAND}`,
				);
		},

		stopped() {
			(this.limiterRedis as Redis | null)?.disconnect();
		},
	};
}
