/**
 * Fixed-window rate-limit counters for moleculer-web. With Redis every gateway replica shares
 * the counters; when Redis does not answer, counting degrades to this replica's memory (with a
 * warning) instead of failing requests, and returns to Redis once it answers again.
 */
import Redis from "ioredis";
import type { ServiceBroker } from "moleculer";

export interface RateLimitStore {
	resetTime: number;
	inc(key: string): number | Promise<number>;
}

class MemoryWindow {
	private hits = new Map<string, number>();
	resetTime: number;
	constructor(private windowMs: number) {
		this.resetTime = Date.now() + windowMs;
	}
	inc(key: string): number {
		const now = Date.now();
		if (now >= this.resetTime) {
			this.hits.clear();
			this.resetTime = now + this.windowMs;
		}
		const n = (this.hits.get(key) ?? 0) + 1;
		this.hits.set(key, n);
		return n;
	}
}

export function rateLimitStoreFactory(redisUrl: string) {
	return class Store implements RateLimitStore {
		private memory: MemoryWindow;
		private redis?: Redis;
		private degraded = false;
		resetTime: number;
		constructor(
			private windowMs: number,
			_opts: unknown,
			private broker: ServiceBroker,
		) {
			this.memory = new MemoryWindow(windowMs);
			this.resetTime = this.memory.resetTime;
			if (redisUrl) {
				this.redis = new Redis(redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 250, lazyConnect: false });
				this.redis.on("error", () => undefined); // reported once per outage in inc()
			}
		}
		async inc(key: string): Promise<number> {
			const windowStart = Math.floor(Date.now() / this.windowMs) * this.windowMs;
			this.resetTime = windowStart + this.windowMs;
			if (this.redis) {
				try {
					const redisKey = `ratelimit:${windowStart}:${key}`;
					const [[, count]] = (await this.redis.multi().incr(redisKey).pexpire(redisKey, this.windowMs).exec()) as [[null, number]];
					if (this.degraded) this.broker.logger.info("Rate limiting is back on Redis");
					this.degraded = false;
					return count;
				} catch (err) {
					if (!this.degraded) this.broker.logger.warn(`Rate limiting fell back to memory: Redis is unavailable (${(err as Error).message})`);
					this.degraded = true;
				}
			}
			return this.memory.inc(key);
		}
		close(): void {
			this.redis?.disconnect();
		}
	};
}
