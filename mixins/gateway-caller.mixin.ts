/**
 * The caller, resolved once at the edge (docs/architecture.md#authentication): the gateway's
 * moleculer-web hooks for the token and whom it names, the request counted against what was
 * verified (gateway/rate-limit.ts), the project and the caller's level on /projects/:id/… routes,
 * the action's parameters checked at the edge (gateway/edge-validation.ts), and the internal API's
 * shared secret. What they resolve goes to the services in `ctx.meta`, which never look it up again.
 */
import type { IncomingMessage, ServerResponse } from "http";
import type Redis from "ioredis";
import type { Context, Service, ServiceSchema } from "moleculer";
import { config } from "../config";
import { extractToken, RecentTokens, SUDO_CALLER, sudoCaller, sudoIdentifier, type TokenLookup } from "../gateway/auth";
import { CacheReads } from "../gateway/cache-reads";
import { clientAddress, trustedProxyList } from "../gateway/client-address";
import { EdgeValidator, type ActionLike } from "../gateway/edge-validation";
import { ACCESS_LOOKUP, accessLookupParams, isProjectRoute, mayNameProject, MAX_TOKEN_LENGTH } from "../gateway/project-route";
import { addressKey, RequestLimits, userKey } from "../gateway/rate-limit";
import { hasLevel, type Caller, type ProjectAccess } from "../lib/accounts/access";
import { ACCESS_CHANGED_EVENT, changedTargets, PROJECT_ACCESS, RESOLVE_TOKEN, type AccessChange } from "../lib/accounts/auth-cache";
import type { ApiMeta } from "../lib/api/context";
import { forbidden, notFound, unauthorized } from "../lib/api/errors";
import { limiterRedis } from "../lib/api/rate-limiter";
import { safeEqual } from "../lib/crypto/tokens";

/** A request as moleculer-web hands it to the gateway's hooks. */
export type GatewayRequest = IncomingMessage & {
	$params: Record<string, unknown>;
	$action?: ActionLike & { auth?: string; access?: number };
	$alias?: { path: string };
	$ctx?: Context<unknown, ApiMeta>;
	query: Record<string, unknown>;
	originalUrl?: string;
	body?: unknown;
	/** The answer is the object the in-memory cache keeps (the gateway's callAction), its encoding kept beside it. */
	$sharedEntry?: boolean;
	/** The user's request count, under way since authenticate; authorize awaits it (a 429 first). */
	$counted?: Promise<void>;
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
	authenticate(ctx: Ctx, route: unknown, req: Req, res: Res): Promise<Caller | null>;
	authorize(ctx: Ctx, route: unknown, req: Req): Promise<void>;
	resolveCaller(ctx: Ctx, res: Res, address: string, token: TokenLookup): Promise<Caller>;
	projectAccess(ctx: Ctx, req: Req, counted: Promise<void>): Promise<ProjectAccess>;
	internalCaller(ctx: Ctx, req: Req): Promise<void>;
}

type CallerThis = Service & GatewayCallerMethods & GatewayCallerVars;

export function GatewayCallerMixin(): Partial<ServiceSchema> {
	return {
		methods: {
			/**
			 * Token → caller, and the request counted against what was verified: the user when the
			 * token resolves, the client address otherwise. Anonymous only where the action says
			 * `auth: "optional"` (or "none").
			 */
			async authenticate(this: CallerThis, ctx: Ctx, route: unknown, req: Req, res: Res): Promise<Caller | null> {
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
			async authorize(this: CallerThis, ctx: Ctx, route: unknown, req: Req): Promise<void> {
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

			/**
			 * The token's owner: kept from a recent request (gateway/auth.ts), else from the cache when
			 * accounts has it there, else from accounts; an unknown token counts against the address.
			 */
			async resolveCaller(this: CallerThis, ctx: Ctx, res: Res, address: string, token: TokenLookup): Promise<Caller> {
				const recentTokens: RecentTokens = this.recentTokens;
				const kept = recentTokens.ownerOf(token);
				if (kept) return kept;
				try {
					const hit = await this.cacheReads.readKey(token.key);
					const owner =
						hit === undefined ? await ctx.call<Caller, object>(RESOLVE_TOKEN.action, { tokenHash: token.hash }, callOptions) : (hit as Caller);
					recentTokens.keepOwner(token, owner);
					return owner;
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
			async projectAccess(this: CallerThis, ctx: Ctx, req: Req, counted: Promise<void>): Promise<ProjectAccess> {
				const ref = req.$params.id;
				const user = ctx.meta.user ?? null;
				// Names no project: answered without a look-up, a ref too long for any as an unknown project is.
				if (!mayNameProject(ref)) {
					await counted;
					throw typeof ref === "string" && ref.trim() && !user ? unauthorized() : notFound("Project");
				}
				const params = accessLookupParams(ref, user);
				const read = this.cacheReads.read(ACCESS_LOOKUP, params, ctx.meta);
				const [, hit] = await Promise.all([counted, read]);
				if (hit !== undefined) return hit as ProjectAccess;
				return ctx.call<ProjectAccess, object>(PROJECT_ACCESS.action, params, callOptions).catch((err: { code?: number }) => {
					// Anonymous callers (on `auth: "optional"` routes) reach public projects only; anything
					// else asks them to sign in (docs/api.md#authentication), whether or not the project exists.
					if (!user && err?.code === 404) throw unauthorized();
					throw err;
				});
			},

			/**
			 * The internal API: off (404) without INTERNAL_API_SECRET, 401 on a wrong secret, and 429
			 * for an address that keeps guessing (a right secret is never limited).
			 */
			async internalCaller(this: CallerThis, ctx: Ctx, req: Req): Promise<void> {
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

		stopped() {
			(this.limiterRedis as Redis | null)?.disconnect();
		},
	};
}
