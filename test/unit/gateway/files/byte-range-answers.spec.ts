/**
 * The one answer every download (trace, artifacts, one file of an archive) gives a Range
 * (gateway/files/byte-ranges.ts, docs/api.md#byte-ranges): status, bytes and headers, on range-parser.
 * test/unit/gateway/files/byte-ranges.spec.ts pins the header's reading case by case.
 */
import rangeParser from "range-parser";
import { MAX_RANGE_HEADER, rangeAnswer } from "../../../../gateway/files/byte-ranges";

// The real parser, watched: a header the gateway does not take must not reach it.
jest.mock("range-parser", () => jest.fn(jest.requireActual<typeof import("range-parser")>("range-parser")));
const parserCalls = jest.mocked(rangeParser);

const ETAG = '"e1"';
const answer = (range: string | string[] | undefined, size = 100, headers: Record<string, string> = {}) =>
	rangeAnswer({ headers: { ...headers, ...(range === undefined ? {} : { range: range as string }) } }, { size, etag: ETAG });

const whole = (size = 100) => ({ status: 200, bytes: size > 0 ? { start: 0, end: size - 1 } : null, headers: { "Content-Length": String(size) } });
const part = (start: number, end: number, size = 100) => ({
	status: 206,
	bytes: { start, end },
	headers: { "Content-Range": `bytes ${start}-${end}/${size}`, "Content-Length": String(end - start + 1) },
});
const refused = (size = 100) => ({
	status: 416,
	bytes: null,
	refusal: expect.objectContaining({
		code: 416,
		data: { body: { message: "416 Requested Range Not Satisfiable" }, headers: { "Content-Range": `bytes */${size}`, "Accept-Ranges": "bytes" } },
	}),
});

beforeEach(() => parserCalls.mockClear());

describe("rangeAnswer", () => {
	it("sends the whole file without a Range", () => {
		expect(answer(undefined)).toEqual(whole());
		expect(parserCalls).not.toHaveBeenCalled();
	});

	it.each([
		["bytes=0-0", part(0, 0)],
		["bytes=10-19", part(10, 19)],
		["bytes=90-", part(90, 99)],
		["bytes=0-99", part(0, 99)],
		["Bytes = 5 - 6", part(5, 6)],
	])("sends one range: %j → 206", (range, expected) => {
		expect(answer(range)).toEqual(expected);
	});

	it.each([
		// A last position past the end is the end.
		["bytes=50-1000", part(50, 99)],
		["bytes=99-99999999999999999999", part(99, 99)],
		// A first position at or past the end: 416 with the size.
		["bytes=100-", refused()],
		["bytes=100-200", refused()],
		["bytes=99999999999999999999-", refused()],
	])("past the end: %j", (range, expected) => {
		expect(answer(range)).toEqual(expected);
	});

	it.each([
		["bytes=-10", part(90, 99)],
		["bytes=-100", part(0, 99)],
		// Longer than the file: all of it (RFC 9110 §14.1.2), which range-parser 1.3.0 alone refuses.
		["bytes=-101", part(0, 99)],
		["bytes= - 1000", part(0, 99)],
		// No byte at all.
		["bytes=-0", refused()],
		["bytes=-000", refused()],
	])("suffix: %j", (range, expected) => {
		expect(answer(range)).toEqual(expected);
	});

	it.each([
		[undefined, whole(0)],
		["bytes=0-", refused(0)],
		["bytes=0-0", refused(0)],
		["bytes=-5", refused(0)],
		// Invalid or several ranges are ignored before the file's size matters.
		["bytes=5-4", whole(0)],
		["bytes=0-1,2-3", whole(0)],
	])("an empty file: %j", (range, expected) => {
		expect(answer(range, 0)).toEqual(expected);
	});

	it.each([
		"",
		"bytes",
		"bytes=",
		"bytes=-",
		"bytes=--5",
		"bytes==0-1",
		"bytes=0-1=2",
		"bytes=5-4",
		"bytes=150-120",
		"bytes=a-b",
		"bytes=0x1-2",
		"bytes=+1-2",
		"bytes=1.5-2",
		"bytes=-1-2",
		"bytes=1 2-3",
		"items=0-1",
		"0-1",
		" bytes=0-1",
		// Only space and tab separate the tokens: range-parser would trim a no-break space.
		"bytes=5\u00a0-6",
		"bytes=5-6\u3000",
	])("ignores a malformed or invalid header: %j → 200, the whole file", range => {
		expect(answer(range)).toEqual(whole());
	});

	it.each([
		"bytes=0-1,5-6",
		// Overlapping or adjacent ranges are not combined into one.
		"bytes=0-5,3-8",
		"bytes=0-1,2-3",
		"bytes=0-0,0-0",
		// One of them satisfiable: still several asked for.
		"bytes=200-300,0-1",
		"bytes=-5,0-1",
		"bytes=0-1,",
	])("ignores several ranges: %j → 200, the whole file (no multipart/byteranges)", range => {
		expect(answer(range)).toEqual(whole());
	});

	it("ignores two Range headers", () => {
		expect(answer(["bytes=0-1", "bytes=2-3"])).toEqual(whole());
	});

	it("never parses thousands of ranges, nor a header past MAX_RANGE_HEADER", () => {
		expect(answer("bytes=" + "0-0,".repeat(5000) + "1-1")).toEqual(whole());
		expect(answer("bytes=0-1" + " ".repeat(MAX_RANGE_HEADER))).toEqual(whole());
		expect(answer("bytes=" + "1".repeat(MAX_RANGE_HEADER) + "-")).toEqual(whole());
		expect(parserCalls).not.toHaveBeenCalled();
		// A header within the bound is parsed once against the file (twice for an ask it must tell apart).
		expect(answer("bytes=2-4")).toEqual(part(2, 4));
		expect(parserCalls).toHaveBeenCalledTimes(1);
	});

	it("honours If-Range only when it names the file's strong ETag", () => {
		expect(answer("bytes=2-4", 100, { "if-range": ETAG })).toEqual(part(2, 4));
		expect(answer("bytes=2-4", 100, { "if-range": ` ${ETAG} ` })).toEqual(part(2, 4));
		expect(answer("bytes=2-4", 100, { "if-range": '"other"' })).toEqual(whole());
		expect(answer("bytes=100-", 100, { "if-range": '"other"' })).toEqual(whole());
		expect(answer("bytes=2-4", 100, { "if-range": `${ETAG}${" ".repeat(1024)}` })).toEqual(whole());
		const weak = rangeAnswer({ headers: { range: "bytes=2-4", "if-range": 'W/"e1"' } }, { size: 100, etag: 'W/"e1"' });
		expect(weak).toEqual(whole());
	});
});
