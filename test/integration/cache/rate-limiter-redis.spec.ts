/**
 * The limiters' Redis connection (lib/api/rate-limiter.ts) against a Redis of this test's own that
 * hangs (SIGSTOP: its socket open, nothing answered): requests keep being counted, in memory, and
 * the commands sent meanwhile do not pile up on the silent socket.
 */
import type { Logger } from "moleculer";
import { limiterRedis, makeLimiter, SILENT_REDIS_MS } from "../../../lib/api/rate-limiter";
import { waitFor } from "../../support/http";
import { PrivateServer } from "../../support/private-servers";

const logger = { warn: () => undefined, info: () => undefined } as unknown as Logger;
let redis: PrivateServer;

beforeAll(async () => {
	redis = await PrivateServer.redis();
});

afterAll(() => redis?.destroy());

it("drops a hung Redis instead of queueing a command per request on it, and counts in memory meanwhile", async () => {
	const client = limiterRedis({ url: redis.url }, logger);
	const queued = () => (client as unknown as { commandQueue: { length: number } }).commandQueue.length;
	try {
		await waitFor("the limiter's Redis", () => client.status === "ready", 10000, 20);
		const limiter = makeLimiter(client, { keyPrefix: "hang", points: 1_000_000, duration: 60 });
		expect((await limiter.consume("before")).consumedPoints).toBe(1);

		redis.signal("SIGSTOP");
		// Two bursts of requests, the second after the first has timed out.
		const burst = () => Promise.all(Array.from({ length: 500 }, () => limiter.consume("during")));
		const first = await burst();
		await new Promise(resolve => setTimeout(resolve, SILENT_REDIS_MS + 500));
		const second = await burst();
		// Every request was counted, by the memory stand-in, Redis answering none of them.
		expect(Math.max(...[...first, ...second].map(r => r.consumedPoints))).toBe(1000);
		await waitFor("the commands to leave the hung socket", () => queued() === 0, 5 * SILENT_REDIS_MS, 50);
	} finally {
		redis.signal("SIGCONT");
		client.disconnect();
	}
});
