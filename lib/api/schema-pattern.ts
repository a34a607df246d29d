/**
 * A JavaScript regular expression as a JSON Schema `pattern` that means the same to every reader
 * of the API description (Schemathesis reads patterns with Python's and Rust's engines, a
 * generated client with JavaScript's): its shorthand classes, Unicode properties and `.` spelled
 * out as JavaScript reads them (`\d` is 0-9 here, any Unicode digit to Python and Rust; `\s` is
 * JavaScript's whitespace; `.` stops at four line terminators, not one; `\p{L}` is the letters of
 * this Node's Unicode), and `i` as both cases. Pure; throws on a construct it cannot spell out, so
 * a pattern that would mean something else elsewhere never reaches the document. JSON Schema counts
 * characters, JavaScript without `u` UTF-16 units: a pattern that counts characters beyond U+FFFF
 * (`^.{1,3}$`) has the `u` flag.
 */

/** The characters JavaScript's `\s` (and `String.prototype.trim`) takes as whitespace. */
export const JS_WHITESPACE = "\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff";
const LINE_TERMINATORS = "\\n\\r\\u2028\\u2029";

/** Inside a class: the shorthand's members. */
const IN_CLASS: Record<string, string> = { d: "0-9", w: "A-Za-z0-9_", s: JS_WHITESPACE };
/** Outside a class: a class of its own. */
const OUTSIDE: Record<string, string> = {
	d: "[0-9]",
	D: "[^0-9]",
	w: "[A-Za-z0-9_]",
	W: "[^A-Za-z0-9_]",
	s: `[${JS_WHITESPACE}]`,
	S: `[^${JS_WHITESPACE}]`,
};

/** A code point as a class member: `\uXXXX` in the BMP, the character itself beyond (no escape reads alike everywhere). */
function member(cp: number): string {
	if (cp > 0xffff) return String.fromCodePoint(cp);
	return `\\u${cp.toString(16).padStart(4, "0")}`;
}

const propertyRanges = new Map<string, string>();

/** The members of `\p{name}` in this Node's Unicode, as ranges (surrogates, which no string of text holds alone, left out). */
function unicodeProperty(name: string): string {
	let ranges = propertyRanges.get(name);
	if (ranges === undefined) {
		const re = new RegExp(`^\\p{${name}}$`, "u");
		const parts: string[] = [];
		let start = -1;
		for (let cp = 0; cp <= 0x110000; cp++) {
			const inside = cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff) && re.test(String.fromCodePoint(cp));
			if (inside && start < 0) start = cp;
			if (!inside && start >= 0) {
				parts.push(start === cp - 1 ? member(start) : `${member(start)}-${member(cp - 1)}`);
				start = -1;
			}
		}
		propertyRanges.set(name, (ranges = parts.join("")));
	}
	return ranges;
}

const letterCases = (c: string) => (/[A-Za-z]/.test(c) ? `[${c.toLowerCase()}${c.toUpperCase()}]` : c);
const swapCase = (c: string) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase());

export function schemaPattern(re: RegExp): string {
	const flags = re.flags.replace(/[gyu]/g, "");
	if (flags && flags !== "i") throw new Error(`a pattern with flags ${re.flags} has no JSON Schema spelling: ${re.source}`);
	const ignoreCase = flags === "i";
	const src = re.source;
	let out = "";
	let inClass = false;
	for (let i = 0; i < src.length; i++) {
		const c = src[i];
		if (c === "\\") {
			const next = src[i + 1];
			i++;
			if ((next === "p" || next === "P") && src[i + 1] === "{" && re.unicode) {
				const end = src.indexOf("}", i);
				const ranges = unicodeProperty(src.slice(i + 2, end));
				i = end;
				if (next === "P" && inClass) throw new Error(`\\P inside a class has no portable spelling: ${src}`);
				out += inClass ? ranges : `[${next === "P" ? "^" : ""}${ranges}]`;
			} else if (inClass && IN_CLASS[next] !== undefined) out += IN_CLASS[next];
			else if (inClass && OUTSIDE[next] !== undefined) throw new Error(`\\${next} inside a class has no portable spelling: ${src}`);
			else if (!inClass && OUTSIDE[next] !== undefined) out += OUTSIDE[next];
			else out += c + next;
			continue;
		}
		if (inClass) {
			// Case-blind: a letter or a range of letters gets its other case beside it.
			if (ignoreCase && /[A-Za-z]/.test(c) && src[i + 1] === "-" && /[A-Za-z]/.test(src[i + 2] ?? "")) {
				const [from, to] = [c, src[i + 2]];
				out += `${from}-${to}${swapCase(from)}-${swapCase(to)}`;
				i += 2;
				continue;
			}
			if (ignoreCase && /[A-Za-z]/.test(c)) {
				out += c + swapCase(c);
				continue;
			}
			if (c === "]") inClass = false;
			out += c;
			continue;
		}
		if (c === "[") {
			inClass = true;
			out += c;
			// A leading `^`, and a `]` right after it, belong to the class.
			if (src[i + 1] === "^") out += src[++i];
			if (src[i + 1] === "]") out += src[++i];
			continue;
		}
		out += c === "." ? `[^${LINE_TERMINATORS}]` : ignoreCase ? letterCases(c) : c;
	}
	return out;
}

/** The decimal numbers 1 to `max` without leading zeros, as a pattern (no anchors): a bound JSON Schema cannot put on text. */
export function decimalUpTo(max: number): string {
	const digits = String(max);
	const shorter = digits.length > 1 ? [`[1-9][0-9]{0,${digits.length - 2}}`] : [];
	const same = [...digits].map((d, i) => {
		const first = i === 0 ? 1 : 0;
		if (Number(d) <= first) return null;
		return `${digits.slice(0, i)}[${first}-${Number(d) - 1}][0-9]{${digits.length - i - 1}}`;
	});
	return `(?:${[...shorter, ...same.filter((p): p is string => p !== null), digits].join("|")})`;
}
