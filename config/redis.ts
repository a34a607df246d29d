/**
 * The Redis the cache and the rate limiter share (docs/configuration.md#redis): one URL (CACHER,
 * REDIS_URL), or the primary that Redis Sentinel names, followed through a failover.
 */
import { withoutCredentials } from "./credentials";
import { ConfigError, list, str, url, type Env } from "./parse";

/** The Sentinel settings the Secret carries. */
export const REDIS_SECRET_SETTINGS = ["REDIS_PASSWORD", "REDIS_SENTINEL_PASSWORD"];

/** One Redis by its URL, or the primary a group of Sentinels monitors under `name`. */
export type RedisConnection = { url: string } | { sentinels: { host: string; port: number }[]; name: string; password: string; sentinelPassword: string };

/** `host:port` entries (a Sentinel's port is 26379 when left out); IPv6 addresses in brackets. */
function sentinelList(env: Env, name: string): { host: string; port: number }[] {
	return list(env, name).map(entry => {
		const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?$/.exec(entry);
		const port = m?.[2] === undefined ? 26379 : Number(m[2]);
		if (!m || port < 1 || port > 65535) throw new ConfigError(name, str(env, name), "host:port pairs of Redis Sentinels, comma-separated");
		return { host: m[1].replace(/^\[|\]$/g, ""), port };
	});
}

/** Redis settings, read after CACHER (whose Redis the others default to). */
export function redisSettings(env: Env, cacher: string) {
	const sentinels = sentinelList(env, "REDIS_SENTINELS");
	const name = str(env, "REDIS_SENTINEL_NAME");
	const password = str(env, "REDIS_PASSWORD");
	const sentinelPassword = str(env, "REDIS_SENTINEL_PASSWORD");
	const redisUrl = url(env, "REDIS_URL", ["redis", "rediss"], cacher.startsWith("redis") ? cacher : "");
	if (!sentinels.length) return { redis: redisUrl ? ({ url: redisUrl } as RedisConnection) : null };
	if (!/^[A-Za-z0-9._-]{1,128}$/.test(name))
		throw new ConfigError(
			"REDIS_SENTINEL_NAME",
			name,
			"the name the Sentinels monitor the primary under (such as mymaster) whenever REDIS_SENTINELS is set",
		);
	// One Redis for the cache and the limiter: a URL beside the Sentinels would name a second one.
	for (const [variable, value] of [
		["CACHER", cacher],
		["REDIS_URL", str(env, "REDIS_URL")],
	])
		if (value)
			throw new ConfigError(
				variable,
				withoutCredentials(value),
				"empty when REDIS_SENTINELS is set (the cache and the rate limiter then use Redis through Sentinel)",
			);
	return { redis: { sentinels, name, password, sentinelPassword } as RedisConnection };
}
