/**
 * One way to reach the Redis that config/ names (config/redis.ts): a URL, or the primary that Redis
 * Sentinel names. Through Sentinel the client asks the Sentinels where the primary is on every
 * (re)connection, leaves a primary that stopped being one (a failover: the Sentinels' +switch-master,
 * or a READONLY answer from a demoted primary), and connects to the new one by itself. The cacher and
 * the rate limiter both connect here, so both follow a failover. docs/operations.md#redis-sentinel.
 */
import Redis, { type RedisOptions } from "ioredis";
import type { RedisConnection } from "../../config/redis";

/** Reconnects (and sends the command again) when a demoted primary refuses a write. */
function reconnectOnReadOnly(err: Error): 2 | false {
	return err.message.startsWith("READONLY") ? 2 : false;
}

/** ioredis options for a connection through Sentinel (none for a URL: it says everything itself). */
function sentinelOptions(conn: Extract<RedisConnection, { sentinels: unknown }>): RedisOptions {
	return {
		sentinels: conn.sentinels,
		name: conn.name,
		role: "master",
		...(conn.password ? { password: conn.password } : {}),
		...(conn.sentinelPassword ? { sentinelPassword: conn.sentinelPassword } : {}),
		// Subscribes to the Sentinels' +switch-master: a failover is noticed at once, not at the next failed command.
		failoverDetector: true,
		reconnectOnError: reconnectOnReadOnly,
	};
}

/** A client of `conn` with the caller's own options (timeouts, queueing). */
export function connectRedis(conn: RedisConnection, options: RedisOptions = {}): Redis {
	return "url" in conn ? new Redis(conn.url, options) : new Redis({ ...sentinelOptions(conn), ...options });
}

/**
 * Moleculer's `cacher` option for `conn`: the URL as it always was (moleculer-runner takes CACHER from
 * the environment as it is too), or the Redis cacher with the Sentinel options; without Redis, the
 * bounded in-memory cacher.
 */
export function cacherOption(conn: RedisConnection | null, cacherUrl: string, memoryEntries: number): string | object {
	if (cacherUrl) return cacherUrl;
	if (conn && "sentinels" in conn) return { type: "Redis", options: { redis: sentinelOptions(conn) } };
	return { type: "MemoryLRU", options: { max: memoryEntries } };
}
