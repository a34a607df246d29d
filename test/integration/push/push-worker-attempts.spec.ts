/**
 * A push worker (the real mixin, on a broker) handed the same event twice at once: the first
 * attempt of an event writes no claim, so a redelivery that reaches the same process while it
 * still runs (its ack deadline passed while NATS was unreachable) must wait for it and then
 * find its deliveries recorded, not make them again.
 */
import { ServiceBroker, type Service } from "moleculer";
import { PushWorkerMixin, type Delivery } from "../../../mixins/push-worker.mixin";
import { PUSH_CHANNEL } from "../../../lib/push/channel";
import type { PushEvent } from "../../../lib/push/payload";
import { pushBody } from "../../support/push-fixtures";

type ChannelHandler = (this: Service, event: PushEvent, raw?: { info?: { deliveryCount?: number } }) => Promise<void>;

let broker: ServiceBroker;
let worker: Service;
let runs: string[];
let release: () => void = () => undefined;
/** What the first run of a delivery does: wait for `release`, or fail as a peer that is down. */
let firstRun: "slow" | "fails";

beforeAll(async () => {
	broker = new ServiceBroker({ logger: false });
	broker.createService({
		name: "integrations",
		actions: {
			settingsFor: () => ({ active: true, properties: { recipients: "irc://irc.example.com/#dev" }, push_events: true }),
			knowsWorker: () => true,
		},
	});
	worker = broker.createService({
		name: "irc-sender",
		mixins: [PushWorkerMixin({ group: "irc-sender", slug: "irc-gateway", parallel: true })],
		methods: {
			deliveries(event: PushEvent): Delivery[] {
				return [
					{
						target: "irc://irc.example.com/#dev",
						run: async () => {
							runs.push(event.id);
							if (runs.length > 1) return;
							if (firstRun === "fails") throw new Error("connection refused");
							// Slow: the redelivery arrives while it runs.
							await new Promise<void>(r => (release = r));
						},
					},
				];
			},
		},
	});
	await broker.start();
});

afterAll(() => broker.stop());

beforeEach(() => (runs = []));

const handle = (event: PushEvent, deliveryCount: number) => {
	const handler = (worker.schema as { channels: Record<string, { handler: ChannelHandler }> }).channels[PUSH_CHANNEL].handler;
	return handler.call(worker, event, { info: { deliveryCount } });
};

const eventOf = (id: string): PushEvent => ({ id, received_at: new Date().toISOString(), push: pushBody({ projectId: 7 }) as PushEvent["push"] });

it("delivers once when a redelivery comes while the first attempt still runs in the same worker", async () => {
	firstRun = "slow";
	const event = eventOf("ev-raced");
	const first = handle(event, 1);
	await new Promise(r => setImmediate(r));
	const redelivery = handle(event, 2);
	await new Promise(r => setTimeout(r, 50));
	expect(runs).toEqual(["ev-raced"]);
	release();
	await Promise.all([first, redelivery]);
	expect(runs).toEqual(["ev-raced"]);
});

it("delivers again when a redelivery comes after the first attempt failed, while or after it ran", async () => {
	firstRun = "fails";
	const event = eventOf("ev-after-failure");
	const first = handle(event, 1);
	const redelivery = handle(event, 2);
	await expect(first).rejects.toThrow("1 of 1 deliveries failed");
	await redelivery;
	expect(runs).toEqual(["ev-after-failure", "ev-after-failure"]);
	await handle(event, 3);
	expect(runs).toEqual(["ev-after-failure", "ev-after-failure"]);
});
