/**
 * Counters for rate limits and throttles (rate-limiter-flexible): in Redis when there is one, so
 * every replica counts together, with this process's memory standing in while Redis does not
 * answer (a limit never fails a request because Redis is away; it counts per replica meanwhile).
 */
import type Redis from "ioredis";
import type { Logger } from "moleculer";
import type { RedisConnection } from "../../config/redis";
import { connectRedis } from "../cache/redis-connection";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";

export { RateLimiterRes };

/** A limiter's Redis that says nothing for this long is taken for hung. */
export const SILENT_REDIS_MS = 1000;

export interface LimiterSpec {
	/** Names the counters (and their Redis keys). */
	keyPrefix: string;
	/** Points a key may consume per window. */
	points: number;
	/** The window, in seconds. */
	duration: number;
}

/**
 * One Redis connection for a process's limiters: fails fast instead of queueing while Redis is away.
 * A Redis that hangs (its socket open, nothing answered) is dropped after a second of silence:
 * a command's timeout rejects its caller but leaves the command queued on the socket, so every
 * request would add one more until Redis answers; dropped, the limiters count in memory meanwhile.
 * Through Sentinel it follows a failover to the new primary (lib/cache/redis-connection.ts).
 */
export function limiterRedis(conn: RedisConnection, logger: Logger): Redis {
	const redis = connectRedis(conn, { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 250, socketTimeout: SILENT_REDIS_MS });
	let down = false;
	redis.on("error", (err: Error) => {
		if (!down) logger.warn(`Rate limiting fell back to memory: Redis is unavailable (${err.message})`);
		down = true;
	});
	redis.on("ready", () => {
		if (down) logger.info("Rate limiting is back on Redis");
		down = false;
	});
	return redis;
}

export function makeLimiter(redis: Redis | null, spec: LimiterSpec): RateLimiterAbstract {
	const memory = new RateLimiterMemory(spec);
	if (!redis) return memory;
	return new RateLimiterRedis({ ...spec, storeClient: redis, insuranceLimiter: memory, rejectIfRedisNotReady: true });
}

/** A consume that went past the limit rejects with the limiter's answer; anything else is a real error. */
export function isLimited(err: unknown): err is RateLimiterRes {
	return err instanceof RateLimiterRes;
}

/** Block length after the n-th block of a key within a day: `base`, doubling each time, at most `max` (seconds). */
export function growingBlockSeconds(blocks: number, base: number, max: number): number {
	return Math.min(max, base * 2 ** Math.max(0, Math.min(30, blocks - 1)));
}
