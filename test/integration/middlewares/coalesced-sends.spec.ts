/**
 * Coalesced sends over the real NATS (middlewares/coalesced-sends.middleware.ts): the requests a
 * turn of the event loop sends leave in one socket write, in their order, and a stopping broker
 * still says goodbye before it disconnects.
 */
import { ServiceBroker, type BrokerOptions } from "moleculer";
import { CoalescedSendsMiddleware } from "../../../middlewares/coalesced-sends.middleware";
import { waitFor } from "../../support/http";
import { NATS_URL, requireServers, uniqueNamespace } from "../../support/servers";

const CALLS = 50;
let namespace: string;
let callee: ServiceBroker;
const received: number[] = [];

const broker = (nodeID: string, coalesced: boolean) =>
	new ServiceBroker({
		namespace,
		nodeID,
		transporter: { type: "NATS", options: { url: NATS_URL } },
		logger: false,
		heartbeatInterval: 60,
		middlewares: coalesced ? [CoalescedSendsMiddleware()] : [],
	} satisfies BrokerOptions);

beforeAll(async () => {
	await requireServers("nats");
	namespace = uniqueNamespace("coalesced");
	callee = broker("callee", false);
	callee.createService({
		name: "sink",
		actions: {
			take: {
				params: { n: "number" },
				handler: ctx => {
					received.push((ctx.params as { n: number }).n);
					return (ctx.params as { n: number }).n;
				},
			},
		},
	});
	await callee.start();
});

afterAll(() => callee?.stop());

/** The socket writes of a broker's NATS connection, counted from now. */
function countWrites(b: ServiceBroker): { writes: number } {
	const transport = (b as unknown as { transit: { tx: { client: { protocol: { transport: { send(frame: Uint8Array): void } } } } } }).transit.tx.client
		.protocol.transport;
	const counter = { writes: 0 };
	const send = transport.send.bind(transport);
	transport.send = frame => {
		counter.writes++;
		send(frame);
	};
	return counter;
}

/** CALLS calls, each from a callback of its own in one turn of the loop (as requests on separate sockets are). */
function callsInOneTurn(caller: ServiceBroker): Promise<number[]> {
	return Promise.all(
		Array.from(
			{ length: CALLS },
			(_, n) =>
				new Promise<number>((resolve, reject) =>
					setImmediate(() => {
						caller.call<number, object>("sink.take", { n }).then(resolve, reject);
					}),
				),
		),
	);
}

it.each([
	["coalesced", 1, true],
	["without the middleware", CALLS, false],
])("%s, one turn's requests take %i socket write(s), each answered, in their order", async (_, writes, coalesced) => {
	const caller = broker(`caller-${String(coalesced)}`, coalesced);
	await caller.start();
	try {
		await caller.waitForServices("sink");
		received.length = 0;
		const counter = countWrites(caller);
		const answers = await callsInOneTurn(caller);
		expect(counter.writes).toBe(writes);
		expect(answers).toEqual(Array.from({ length: CALLS }, (_, n) => n));
		expect(received).toEqual(answers);
	} finally {
		await caller.stop();
	}
});

it("a stopping broker's goodbye leaves before it disconnects", async () => {
	const caller = broker("leaving", true);
	await caller.start();
	await caller.waitForServices("sink");
	let unexpected: boolean | undefined;
	callee.localBus.on("$node.disconnected", (payload: { node: { id: string }; unexpected: boolean }) => {
		if (payload.node.id === "leaving") unexpected = payload.unexpected;
	});
	await caller.stop();
	await waitFor("the callee to see the caller leave", () => unexpected !== undefined, 5000, 20);
	expect(unexpected).toBe(false);
});
