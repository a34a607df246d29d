/** Path ids for ActiveRecord-style look-ups: digits find, anything else finds nothing. */
import { recordNotFound } from "../../../../lib/api/errors";
import { recordId } from "../../../../lib/api/record-id";

it("takes positive integers written in digits", () => {
	expect(recordId("1")).toBe(1);
	expect(recordId("0042")).toBe(42);
	expect(recordId("999999999999999")).toBe(999999999999999);
});

it("finds nothing for anything else", () => {
	for (const raw of ["0", "-1", "1.5", "1e3", " 1", "abc", "", "9999999999999999", "1 OR 1", "\u0000", undefined, null, 5, ["1"]])
		expect([raw, recordId(raw)]).toEqual([raw, null]);
});

it("recordNotFound is GitLab's RecordNotFound body", () => {
	const err = recordNotFound();
	expect([err.code, (err.data as { body: unknown }).body]).toEqual([404, { message: "404 Not found" }]);
});
