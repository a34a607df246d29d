/** Where a body stops being JSON (lib/text/json-syntax-error.ts), for the 400 that says so. */
import { jsonSyntaxError } from "../../../../lib/text/json-syntax-error";

it("names what was expected and where, in lines and columns from 1", () => {
	const cases: [string, string, number, number][] = [
		["{not json", "expected a property name in double quotes", 1, 2],
		["name=bug&color=%23fff", "expected a value", 1, 1],
		["[1,2,,3]", "expected a value", 1, 6],
		['{"a":1,}', "expected a property name in double quotes", 1, 8],
		['{\n  "a": 1\n  "b": 2\n}', "expected ',' or '}'", 3, 3],
		["[1 2]", "expected ',' or ']'", 1, 4],
		['{"a" 1}', "expected ':'", 1, 6],
		['{"a":1} x', "more after the JSON value", 1, 9],
		["01", "more after the JSON value", 1, 2],
		["\uFEFF{}", "expected a value", 1, 1],
		['{"a":', "expected a value, found the end of the body", 1, 6],
		["{", "expected a property name in double quotes, found the end of the body", 1, 2],
		['{"a":"open', "a string is not closed", 1, 6],
		['{"a":"\\q"}', "an unknown escape in a string", 1, 7],
		['{"a":"\\u12"}', "an unknown escape in a string", 1, 7],
		['{"a":"tab\tinside"}', "a control character in a string (escape it: \\n, \\u0001)", 1, 10],
	];
	for (const [text, problem, line, column] of cases) expect([text, jsonSyntaxError(text)]).toEqual([text, { problem, line, column }]);
});

it("finds nothing wrong in what JSON.parse takes", () => {
	for (const text of ["{}", "[]", " 1 ", '"x"', "-0.5E-3", "true", '{"a":[1,{"b":null}],"c":"\\u00e9\\n\\/","d":false}', "[[[[]]]]"])
		expect([text, jsonSyntaxError(text)]).toEqual([text, undefined]);
});

it("agrees with JSON.parse on every text made by breaking valid JSON a few characters at a time", () => {
	// A fixed sequence (no clock, no Math.random): the same texts on every run.
	let seed = 1;
	const next = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
	const alphabet = ["{", "}", "[", "]", ",", ":", '"', "\\", "u", "0", "1", "-", ".", "e", "+", "t", "n", "l", "f", " ", "\n", "\u0001", "x", "/", "\u00a0"];
	const valid = '{"a":[1,2.5e-3,{"b":null}],"c":"x\\u00e9\\n","d":true,"e":false}';
	const disagreements: string[] = [];
	for (let k = 0; k < 20_000; k++) {
		let text = valid;
		for (let edit = 0; edit <= k % 4; edit++) {
			const at = next(text.length + 1);
			const ch = alphabet[next(alphabet.length)];
			const kind = next(3);
			text =
				kind === 0
					? text.slice(0, at) + ch + text.slice(at)
					: kind === 1
						? text.slice(0, at) + text.slice(at + 1)
						: text.slice(0, at) + ch + text.slice(at + 1);
		}
		let parses = true;
		try {
			JSON.parse(text);
		} catch {
			parses = false;
		}
		if (parses === (jsonSyntaxError(text) !== undefined)) disagreements.push(text);
	}
	expect(disagreements).toEqual([]);
});
