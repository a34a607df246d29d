/**
 * The gateway's request limits, counted on what it has verified:
 * - a request whose private token resolved counts against that user (`u:<id>`), whatever
 *   address it comes from;
 * - a request without a token, or with one that resolves to nobody, counts against the client
 *   address (gateway/server/client-address.ts), so made-up tokens buy no fresh budget;
 * - a wrong `Gitlab-Shared-Secret` on the internal API counts against the address too, with
 *   the failed-login budget; a right one is never limited, nor refused for others' wrong ones
 *   (the CI side and the git server, maybe behind the same address as a misconfigured runner).
 * Limits are per minute, shared by every gateway replica through Redis (lib/api/rate-limiter.ts).
 * Answers carry GitLab's headers (`RateLimit-*`) and moleculer-web's (`X-Rate-Limit-*`), all in
 * seconds; a 429 adds `Retry-After`.
 */
import type { IncomingMessage, ServerResponse } from "http";
import type Redis from "ioredis";
import type { RateLimiterAbstract, RateLimiterRes } from "rate-limiter-flexible";
import { tooManyRequests } from "../../lib/api/errors";
import { isLimited, makeLimiter } from "../../lib/api/rate-limiter";
import type net from "net";
import { clientAddress } from "../server/client-address";

export interface RequestLimitOptions {
	/** Names the counters: the namespace, so clusters sharing a Redis stay apart. */
	prefix: string;
	/** Requests per identity per minute; 0 turns the request limit off. */
	perMinute: number;
	/** Wrong shared secrets per address per minute. */
	authFailures: number;
}

const WINDOW_SECONDS = 60;

export const userKey = (userId: number) => `u:${userId}`;
export const addressKey = (address: string) => `a:${address}`;

/** Both spellings clients read: GitLab's `RateLimit-*` and moleculer-web's `X-Rate-Limit-*`. */
const SPELLINGS = ["RateLimit-", "X-Rate-Limit-"].map(p => ({ limit: `${p}Limit`, remaining: `${p}Remaining`, reset: `${p}Reset` }));

/** The headers writeLimitHeaders sets, for the API description. */
export const LIMIT_HEADERS = SPELLINGS.flatMap(s => [s.limit, s.remaining, s.reset]);

export function writeLimitHeaders(res: ServerResponse, limit: number, state: Pick<RateLimiterRes, "remainingPoints" | "msBeforeNext">): void {
	if (res.headersSent) return;
	const reset = String(Math.ceil((Date.now() + state.msBeforeNext) / 1000));
	const remaining = String(Math.max(0, state.remainingPoints));
	for (const names of SPELLINGS) {
		res.setHeader(names.limit, String(limit));
		res.setHeader(names.remaining, remaining);
		res.setHeader(names.reset, reset);
	}
}

export class RequestLimits {
	private readonly requests: RateLimiterAbstract | null;
	private readonly secretFailures: RateLimiterAbstract;

	constructor(
		redis: Redis | null,
		private readonly opts: RequestLimitOptions,
	) {
		this.requests =
			opts.perMinute > 0 ? makeLimiter(redis, { keyPrefix: `${opts.prefix}:rl:requests`, points: opts.perMinute, duration: WINDOW_SECONDS }) : null;
		this.secretFailures = makeLimiter(redis, { keyPrefix: `${opts.prefix}:rl:secret`, points: opts.authFailures, duration: WINDOW_SECONDS });
	}

	/** Counts one request against `key`; past the limit, a 429 (headers on the response either way). */
	async count(res: ServerResponse, key: string): Promise<void> {
		if (!this.requests) return;
		try {
			writeLimitHeaders(res, this.opts.perMinute, await this.requests.consume(key));
		} catch (err) {
			if (!isLimited(err)) return; // a failing counter never fails the request
			writeLimitHeaders(res, this.opts.perMinute, err);
			throw tooManyRequests(err.msBeforeNext);
		}
	}

	/** A wrong shared secret from an address that has sent too many already: 429 (a right one never comes here). */
	async refuseSecretGuesser(address: string): Promise<void> {
		const state = await this.secretFailures.get(address).catch(() => null);
		if (state && state.consumedPoints >= this.opts.authFailures) throw tooManyRequests(state.msBeforeNext);
	}

	async secretFailed(address: string): Promise<void> {
		await this.secretFailures.consume(address).catch(() => undefined);
	}
}

/**
 * A moleculer-web route middleware for routes without a token (the docs): each request counted
 * against the client's address, as an anonymous request elsewhere is. moleculer-web calls it on
 * the gateway, whose `limits` it uses.
 */
export function countedAgainstAddress(trustedProxies: net.BlockList) {
	return function count(this: { limits: RequestLimits }, req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void): void {
		this.limits.count(res, addressKey(clientAddress(req, trustedProxies))).then(() => next(), next);
	};
}
