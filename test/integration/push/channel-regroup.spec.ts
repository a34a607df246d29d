/**
 * Push events on Redis Streams after the Redis lost its data (restarted without it, or a replica
 * promoted without the consumer groups): a Redis of this test's own is flushed under a consumer,
 * which makes its group again and consumes what is published next, without a storm of errors
 * (middlewares/channels.middleware.ts RegroupingRedisAdapter).
 */
import Redis from "ioredis";
import { ServiceBroker } from "moleculer";
import { config } from "../../../config";
import { PUSH_CHANNEL } from "../../../lib/push/channel";
import { ChannelsMiddlewares } from "../../../middlewares/channels.middleware";
import { waitFor } from "../../support/http";
import { PrivateServer } from "../../support/private-servers";
import { uniqueNamespace } from "../../support/servers";

let redis: PrivateServer;

beforeAll(async () => {
	redis = await PrivateServer.redis();
});

afterAll(() => redis?.destroy());

it("makes a consumer group that vanished again and consumes what comes next", async () => {
	const namespace = uniqueNamespace("regroup");
	const received: string[] = [];
	const errors: string[] = [];
	const broker = new ServiceBroker({
		namespace,
		logger: { type: "Console", options: { level: "error" } },
		middlewares: ChannelsMiddlewares({ ...config, channels: redis.url, transporter: "", namespace }),
	});
	broker.createService({
		name: "mailer",
		channels: { [PUSH_CHANNEL]: { group: "push-mailer", handler: (payload: { n: string }) => void received.push(payload.n) } },
	});
	const spy = jest.spyOn(console, "error").mockImplementation((...args: unknown[]) => void errors.push(args.map(String).join(" ")));
	const admin = new Redis(redis.url);
	try {
		await broker.start();
		await broker.sendToChannel(PUSH_CHANNEL, { n: "before" });
		await waitFor("the first event", () => received.includes("before"), 10000, 20);

		await admin.flushall();
		// Reads fail a while (the group is gone) before the next event comes.
		await new Promise(resolve => setTimeout(resolve, 1500));
		await broker.sendToChannel(PUSH_CHANNEL, { n: "after" });
		await waitFor("the event published after the loss", () => received.includes("after"), 15000, 20);
		// The library read again at once after each failure: thousands of lines a second.
		expect(errors.length).toBeLessThan(5);
	} finally {
		await broker.stop();
		admin.disconnect();
		spy.mockRestore();
	}
});
