/** A page read from Redis as its JSON bytes (lib/cache/cache-reads.ts `encodedPage`): its rows sent unparsed, the rest read for the headers. */
import { EncodedJson, encodedPage } from "../../../../lib/cache/cache-reads";
import { keysetPage, paginated } from "../../../../lib/api/pagination";

const rows = [
	{ name: 'a "],\\"total\\":" trap ]', id: 1 },
	{ name: "Äpfel 😀", id: 2 },
];

it("sends a page's rows as the bytes the cache holds, and reads the rest", () => {
	for (const page of [paginated(rows, 41, { page: 2, perPage: 20 }), keysetPage(rows, "eyJpZCI6IjEifQ", 2), keysetPage(rows, null, 2)]) {
		const read = encodedPage(Buffer.from(JSON.stringify(page)))!;
		expect(read.rows).toBeInstanceOf(EncodedJson);
		expect((read.rows as unknown as EncodedJson).bytes.toString("utf8")).toBe(JSON.stringify(rows));
		expect({ ...read, rows }).toEqual(page);
	}
});

it("leaves anything else to be parsed", () => {
	const others = [[1, 2], { name: "x" }, { $paginated: true, total: 1, rows: [] }, "text"];
	for (const other of others) expect(encodedPage(Buffer.from(JSON.stringify(other)))).toBeNull();
	expect(encodedPage(Buffer.from('{"$paginated":true,"rows":[1],"total":oops}'))).toBeNull();
});
