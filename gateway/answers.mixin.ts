/**
 * How the gateway answers a routed request, where moleculer-web's own way is replaced: the action
 * is not called when the edge decision found its answer in the cache (gateway/edge/edge-pipeline.ts),
 * so a hit crosses no transporter (and in one process makes no action context); an answer that is
 * the object an in-memory cache keeps is encoded once; pagination links point where the client
 * reached the gateway.
 */
import type { ServerResponse } from "http";
import type { Context, ServiceSchema } from "moleculer";
import { config } from "../config";
import type { ApiMeta } from "../lib/api/context";
import type { CachedAction, CacheReads } from "../lib/cache/cache-reads";
import type { GatewayRequest } from "./caller.mixin";
import { peerIsTrusted, trustedProxyList } from "./server/client-address";
import { isHead } from "./server/http-server";
import { linkBase } from "./server/link-base";

type Req = GatewayRequest;
type Res = ServerResponse;
type Ctx = Context<unknown, ApiMeta>;

const trustedProxies = trustedProxyList(config.trustedProxies);

/** The parts of a moleculer-web route that callAction uses. */
interface RouteLike {
	callOptions?: object;
	onAfterCall?: (this: unknown, ctx: Ctx, route: RouteLike, req: Req, res: Res, data: unknown) => unknown;
}

export interface AnswersVars {
	/** JSON of answers read from an in-memory cache, which hands out the same object on every hit. */
	encodedHits: WeakMap<object, string>;
}

export interface AnswersMethods {
	linkBase(req: Req): string;
	// moleculer-web's own, used here (Moleculer binds methods to the service):
	sendResponse(req: Req, res: Res, data: unknown, action: unknown): void;
	sendError(req: Req, res: Res, err: unknown): void;
}

type AnswersThis = AnswersMethods & AnswersVars & { cacheReads: CacheReads };

export function GatewayAnswersMixin(): Partial<ServiceSchema> {
	return {
		methods: {
			/**
			 * moleculer-web's call of the route's action, unless the edge decision found the answer in
			 * the cache; on a route with `encodedHits`, a hit may be the JSON bytes Redis holds, sent
			 * unparsed. The rest is moleculer-web's own.
			 */
			async callAction(
				this: AnswersThis,
				route: RouteLike,
				actionName: string,
				req: Req & { $endpoint: { action: CachedAction } },
				res: Res,
				params: object,
				isStream: boolean,
			) {
				const ctx = req.$ctx!;
				let data = req.$cachedAnswer;
				req.$sharedEntry = data !== undefined && this.cacheReads.sharesEntries;
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
			 * A hit from Redis is a new object every time: encoded, not remembered (a weak entry per
			 * request would only slow the collector down).
			 * A HEAD is told the length the GET's body has (Node counts only a body it sends).
			 */
			encodeResponse(this: AnswersThis, req: Req, res: Res, data: unknown): string {
				let json: string | undefined;
				if (!req.$sharedEntry || typeof data !== "object" || data === null) json = JSON.stringify(data);
				else {
					const encodedHits = this.encodedHits;
					json = encodedHits.get(data);
					if (json === undefined) encodedHits.set(data, (json = JSON.stringify(data)));
				}
				if (isHead(req)) res.setHeader("Content-Length", Buffer.byteLength(json));
				return json;
			},

			/** moleculer-web's handler of a failed request, without its own log line: the error answer logs the unexpected ones with the request id. */
			errorHandler(this: AnswersThis, req: Req, res: Res, err: unknown) {
				this.sendError(req, res, err);
			},

			/** Where this request's pagination links point (gateway/server/link-base.ts). */
			linkBase(req: Req): string {
				const scheme =
					peerIsTrusted(req, trustedProxies) && String(req.headers["x-forwarded-proto"] ?? "").toLowerCase() === "https" ? "https" : "http";
				return linkBase(req.headers.host, req.originalUrl ?? req.url ?? "/", {
					gitlabUrl: config.gitlabUrl,
					gitlabUrlSet: config.gitlabUrlSet,
					scheme,
				});
			},
		},

		created() {
			this.encodedHits = new WeakMap();
		},
	};
}
