/** Hedged remote calls: when a second request goes out, which answer wins; and the push event id that makes a repeated push one event. */
import { Context, ServiceBroker } from "moleculer";
import { HedgedCallsMiddleware, isHedged } from "../../../middlewares/hedged-calls.middleware";
import { requestEventId } from "../../../services/events.service";
import { gatewayRoutes, loadActionSchemas } from "../../support/routes";

const broker = new ServiceBroker({ logger: false });
const HEDGE_MS = 50;
const hedging = HedgedCallsMiddleware(HEDGE_MS) as unknown as {
	remoteAction(next: (ctx: Context) => Promise<unknown>, action: object): (ctx: Context) => Promise<unknown>;
};
const newCtx = () => Context.create(broker, undefined as never, { a: 1 }, { requestID: "req-1", meta: { user: 7 } });

/** A stand-in for the transit's remote call: each attempt answers as the test says (never, when it returns null). */
function remote(answers: (((resolve: (v: unknown) => void, reject: (e: unknown) => void) => void) | null)[]) {
	const calls: Context[] = [];
	const next = (ctx: Context) =>
		new Promise((resolve, reject) => {
			const answer = answers[calls.length];
			calls.push(ctx);
			answer?.(resolve, reject);
		});
	return { calls, next };
}

it("hedges actions that say so and cached reads, nothing else", () => {
	expect([{ hedge: true }, { cache: { keys: [] } }, { cache: true, hedge: false }, {}].map(isHedged)).toEqual([true, true, false, false]);
	const next = () => Promise.resolve(1);
	expect(hedging.remoteAction(next, {})).toBe(next);
});

it("hedges every action behind a GET route, file downloads' grants included: a read whose request a NATS node lost is sent again", () => {
	const actions = loadActionSchemas();
	const reads = gatewayRoutes()
		.filter(r => r.method === "GET")
		.map(r => r.action ?? r.grant)
		.filter((name): name is string => !!name);
	expect(reads).toEqual(expect.arrayContaining(["events.deadLetters", "builds.traceGrant", "builds.artifactsGrant", "snippets.raw"]));
	// Except the dead-letter list: up to 1000 JetStream reads, which a second copy would only double.
	expect(reads.filter(name => !isHedged(actions[name]))).toEqual(["events.deadLetters"]);
});

it("sends the request once when it is answered in time", async () => {
	const r = remote([res => setTimeout(() => res("first"), 5)]);
	expect(await hedging.remoteAction(r.next, { hedge: true })(newCtx())).toBe("first");
	await new Promise(res => setTimeout(res, 2 * HEDGE_MS));
	expect(r.calls).toHaveLength(1);
});

it("sends it again, with the same params, meta and request id, when the first gets no answer; the second answer wins", async () => {
	const r = remote([null, res => res("second")]);
	const ctx = newCtx();
	expect(await hedging.remoteAction(r.next, { hedge: true })(ctx)).toBe("second");
	expect(r.calls).toHaveLength(2);
	expect(r.calls[1]).not.toBe(ctx);
	expect([r.calls[1].params, r.calls[1].meta, r.calls[1].requestID]).toEqual([{ a: 1 }, { user: 7 }, "req-1"]);
	expect(r.calls[1].id).not.toBe(ctx.id);
});

it("gives an error that came back at once, without sending again, and the first error when both fail", async () => {
	const quick = remote([(_, rej) => rej(new Error("404 Label Not Found"))]);
	await expect(hedging.remoteAction(quick.next, { hedge: true })(newCtx())).rejects.toThrow("404 Label Not Found");
	await new Promise(res => setTimeout(res, 2 * HEDGE_MS));
	expect(quick.calls).toHaveLength(1);

	const both = remote([
		(_, rej) => setTimeout(() => rej(new Error("first")), 2 * HEDGE_MS),
		(_, rej) => setTimeout(() => rej(new Error("second")), 3 * HEDGE_MS),
	]);
	await expect(hedging.remoteAction(both.next, { hedge: true })(newCtx())).rejects.toThrow("first");
	expect(both.calls).toHaveLength(2);
});

it("names a push event after its request and payload: the same request twice is one event, two pushes never share one", () => {
	const a = requestEventId("req-1", { ref: "refs/heads/master", after: "1" });
	expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
	expect(requestEventId("req-1", { ref: "refs/heads/master", after: "1" })).toBe(a);
	expect(requestEventId("req-1", { ref: "refs/heads/master", after: "2" })).not.toBe(a);
	expect(requestEventId("req-2", { ref: "refs/heads/master", after: "1" })).not.toBe(a);
	expect(requestEventId(undefined, {})).not.toBe(requestEventId(undefined, {}));
});
