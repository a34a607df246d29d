import { ROOT_CONTEXT, context } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { correlationId, correlationIdOf, withCorrelationId } from "../../../../lib/tracing/correlation";

beforeAll(() => context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable()));
afterAll(() => context.disable());

describe("the active correlation id", () => {
	it("is the one of the context the flow runs in, across awaits and timers, and none outside", async () => {
		expect(correlationId()).toBeUndefined();
		const seen = await context.with(withCorrelationId(ROOT_CONTEXT, "req-42"), async () => {
			await new Promise(r => setTimeout(r, 5));
			return [correlationId(), await Promise.resolve().then(() => correlationId())];
		});
		expect(seen).toEqual(["req-42", "req-42"]);
		expect(correlationId()).toBeUndefined();
	});

	it("is left as it is by an empty id", () => {
		const named = withCorrelationId(ROOT_CONTEXT, "req-1");
		expect(correlationIdOf(withCorrelationId(named, ""))).toBe("req-1");
		expect(correlationIdOf(withCorrelationId(named, null))).toBe("req-1");
		expect(correlationIdOf(withCorrelationId(named, "req-2"))).toBe("req-2");
	});
});
