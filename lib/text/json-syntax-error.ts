/**
 * Where a text stops being JSON, for a 400 that says so (docs/api.md#errors). Called only after
 * JSON.parse has refused the text: one pass, no recursion, nothing of the text echoed back.
 * JSON.parse's own messages give no position for an unexpected token and change across Node versions.
 */

export interface JsonSyntaxError {
	/** What is wrong there: "expected ',' or '}'", "a string is not closed", … */
	problem: string;
	/** 1-based, in characters. */
	line: number;
	column: number;
}

const SPACE = /[ \t\n\r]*/y;
const NUMBER_OR_LITERAL = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?|true|false|null/y;
const ESCAPED = new Set(['"', "\\", "/", "b", "f", "n", "r", "t"]);
const HEX4 = /[0-9a-fA-F]{4}/y;

/** The index after the string opening at `start`, or what is wrong inside it. */
function stringEnd(text: string, start: number): number | { at: number; problem: string } {
	for (let i = start + 1; i < text.length; i++) {
		const c = text.charCodeAt(i);
		if (c === 34 /* " */) return i + 1;
		if (c < 0x20) return { at: i, problem: "a control character in a string (escape it: \\n, \\u0001)" };
		if (c !== 92 /* \ */) continue;
		HEX4.lastIndex = i + 2;
		if (text[i + 1] === "u" && HEX4.test(text)) i += 5;
		else if (ESCAPED.has(text[i + 1])) i++;
		else return { at: i, problem: "an unknown escape in a string" };
	}
	return { at: start, problem: "a string is not closed" };
}

/** The first place `text` breaks JSON's grammar, or undefined when it does not. */
export function jsonSyntaxError(text: string): JsonSyntaxError | undefined {
	/** The closing characters of the arrays and objects open here. */
	const open: string[] = [];
	let want: "value" | "key" | "colon" | "next" = "value";
	/** Just after `{` or `[`: it may close at once. */
	let empty = false;
	let i = 0;
	const failed = (at: number, problem: string): JsonSyntaxError => {
		let line = 1;
		let lineStart = 0;
		for (let n = text.indexOf("\n"); n !== -1 && n < at; n = text.indexOf("\n", n + 1)) {
			line++;
			lineStart = n + 1;
		}
		return { problem, line, column: at - lineStart + 1 };
	};
	const expected = (at: number, what: string) => failed(at, at < text.length ? `expected ${what}` : `expected ${what}, found the end of the body`);
	for (;;) {
		SPACE.lastIndex = i;
		SPACE.test(text);
		i = SPACE.lastIndex;
		const c = text[i];
		if (empty && c === open.at(-1)) {
			open.pop();
			i++;
			want = "next";
			empty = false;
			continue;
		}
		empty = false;
		if (want === "value" && (c === "{" || c === "[")) {
			open.push(c === "{" ? "}" : "]");
			i++;
			want = c === "{" ? "key" : "value";
			empty = true;
		} else if ((want === "value" || want === "key") && c === '"') {
			const end = stringEnd(text, i);
			if (typeof end !== "number") return failed(end.at, end.problem);
			i = end;
			want = want === "key" ? "colon" : "next";
		} else if (want === "key") {
			return expected(i, "a property name in double quotes");
		} else if (want === "value") {
			NUMBER_OR_LITERAL.lastIndex = i;
			if (!NUMBER_OR_LITERAL.test(text)) return expected(i, "a value");
			i = NUMBER_OR_LITERAL.lastIndex;
			want = "next";
		} else if (want === "colon") {
			if (c !== ":") return expected(i, "':'");
			i++;
			want = "value";
		} else {
			const close = open.at(-1);
			if (close === undefined) return i < text.length ? failed(i, "more after the JSON value") : undefined;
			if (c === ",") want = close === "}" ? "key" : "value";
			else if (c === close) open.pop();
			else return expected(i, `',' or '${close}'`);
			i++;
		}
	}
}
