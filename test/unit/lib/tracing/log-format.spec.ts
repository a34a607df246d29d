import { ROOT_CONTEXT, context } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { withCorrelationId } from "../../../../lib/tracing/correlation";
import { logFormatter } from "../../../../lib/tracing/log-format";

beforeAll(() => context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable()));
afterAll(() => context.disable());

const bindings = { nodeID: "node-1", ns: "", mod: "push-mailer", svc: "push-mailer" };
const helpers = { printArgs: (args: unknown[]) => args.map(a => (typeof a === "object" ? JSON.stringify(a) : a)) };
const named = <T>(fn: () => T) => context.with(withCorrelationId(ROOT_CONTEXT, "req-9"), fn);

describe("JSON lines", () => {
	const format = logFormatter("json");
	const line = () => JSON.parse(format.call({}, "warn", ["Push", 3, { a: 1 }], bindings, helpers)[0] as string);

	it("are Moleculer's json lines with the correlation id of the flow that wrote them", () => {
		expect(named(line)).toEqual({ ts: expect.any(Number), level: "warn", msg: 'Push 3 {"a":1}', correlation_id: "req-9", ...bindings });
	});

	it("have no correlation_id outside a request or delivery", () => {
		expect(Object.keys(line())).toEqual(["ts", "level", "msg", "nodeID", "ns", "mod", "svc"]);
	});
});

describe("text lines", () => {
	const format = logFormatter("text");

	it("are Moleculer's short lines with the id in brackets after the module", () => {
		const parts = named(() => format.call({ levelColorStr: { info: "INFO " } }, "info", ["Sent"], bindings, helpers));
		expect(parts).toEqual([expect.stringMatching(/^\[\d\d:\d\d:\d\d\.\d{3}Z\]$/), "INFO ", "PUSH-MAILER:", "[req-9]", "Sent"]);
		expect(format.call({}, "error", ["Sent"], bindings, helpers).slice(1)).toEqual(["ERROR", "PUSH-MAILER:", "Sent"]);
	});
});
