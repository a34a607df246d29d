import { contentRange, MAX_RANGE_HEADER, parseRange, unsatisfiedRange } from "../../../../gateway/files/byte-ranges";
import { noneMatch } from "../../../../gateway/files/file-download";

describe("parseRange (RFC 9110 §14, one range served, the rest ignored)", () => {
	it.each([
		["bytes=0-0", 100, { kind: "partial", start: 0, end: 0 }],
		["bytes=0-99", 100, { kind: "partial", start: 0, end: 99 }],
		["bytes=10-19", 100, { kind: "partial", start: 10, end: 19 }],
		["bytes=90-", 100, { kind: "partial", start: 90, end: 99 }],
		["bytes=0-", 100, { kind: "partial", start: 0, end: 99 }],
		// A last position past the end is the end.
		["bytes=50-1000", 100, { kind: "partial", start: 50, end: 99 }],
		["bytes=50-99999999999999999999999", 100, { kind: "partial", start: 50, end: 99 }],
		// Suffixes: the last N bytes, all of them when N is larger.
		["bytes=-10", 100, { kind: "partial", start: 90, end: 99 }],
		["bytes=-1000", 100, { kind: "partial", start: 0, end: 99 }],
		// Case and spaces around the tokens are tolerated.
		["Bytes = 5 - 6", 100, { kind: "partial", start: 5, end: 6 }],
	])("%j of %d bytes → %j", (header, size, expected) => {
		expect(parseRange(header, size)).toEqual(expected);
	});

	it.each([
		["bytes=100-", 100],
		["bytes=100-200", 100],
		["bytes=99999999999999999999-", 100],
		["bytes=-0", 100],
		["bytes=0-", 0],
		["bytes=-5", 0],
	])("%j of %d bytes cannot be satisfied (416)", (header, size) => {
		expect(parseRange(header, size)).toEqual({ kind: "unsatisfiable" });
	});

	it.each([
		[undefined],
		[["bytes=0-1", "bytes=2-3"]],
		[""],
		["bytes="],
		["bytes=-"],
		["bytes=5-4"],
		["bytes=a-b"],
		["bytes=1.5-2"],
		["bytes=-1-2"],
		["items=0-1"],
		["0-1"],
		// Several ranges: the whole file (multipart/byteranges is not offered).
		["bytes=0-1,5-6"],
		["bytes=0-0," + "1-1,".repeat(30)],
		// Past the header bound, whatever it says.
		["bytes=0-1" + " ".repeat(MAX_RANGE_HEADER)],
	])("%j is ignored: the whole file", header => {
		expect(parseRange(header, 100)).toEqual({ kind: "whole" });
	});

	it("writes Content-Range for 206 and 416", () => {
		expect(contentRange(10, 19, 100)).toBe("bytes 10-19/100");
		expect(unsatisfiedRange(100)).toBe("bytes */100");
	});
});

describe("If-None-Match", () => {
	const etag = '"abc-1"';
	it.each([
		['"abc-1"', true],
		['W/"abc-1"', true],
		['"x", "abc-1"', true],
		["*", true],
		['"abc-2"', false],
		['"abc-1', false],
		[undefined, false],
	])("%j matches: %s", (header, expected) => {
		expect(noneMatch(header, etag)).toBe(expected);
	});

	it("does not read a header longer than 1024 characters", () => {
		expect(noneMatch(`"abc-1", ${'"y", '.repeat(300)}`, etag)).toBe(false);
	});
});
