/**
 * Failed-login throttling, as GitLab does with Rack::Attack, counted where every replica sees it
 * (Redis, see lib/api/rate-limiter.ts):
 * - per client address: `limit` failures a minute, then 429 for a block that doubles each time
 *   within a day (1 minute, 2, 4, … at most an hour), whatever accounts it tried;
 * - per account: `limit` failures in a row (from any address) block it the same way, except from
 *   addresses it has signed in from before, so that somebody guessing root's password never
 *   keeps root out of a machine it uses; a successful login ends the run of failures.
 * Checks come before the password is hashed, so a blocked guess costs no scrypt work.
 */
import crypto from "crypto";
import type Redis from "ioredis";
import type { Logger } from "moleculer";
import type { RateLimiterAbstract } from "rate-limiter-flexible";
import { tooManyRequests } from "../api/errors";
import { growingBlockSeconds, isLimited, makeLimiter } from "../api/rate-limiter";

const MINUTE = 60;
const DAY = 24 * 3600;
/** Below 24.8 days: the memory counters expire keys with a timer, whose delay must fit in 32 bits. */
const KNOWN_ADDRESS_SECONDS = 14 * DAY;
const FIRST_BLOCK_SECONDS = MINUTE;
const LONGEST_BLOCK_SECONDS = 3600;

export interface LoginThrottleOptions {
	/** Names the counters: the namespace, so clusters sharing a Redis stay apart. */
	prefix: string;
	/** Failures per address per minute, and failures in a row per account. */
	limit: number;
}

/** Accounts by a digest of the login name: bounded keys, and no usernames sitting in Redis. */
const accountKey = (login: string) => crypto.createHash("sha256").update(login.trim().toLowerCase()).digest("base64url").slice(0, 24);

export class LoginThrottle {
	private readonly byAddress: RateLimiterAbstract;
	private readonly byAccount: RateLimiterAbstract;
	private readonly blocks: RateLimiterAbstract;
	private readonly knownAddresses: RateLimiterAbstract;

	constructor(
		redis: Redis | null,
		private readonly opts: LoginThrottleOptions,
		private readonly logger: Logger,
	) {
		const spec = (name: string, points: number, duration: number) => ({ keyPrefix: `${opts.prefix}:login:${name}`, points, duration });
		this.byAddress = makeLimiter(redis, spec("address", opts.limit, MINUTE));
		this.byAccount = makeLimiter(redis, spec("account", opts.limit, DAY));
		this.blocks = makeLimiter(redis, spec("blocks", 1_000_000, DAY));
		this.knownAddresses = makeLimiter(redis, spec("known", 1, KNOWN_ADDRESS_SECONDS));
	}

	/** Throws 429 (with Retry-After) when this attempt must not even be checked. */
	async check(address: string, login: string): Promise<void> {
		const account = accountKey(login);
		const [fromAddress, forAccount] = await Promise.all([this.byAddress.get(address), this.byAccount.get(account)]).catch(err => {
			this.failOpen(err);
			return [null, null];
		});
		if (fromAddress && fromAddress.consumedPoints >= this.opts.limit) throw tooManyRequests(fromAddress.msBeforeNext);
		const accountLimited = forAccount && forAccount.consumedPoints >= this.opts.limit;
		if (accountLimited && !(await this.isKnown(account, address))) throw tooManyRequests(forAccount.msBeforeNext);
	}

	async failed(address: string, login: string): Promise<void> {
		const account = accountKey(login);
		await Promise.all([this.count(this.byAddress, address, `address:${address}`), this.count(this.byAccount, account, `account:${account}`)]);
	}

	async succeeded(address: string, login: string): Promise<void> {
		const account = accountKey(login);
		await Promise.all([this.byAccount.delete(account), this.knownAddresses.set(`${account}|${address}`, 1, KNOWN_ADDRESS_SECONDS)]).catch(err =>
			this.failOpen(err),
		);
	}

	/** One more failure; the one that reaches the limit starts a block, longer each time that day. */
	private async count(limiter: RateLimiterAbstract, key: string, blockKey: string): Promise<void> {
		try {
			const res = await limiter.consume(key);
			if (res.consumedPoints < this.opts.limit) return;
		} catch (err) {
			if (!isLimited(err)) return this.failOpen(err);
		}
		try {
			const blocks = await this.blocks.consume(blockKey);
			await limiter.block(key, growingBlockSeconds(blocks.consumedPoints, FIRST_BLOCK_SECONDS, LONGEST_BLOCK_SECONDS));
		} catch (err) {
			this.failOpen(err);
		}
	}

	private async isKnown(account: string, address: string): Promise<boolean> {
		try {
			return !!(await this.knownAddresses.get(`${account}|${address}`));
		} catch (err) {
			this.failOpen(err);
			return true;
		}
	}

	/** The counters are a defence, not a dependency: a failing store lets logins through (and says so). */
	private failOpen(err: unknown): void {
		this.logger.warn(`Login throttling skipped: ${(err as Error)?.message ?? err}`);
	}
}
