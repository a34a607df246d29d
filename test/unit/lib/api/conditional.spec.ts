/** v4's conditional DELETE (lib/api/conditional.ts): 412 only for a record changed after the date sent. */
import { checkUnmodifiedSince, unmodifiedSince } from "../../../../lib/api/conditional";

describe("If-Unmodified-Since", () => {
	it("reads an HTTP date, and nothing else", () => {
		expect(unmodifiedSince("Wed, 21 Oct 2015 07:28:00 GMT")).toBe(Date.UTC(2015, 9, 21, 7, 28));
		for (const header of [undefined, "", "yesterday", "x".repeat(65)]) expect(unmodifiedSince(header)).toBeNull();
	});

	it("refuses a record changed after it, at whole seconds, and lets the rest through", () => {
		const since = "Wed, 21 Oct 2015 07:28:00 GMT";
		expect(() => checkUnmodifiedSince({ ifUnmodifiedSince: since }, "2015-10-21T07:28:01.000Z")).toThrow(
			expect.objectContaining({ code: 412, data: { body: { message: "412 Precondition Failed" } } }),
		);
		// The same second as the date: not after it.
		expect(() => checkUnmodifiedSince({ ifUnmodifiedSince: since }, "2015-10-21T07:28:00.900Z")).not.toThrow();
		expect(() => checkUnmodifiedSince({ ifUnmodifiedSince: since }, "2015-10-20T00:00:00.000Z")).not.toThrow();
		expect(() => checkUnmodifiedSince({}, "2030-01-01T00:00:00.000Z")).not.toThrow();
		expect(() => checkUnmodifiedSince({ ifUnmodifiedSince: "not a date" }, "2030-01-01T00:00:00.000Z")).not.toThrow();
		expect(() => checkUnmodifiedSince({ ifUnmodifiedSince: since }, null)).not.toThrow();
	});
});
