import { adapterFor, PatientNatsAdapter, RegroupingRedisAdapter } from "../../../../middlewares/channels.middleware";
import { InProcessChannelAdapter } from "../../../../lib/push/in-process-channel-adapter";
import {
	channelBackend,
	DELIVERY_RECORD_MS,
	natsConnectionOptions,
	pushNames,
	replayable,
	REPLAY_WINDOW_MS,
	RETENTION_MS,
	retryDelay,
} from "../../../../lib/push/channel";

const cfg = {
	channels: "",
	transporter: "",
	namespace: "",
	pushMaxInFlight: 7,
	pushMaxDeliveries: 5,
	pushRetryDelayMs: 1000,
	pushAckWaitMs: 15000,
	pushStreamReplicas: 1,
	dataDir: "/var/lib/gitlab-v3",
};

describe("push channel configuration", () => {
	it("picks JetStream on a NATS transporter, Redis with CHANNELS=redis://, in-process without a transporter", () => {
		expect(channelBackend({ ...cfg, transporter: "nats://n1:4222" })).toEqual({ kind: "nats", url: "nats://n1:4222" });
		expect(channelBackend({ ...cfg, transporter: "nats://n1:4222", channels: "redis://r:6379" })).toEqual({ kind: "redis", url: "redis://r:6379" });
		expect(channelBackend({ ...cfg, transporter: "redis://r:6379" })).toEqual({ kind: "redis", url: "redis://r:6379" });
		expect(channelBackend(cfg)).toEqual({ kind: "memory" });
		expect(() => channelBackend({ ...cfg, transporter: "tcp://h:6000" })).toThrow(/CHANNELS/);
	});

	it("gives the NATS adapter the servers and credentials of the URL in object form, never the URL string", () => {
		const adapter = adapterFor({ kind: "nats", url: "nats://u:p%40ss@n1:4222,nats://n2:4223" }, cfg) as any;
		expect(adapter).toBeInstanceOf(PatientNatsAdapter);
		expect(adapter.opts).toMatchObject({
			maxInFlight: 7,
			maxRetries: 5,
			deadLettering: { enabled: true, queueName: "DEAD_PUSH" },
			nats: { connectionOptions: { servers: ["n1:4222", "n2:4223"], user: "u", pass: "p@ss", name: "channels", maxReconnectAttempts: -1 } },
		});
		expect(JSON.stringify(adapter.opts)).not.toContain("nats://");
		const local = adapterFor({ kind: "memory" }, cfg);
		expect(local).toBeInstanceOf(InProcessChannelAdapter);
		// The all-in-one channel keeps its journal under DATA_DIR.
		expect((local as any).options.dir).toBe("/var/lib/gitlab-v3/channels");
		const redis = adapterFor({ kind: "redis", url: "redis://r:6379" }, cfg) as any;
		expect(redis).toBeInstanceOf(RegroupingRedisAdapter);
		expect(redis.opts).toMatchObject({ redis: { url: "redis://r:6379" }, maxInFlight: 7, maxRetries: 5 });
	});

	it("reads a token from a NATS URL", () => {
		expect(natsConnectionOptions("nats://s3cr3t@h:4222")).toEqual({ servers: ["h:4222"], token: "s3cr3t", noAsyncTraces: true });
	});

	it("reads a user and password from a NATS URL, and asks the client for no async traces", () => {
		expect(natsConnectionOptions("nats://ann:p%40ss@h1:4222,nats://h2:4222")).toEqual({
			servers: ["h1:4222", "h2:4222"],
			user: "ann",
			pass: "p@ss",
			noAsyncTraces: true,
		});
	});

	it("names streams like @moleculer/channels 0.1.8 does, with the namespace prefix", () => {
		expect(pushNames("")).toEqual({
			channel: "push",
			stream: "push",
			deadLetterSubject: "DEAD_PUSH",
			deadLetterStream: "DEAD_PUSH",
			deliveryBucket: "push_deliveries",
			workersBucket: "push_workers",
		});
		expect(pushNames("e2e-1.x")).toEqual({
			channel: "e2e-1.x.push",
			stream: "e2e-1_x_push",
			deadLetterSubject: "e2e-1.x.DEAD_PUSH",
			deadLetterStream: "e2e-1_x_DEAD_PUSH",
			deliveryBucket: "e2e-1_x_push_deliveries",
			workersBucket: "e2e-1_x_push_workers",
		});
	});

	it("backs off 4x per failed delivery, at most a minute", () => {
		expect([1, 2, 3, 4, 5, 6].map(n => retryDelay(1000, n))).toEqual([1000, 4000, 16000, 60000, 60000, 60000]);
		expect(retryDelay(0, 3)).toBe(0);
	});
});

describe("replaying a dead letter", () => {
	it("is allowed while the delivery records of its event outlive it by a day, not after", () => {
		const now = Date.parse("2024-05-20T12:00:00Z");
		const receivedAgo = (ms: number) => new Date(now - ms).toISOString();
		expect(DELIVERY_RECORD_MS).toBeGreaterThan(RETENTION_MS);
		expect(replayable(receivedAgo(REPLAY_WINDOW_MS - 1), now)).toBe(true);
		expect(replayable(receivedAgo(REPLAY_WINDOW_MS), now)).toBe(false);
		// An event whose age cannot be told is not replayed.
		expect([undefined, "", "yesterday", 5].map(at => replayable(at, now))).toEqual([false, false, false, false]);
	});
});
