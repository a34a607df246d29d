/**
 * Failed-login throttling, as GitLab does with Rack::Attack, counted where every replica sees it
 * (Redis, see lib/api/rate-limiter.ts):
 * - per client address: `limit` failures a minute, then 429 for a block that doubles each time
 *   within a day (1 minute, 2, 4, … at most an hour), whatever accounts it tried;
 * - per account: `limit` failures in a row (from any address) block it the same way, except from
 *   addresses it has signed in from before, so that somebody guessing root's password never
 *   keeps root out of a machine it uses; a successful login ends the run of failures.
 * An attempt on an account takes the account's point before the password is hashed (an atomic
 * increment where every replica counts): guesses at one account sent at once cannot all pass a
 * check that each of them read before any was counted. An address's failures are counted when they
 * happen, so many people signing in at once through one address are not refused for being many.
 * A blocked guess costs no scrypt work; the failure that reaches a limit starts the block, once.
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

/** What an attempt took at its check: the account's count with its point (null: not taken, the store failing or the address known). */
export interface LoginTicket {
	address: string;
	account: string;
	forAccount: number | null;
}

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

	/**
	 * Takes the account's point for this attempt, or throws 429 (with Retry-After) when it must not even be checked.
	 * The ticket goes to `failed`, `succeeded` or `released` once the attempt is decided.
	 */
	async check(address: string, login: string): Promise<LoginTicket> {
		const account = accountKey(login);
		const fromAddress = await this.byAddress.get(address).catch(err => this.failOpen(err));
		if (fromAddress && fromAddress.consumedPoints >= this.opts.limit) throw tooManyRequests(fromAddress.msBeforeNext);
		const forAccount = await this.take(this.byAccount, account);
		if (typeof forAccount === "number") return { address, account, forAccount };
		if (forAccount && !(await this.isKnown(account, address))) throw tooManyRequests(forAccount.refusedForMs);
		return { address, account, forAccount: null };
	}

	/** A wrong password (or login): one more failure of the address; the account's point stays taken. The one that reached a limit blocks. */
	async failed(ticket: LoginTicket): Promise<void> {
		await Promise.all([
			this.countFailure(this.byAddress, ticket.address, null, `address:${ticket.address}`),
			this.countFailure(this.byAccount, ticket.account, ticket.forAccount, `account:${ticket.account}`),
		]);
	}

	/** Signed in: the account's run of failures over, the address known to it. */
	async succeeded(ticket: LoginTicket): Promise<void> {
		await Promise.all([
			this.byAccount.delete(ticket.account),
			this.knownAddresses.set(`${ticket.account}|${ticket.address}`, 1, KNOWN_ADDRESS_SECONDS),
		]).catch(err => this.failOpen(err));
	}

	/** Not decided (the password could not be checked): the account's point back. */
	async released(ticket: LoginTicket): Promise<void> {
		if (ticket.forAccount !== null) await this.byAccount.reward(ticket.account, 1).catch(err => this.failOpen(err));
	}

	/** Takes one point: the key's count with it; past the limit the point goes back and the attempt is refused; null when the store failed. */
	private async take(limiter: RateLimiterAbstract, key: string): Promise<number | { refusedForMs: number } | null> {
		try {
			return (await limiter.consume(key)).consumedPoints;
		} catch (err) {
			if (!isLimited(err)) {
				this.failOpen(err);
				return null;
			}
			// A refused attempt is not a failure (a block stays: it is set past the limit).
			await limiter.reward(key, 1).catch(e => this.failOpen(e));
			return { refusedForMs: err.msBeforeNext };
		}
	}

	/** The failure whose point reached the limit starts a block, longer each time that day (a point not taken at the check is taken now). */
	private async countFailure(limiter: RateLimiterAbstract, key: string, taken: number | null, blockKey: string): Promise<void> {
		const counted = taken ?? (await this.take(limiter, key));
		if (counted !== this.opts.limit) return;
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
