/**
 * The brokers' validator (lib/api/validator.ts): lengths count characters, as the API
 * description's `maxLength` does; numbers come from decimal text only, as its `integer` says.
 */
import { createValidator } from "../../../../lib/api/validator";

const check = (schema: object) => {
	const compiled = createValidator().compile(schema) as (params: object) => true | { type: string }[];
	return (params: Record<string, unknown>) => {
		const result = compiled(params);
		return result === true ? params : result.map(e => e.type);
	};
};

it("counts a string's characters, not its UTF-16 units", () => {
	const title = check({ title: { type: "string", min: 2, max: 3 } });
	expect(title({ title: "😀😀😀" })).toEqual({ title: "😀😀😀" });
	expect(title({ title: "😀😀😀😀" })).toEqual(["stringMax"]);
	expect(title({ title: "😀" })).toEqual(["stringMin"]);
	expect(check({ code: { type: "string", length: 2 } })({ code: "é😀" })).toEqual({ code: "é😀" });
	// The library's other checks stay.
	expect(check({ name: { type: "string", max: 5, pattern: /^a/ } })({ name: "b" })).toEqual(["stringPattern"]);
});

it("converts only decimal text to a number", () => {
	const page = check({ page: { type: "number", integer: true, convert: true, optional: true } });
	expect(page({ page: "12" })).toEqual({ page: 12 });
	expect(page({ page: "-3" })).toEqual({ page: -3 });
	expect(page({ page: 4 })).toEqual({ page: 4 });
	for (const text of ["", " ", " 5", "0x10", "1e3", "Infinity", "1.5.2"]) expect([text, page({ page: text })]).toEqual([text, ["number"]]);
	expect(page({ page: true })).toEqual(["number"]);
	// Without conversion, text is refused as before.
	expect(check({ n: { type: "number" } })({ n: "5" })).toEqual(["number"]);
});
