/**
 * JavaScript patterns as JSON Schema `pattern`s that mean the same to Python's and Rust's engines
 * (lib/api/schema-pattern.ts): each spelt-out pattern, read back by JavaScript, takes exactly what
 * the original takes, on text chosen where the engines differ.
 */
import { decimalUpTo, JS_WHITESPACE, schemaPattern } from "../../../../lib/api/schema-pattern";

/** Where engines disagree: Unicode digits and letters, every whitespace, line terminators, astral characters. */
const SAMPLES = [
	"",
	"a",
	"Z",
	"7",
	"٣",
	"_",
	"-",
	".",
	"@",
	" ",
	"\t",
	"\n",
	"\r",
	"\u2028",
	"\u00a0",
	"\ufeff",
	"\u001c",
	"é",
	"ß",
	"İ",
	"K",
	"😀",
	"a b",
	"x.git",
	"ab\n",
];

it.each([
	/^\d+$/,
	/^\w+$/,
	/^\s*$/,
	/\S/,
	// One character, as JSON Schema counts them: a pattern that counts characters beyond U+FFFF has the u flag.
	/^.$/u,
	/^[\w.-]+$/,
	/^[^\s@]+@[^\s@]+$/,
	/^(?:true|false)$/i,
	/^[0-9a-f]{1,4}$/i,
	/^[\p{L}\p{N}_][\p{L}\p{N}_. -]*$/u,
	/^[\p{Alphabetic}\p{Nd}_\-.@+]*$/u,
	// eslint-disable-next-line no-control-regex -- control characters are the point
	/^[^\x00-\x1f\x7f]*$/,
])("%s takes the same text once spelt out", re => {
	const spelt = new RegExp(schemaPattern(re), "u");
	const samples = [...SAMPLES, ...SAMPLES.map(s => `${s}${s}`), "TRUE", "tRuE", "0aF", "a.atom"];
	expect(samples.filter(s => spelt.test(s) !== re.test(s))).toEqual([]);
});

it("spells out the shorthands and `.` that other engines read otherwise, and keeps the rest", () => {
	expect(schemaPattern(/^\d\w$/)).toBe("^[0-9][A-Za-z0-9_]$");
	expect(schemaPattern(/[\d_]/)).toBe("[0-9_]");
	expect(schemaPattern(/^a.b$/)).toBe("^a[^\\n\\r\\u2028\\u2029]b$");
	expect(schemaPattern(/^\s$/)).toBe(`^[${JS_WHITESPACE}]$`);
	expect(schemaPattern(/^[\]a]\.x$/)).toBe("^[\\]a]\\.x$");
	expect(schemaPattern(/^ab$/i)).toBe("^[aA][bB]$");
	expect(schemaPattern(/^[a-f]$/i)).toBe("^[a-fA-F]$");
});

it("bounds decimal text", () => {
	for (const max of [1, 9, 10, 42, 100, 65535, Number.MAX_SAFE_INTEGER]) {
		const re = new RegExp(`^${decimalUpTo(max)}$`);
		const around = [0, 1, 5, 9, 10, 11, 41, 42, 43, 99, 100, 101, 65534, 65535, 65536, max - 1, max, max + 1].filter(n => n >= 0);
		expect(around.filter(n => re.test(String(n)) !== (n >= 1 && n <= max))).toEqual([]);
	}
	expect(new RegExp(`^${decimalUpTo(Number.MAX_SAFE_INTEGER)}$`).test("9007199254740992")).toBe(false);
});

it("refuses what it cannot spell out alike everywhere", () => {
	expect(() => schemaPattern(/a/m)).toThrow("flags m");
	expect(() => schemaPattern(/[\S]/)).toThrow("inside a class");
});
