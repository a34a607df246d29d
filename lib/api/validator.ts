/**
 * The brokers' parameter validator (fastest-validator through Moleculer), with two of its rules
 * made to mean what the API description says of them (JSON Schema, gateway/openapi/openapi-rules.ts), as
 * GitLab's Ruby means them too (docs/api.md#parameters):
 * - a string's `min`, `max` and `length` count characters (code points), not UTF-16 units: an
 *   emoji is one character, as in Ruby's `length` and JSON Schema's `maxLength`;
 * - a number converted from text (a query string, a form field) is written in decimal (`5`, `-2`,
 *   `1.5`): not blank, padded, `0x10`, `1e3` or `Infinity`, and not a boolean.
 * Each rule is the library's own, with these checks added to the code it generates.
 */
import { Validators } from "moleculer";

interface RuleContext {
	schema: Record<string, unknown>;
	messages: unknown;
}
type RuleResult = { sanitized?: boolean; source: string };
type Rule = (this: FastestLike, rule: RuleContext, path: string, context: unknown) => RuleResult;
interface FastestLike {
	rules: Record<string, Rule>;
	add(type: string, rule: Rule): void;
	makeError(opts: { type: string; expected?: unknown; actual?: string; messages: unknown }): string;
}

/** Decimal text, as JSON Schema's numbers are written in a query string. */
const DECIMAL_TEXT = /^-?[0-9]+(?:\.[0-9]+)?$/;

/** What the string rule checks of `len`, counted in code points instead of UTF-16 units. */
function codePointString(original: Rule): Rule {
	return function (rule, path, context) {
		const { min, max, length, ...rest } = rule.schema;
		const result = original.call(this, { ...rule, schema: rest }, path, context);
		const checks: string[] = [];
		const check = (condition: string, type: string, expected: unknown) =>
			checks.push(`if (${condition}) { ${this.makeError({ type, expected, actual: "chars", messages: rule.messages })} }`);
		if (typeof min === "number") check(`chars < ${min}`, "stringMin", min);
		if (typeof max === "number") check(`chars > ${max}`, "stringMax", max);
		if (typeof length === "number") check(`chars !== ${length}`, "stringLength", length);
		if (!checks.length) return result;
		// The length of what the rule made of the value (trimmed, converted), as the library measures it.
		const counted = `var chars = 0; for (var __char of value) chars++;\n${checks.join("\n")}\n`;
		const at = result.source.lastIndexOf("return value;");
		if (at < 0) throw new Error("fastest-validator's string rule changed: no `return value;` to check lengths before");
		return { ...result, source: result.source.slice(0, at) + counted + result.source.slice(at) };
	};
}

/** The number rule, converting text only when it is decimal. */
function decimalNumber(original: Rule): Rule {
	return function (rule, path, context) {
		const result = original.call(this, rule, path, context);
		if (rule.schema.convert !== true) return result;
		const guard = `if (typeof value !== "number" && (typeof value !== "string" || !${DECIMAL_TEXT.toString()}.test(value))) {
			${this.makeError({ type: "number", actual: "value", messages: rule.messages })}
			return value;
		}\n`;
		return { ...result, source: guard + result.source };
	};
}

/** A Moleculer validator (`validator` of the broker options) with the rules above. */
export function createValidator(): Validators.Fastest {
	const validator = new Validators.Fastest();
	const fastest = (validator as unknown as { validator: FastestLike }).validator;
	fastest.add("string", codePointString(fastest.rules.string));
	fastest.add("number", decimalNumber(fastest.rules.number));
	return validator;
}
