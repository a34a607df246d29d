/**
 * Hedged calls over the real NATS (middlewares/hedged-calls.middleware.ts): a request lost on the
 * way, answered by its second copy, leaves nothing behind in the caller's table of requests
 * waiting for an answer (Moleculer refuses every remote call once that table is full), and each
 * copy sent is counted.
 */
import { Errors, ServiceBroker, type BrokerOptions } from "moleculer";
import { HEDGED_CALLS, HedgedCallsMiddleware } from "../../../middlewares/hedged-calls.middleware";
import { waitFor } from "../../support/http";
import { NATS_URL, requireServers, uniqueNamespace } from "../../support/servers";

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
	caller = new ServiceBroker({ ...common, nodeID: "caller", metrics: { enabled: true }, middlewares: [HedgedCallsMiddleware(HEDGE_MS)] });
	callee = new ServiceBroker({ ...common, nodeID: "callee" });
	callee.createService({
		name: "reads",
		actions: {
			get: { hedge: true, handler: () => "ok" },
			missing: {
				hedge: true,
				handler: () => {
					throw new Errors.MoleculerClientError("not here", 404);
				},
			},
		},
	});
	await Promise.all([caller.start(), callee.start()]);
	await caller.waitForServices("reads");
});

afterAll(() => Promise.all([caller?.stop(), callee?.stop()]));

type Handler = (payload: unknown) => Promise<unknown>;
const calleeTransit = () => (callee as unknown as { transit: { requestHandler: Handler } }).transit;
/** The caller's count of copies sent for `action` (`hedged_calls_total` on its Prometheus endpoint). */
const copiesSent = (action: string) => caller.metrics.getMetric(HEDGED_CALLS)?.get({ action })?.value ?? 0;
const pending = () => (caller as unknown as { transit: { pendingRequests: Map<string, unknown> } }).transit.pendingRequests;

/** The callee loses the requests `lose` picks, as requests in a NATS node that dies are lost. */
async function losing<T>(lose: (n: number) => boolean, run: () => Promise<T>): Promise<{ result: T; received: number }> {
	const transit = calleeTransit();
	const handle = transit.requestHandler;
	let received = 0;
	transit.requestHandler = payload => (lose(received++) ? Promise.resolve() : handle.call(transit, payload));
	try {
		return { result: await run(), received };
	} finally {
		transit.requestHandler = handle;
	}
}

it("forgets the copy that was lost once the other one is answered, and counts the copies sent", async () => {
	const before = copiesSent("reads.get");
	const { received } = await losing(
		n => n % 2 === 0,
		async () => {
			for (let i = 0; i < 20; i++) expect(await caller.call("reads.get")).toBe("ok");
		},
	);
	expect(received).toBe(40);
	expect(copiesSent("reads.get") - before).toBe(20);
	expect(pending().size).toBe(0);
});

it("answers with the copy's error when the first attempt was lost, and forgets the lost one", async () => {
	const { result } = await losing(
		n => n === 0,
		() => caller.call("reads.missing", {}, { timeout: 5000 }).catch((err: { code: number; message: string }) => [err.code, err.message]),
	);
	expect(result).toEqual([404, "not here"]);
	expect(pending().size).toBe(0);
});

it("forgets both attempts when both were lost and the call timed out", async () => {
	const { result, received } = await losing(
		() => true,
		() => caller.call("reads.get", {}, { timeout: 600 }).catch((err: { name: string }) => err.name),
	);
	expect([result, received]).toEqual(["RequestTimeoutError", 2]);
	await waitFor("the lost attempts to be forgotten", () => pending().size === 0, 5000, 20);
});
