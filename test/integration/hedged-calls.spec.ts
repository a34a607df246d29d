/**
 * Hedged calls over the real NATS (middlewares/hedged-calls.middleware.ts): a request lost on the
 * way, answered by its second copy, leaves nothing behind in the caller's table of requests
 * waiting for an answer (Moleculer refuses every remote call once that table is full).
 */
import { ServiceBroker, type BrokerOptions } from "moleculer";
import { HedgedCallsMiddleware } from "../../middlewares/hedged-calls.middleware";
import { NATS_URL, requireServers, uniqueNamespace } from "../support/servers";

const HEDGE_MS = 50;
let caller: ServiceBroker;
let callee: ServiceBroker;

beforeAll(async () => {
	await requireServers("nats");
	const common: BrokerOptions = {
		namespace: uniqueNamespace("hedge"),
		transporter: { type: "NATS", options: { url: NATS_URL } },
		logger: false,
		requestTimeout: 5000,
	};
	caller = new ServiceBroker({ ...common, nodeID: "caller", middlewares: [HedgedCallsMiddleware(HEDGE_MS)] });
	callee = new ServiceBroker({ ...common, nodeID: "callee" });
	callee.createService({ name: "reads", actions: { get: { hedge: true, handler: () => "ok" } } });
	await Promise.all([caller.start(), callee.start()]);
	await caller.waitForServices("reads");
});

afterAll(() => Promise.all([caller?.stop(), callee?.stop()]));

it("forgets the copy that was lost once the other one is answered", async () => {
	// The callee loses every other request it is sent, as requests in a NATS node that dies are lost.
	const transit = (callee as unknown as { transit: { requestHandler(payload: unknown): Promise<unknown> } }).transit;
	const handle = transit.requestHandler.bind(transit);
	let received = 0;
	transit.requestHandler = payload => (received++ % 2 === 0 ? Promise.resolve() : handle(payload));
	const pending = (caller as unknown as { transit: { pendingRequests: Map<string, unknown> } }).transit.pendingRequests;
	for (let i = 0; i < 20; i++) expect(await caller.call("reads.get")).toBe("ok");
	expect(received).toBe(40);
	expect(pending.size).toBe(0);
});
