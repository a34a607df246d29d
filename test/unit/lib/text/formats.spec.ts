/** Formats several inputs share (lib/text/formats.ts), and characters counted as Ruby counts them (lib/text/chars.ts). */
import { charCount } from "../../../../lib/text/chars";
import { HTTP_URL, ISO_TIME, NFKC_URL_DELIMITERS } from "../../../../lib/text/formats";

it("takes a time exactly when Date.parse reads it", () => {
	const times = [
		"2016-01-11T09:13:33.000Z",
		"2015-12-24T16:51:14+01:00",
		"2015-12-24T16:51+0100",
		"2021-12-31T24:00Z",
		"2021-12-31T24:00:00.000Z",
		"2021-02-31T00:00Z",
		"2021-12-31T24:00:01Z",
		"2021-13-01T00:00Z",
		"2021-12-31T23:60Z",
		"2021-12-31T10:00+24:00",
		"2021-01-00T10:00",
		"Tue, 1 Jan 2020",
	];
	for (const t of times) expect([t, ISO_TIME.test(t)]).toEqual([t, !Number.isNaN(Date.parse(t)) && /T/.test(t) && !/,/.test(t)]);
});

it("takes http and https URLs with a host, and a port up to 65535", () => {
	expect(["http://a", "https://x.y:8080/p?q#f", "http://a:/", "http://bücher.de/x", "http://a:065535"].filter(u => !HTTP_URL.test(u))).toEqual([]);
	expect(HTTP_URL.test("http://user:secret@a/x")).toBe(true);
	expect(["ftp://a", "http://", "http://a b", "http://a:65536", "http://u@", "http://[::1]"].filter(u => HTTP_URL.test(u))).toEqual([]);
});

it("lists every character NFKC makes a URL delimiter, and takes none in a host or before an @", () => {
	// Controls and space included: a URL's host takes none.
	// eslint-disable-next-line no-control-regex
	const delimiter = /[\x00-\x20\x7f/?#@:[\]\\%<>^|]/;
	const mapped: string[] = [];
	for (let cp = 0x80; cp <= 0x10ffff; cp++) {
		if (cp >= 0xd800 && cp <= 0xdfff) continue;
		const c = String.fromCodePoint(cp);
		if (delimiter.test(c.normalize("NFKC"))) mapped.push(c);
	}
	const listed = new RegExp(`^[${NFKC_URL_DELIMITERS}]$`, "u");
	expect(mapped.filter(c => !listed.test(c))).toEqual([]);
	expect(mapped.length).toBe(100);
	expect(mapped.filter(c => HTTP_URL.test(`http://a${c}b/`) || HTTP_URL.test(`http://u${c}v@h/`))).toEqual([]);
	// The URL standard refuses each in a host too.
	expect(mapped.filter(c => URL.canParse(`http://a${c}b/`))).toEqual([]);
	expect(["http://[x@h/", "http://x]@h/"].filter(u => HTTP_URL.test(u))).toEqual([]);
});

it("counts code points", () => {
	expect([charCount(""), charCount("abc"), charCount("😀é"), "😀".length]).toEqual([0, 3, 2, 2]);
});
