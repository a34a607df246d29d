/**
 * Failed-login throttling, as GitLab does with Rack::Attack, counted where every replica sees it
 * (Redis, see lib/api/rate-limiter.ts):
 * - per client address: `limit` failures a minute, then 429 for a block that doubles each time
 *   within a day (1 minute, 2, 4, … at most an hour), whatever accounts it tried;
 * - per account: `limit` failures in a row (from any address) block it the same way, except from
 *   addresses it has signed in from before, so that somebody guessing root's password never
 *   keeps root out of a machine it uses; a successful login ends the run of failures.
 * Each attempt takes its point before the password is hashed (an atomic increment where every
 * replica counts), and gives it back if it signs in: so attempts sent at once cannot all pass a
 * check that each of them read before any was counted, and a blocked guess costs no scrypt work.
 * The failure that reaches the limit starts the block, once.
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

/** A point an attempt took: how many the key had with it. */
interface Taken {
	points: number;
}

/** What an attempt took at its check (null: the store could not count it then). */
export interface LoginTicket {
	address: string;
	account: string;
	fromAddress: Taken | null;
	forAccount: Taken | null;
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
	 * Takes this attempt's points, or throws 429 (with Retry-After) when it must not even be checked.
	 * The ticket goes to `failed`, `succeeded` or `released` once the attempt is decided.
	 */
	async check(address: string, login: string): Promise<LoginTicket> {
		const account = accountKey(login);
		const fromAddress = await this.take(this.byAddress, address);
		if (fromAddress && "refusedForMs" in fromAddress) throw tooManyRequests(fromAddress.refusedForMs);
		const forAccount = await this.take(this.byAccount, account);
		if (forAccount && "refusedForMs" in forAccount && !(await this.isKnown(account, address))) {
			// Refused for the account: not an attempt of this address either.
			await this.giveBack(this.byAddress, address, fromAddress);
			throw tooManyRequests(forAccount.refusedForMs);
		}
		return { address, account, fromAddress, forAccount: forAccount && "points" in forAccount ? forAccount : null };
	}

	/** A wrong password (or login): the attempt's points stay taken; the one that reached the limit blocks. */
	async failed(ticket: LoginTicket): Promise<void> {
		await Promise.all([
			this.countFailure(this.byAddress, ticket.address, ticket.fromAddress, `address:${ticket.address}`),
			this.countFailure(this.byAccount, ticket.account, ticket.forAccount, `account:${ticket.account}`),
		]);
	}

	/** Signed in: the address's point back, the account's run of failures over, the address known to it. */
	async succeeded(ticket: LoginTicket): Promise<void> {
		await Promise.all([
			this.giveBack(this.byAddress, ticket.address, ticket.fromAddress),
			this.byAccount.delete(ticket.account),
			this.knownAddresses.set(`${ticket.account}|${ticket.address}`, 1, KNOWN_ADDRESS_SECONDS),
		]).catch(err => this.failOpen(err));
	}

	/** Not decided (the password could not be checked): both points back. */
	async released(ticket: LoginTicket): Promise<void> {
		await Promise.all([
			this.giveBack(this.byAddress, ticket.address, ticket.fromAddress),
			this.giveBack(this.byAccount, ticket.account, ticket.forAccount),
		]);
	}

	/** Takes one point; past the limit the point goes back and the attempt is refused; null when the store failed. */
	private async take(limiter: RateLimiterAbstract, key: string): Promise<Taken | { refusedForMs: number } | null> {
		try {
			return { points: (await limiter.consume(key)).consumedPoints };
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

	private async giveBack(limiter: RateLimiterAbstract, key: string, taken: Taken | null): Promise<void> {
		if (taken) await limiter.reward(key, 1).catch(err => this.failOpen(err));
	}

	/** The failure whose point reached the limit starts a block, longer each time that day (one the store could not count at the check is counted now). */
	private async countFailure(limiter: RateLimiterAbstract, key: string, taken: Taken | null, blockKey: string): Promise<void> {
		const counted = taken ?? (await this.take(limiter, key));
		if (!counted || !("points" in counted) || counted.points !== this.opts.limit) return;
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
