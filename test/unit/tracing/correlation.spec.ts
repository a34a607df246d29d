import { ROOT_CONTEXT, context } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { correlationId, correlationIdOf, MAX_REQUEST_ID_LENGTH, requestIdOf, withCorrelationId } from "../../../lib/tracing/correlation";

beforeAll(() => context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable()));
afterAll(() => context.disable());

const fresh = () => "new-id";

describe("requestIdOf", () => {
	it("takes X-Correlation-ID first, then X-Request-ID, as moleculer-web does", () => {
		expect(requestIdOf({ "x-correlation-id": "corr-1", "x-request-id": "req-1" }, fresh)).toBe("corr-1");
		expect(requestIdOf({ "x-request-id": "req-1" }, fresh)).toBe("req-1");
		expect(requestIdOf({}, fresh)).toBe("new-id");
	});

	it("makes a new id for one that is empty, too long, or has spaces, control or non-ASCII characters", () => {
		for (const given of ["", "a".repeat(MAX_REQUEST_ID_LENGTH + 1), "two words", "line\nbreak", "tab\there", "ünïcode", "\u0000"])
			expect([given, requestIdOf({ "x-request-id": given }, fresh)]).toEqual([given, "new-id"]);
		expect(requestIdOf({ "x-request-id": "a".repeat(MAX_REQUEST_ID_LENGTH) }, fresh)).toBe("a".repeat(MAX_REQUEST_ID_LENGTH));
		expect(requestIdOf({ "x-request-id": 'ok:"quoted"/{json}' }, fresh)).toBe('ok:"quoted"/{json}');
	});
});

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
