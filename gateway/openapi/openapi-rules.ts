/**
 * fastest-validator rules (the actions' `params`) as JSON Schema (2020-12, OpenAPI 3.1's dialect),
 * for the parameters and request bodies of the API description (gateway/openapi/openapi.ts). Pure.
 */
import { DEFAULT_PER_PAGE, MAX_PER_PAGE } from "../../lib/api/pagination";
import { schemaPattern } from "../../lib/api/schema-pattern";

type Schema = Record<string, unknown>;

/** A fastest-validator shorthand ("string|optional|max:20") as the object form. */
function expandShorthand(rule: string): Record<string, unknown> {
	const [type, ...flags] = rule.split("|");
	const out: Record<string, unknown> = { type: type.trim() };
	for (const flag of flags) {
		const [key, value] = flag.split(":");
		out[key.trim()] =
			value === undefined ? true : /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value === "true" ? true : value === "false" ? false : value;
	}
	return out;
}

function ruleObject(rule: unknown): Record<string, unknown> {
	if (typeof rule === "string") return expandShorthand(rule);
	if (rule && typeof rule === "object" && !Array.isArray(rule)) return rule as Record<string, unknown>;
	return { type: "any" };
}

/**
 * A value a client would send: the default, else 1 moved inside the bounds. Without one, Swagger UI
 * shows a bound, and for `min: 0, max: Number.MAX_SAFE_INTEGER` that is 9007199254740991.
 */
function numberExample(r: Record<string, unknown>): number {
	if (typeof r.default === "number") return r.default;
	if (r.negative) return -1;
	const min = typeof r.min === "number" ? r.min : -Infinity;
	const max = typeof r.max === "number" ? r.max : Infinity;
	return Math.min(Math.max(1, min), max);
}

/** Whether a parameter may be left out. */
export function isOptional(rule: unknown): boolean {
	if (Array.isArray(rule)) return rule.some(isOptional);
	const r = ruleObject(rule);
	return r.optional === true || r.default !== undefined;
}

/** One fastest-validator rule as a JSON Schema (2020-12, OpenAPI 3.1's dialect). */
export function ruleSchema(rule: unknown): Schema {
	if (Array.isArray(rule)) return { anyOf: rule.map(ruleSchema) };
	const r = ruleObject(rule);
	const s = typeSchema(r);
	if (r.convert === true && (r.type === "number" || r.type === "boolean"))
		s.description = `${r.type === "boolean" ? "true/false/1/0/on/off" : "A number"}; form fields and query strings are converted.`;
	if (r.nullable === true && typeof s.type === "string") s.type = [s.type, "null"];
	else if (r.nullable === true && Array.isArray(s.anyOf)) s.anyOf = [...(s.anyOf as Schema[]), { type: "null" }];
	if (r.default !== undefined && typeof r.default !== "function") s.default = r.default;
	// What the service checks beyond the rule (a model's pattern: keywords added), or of a value it
	// reads itself ("any", or an id read as a number: a schema with its own `type`, the whole of it).
	if (r.openapi && typeof r.openapi === "object") return "type" in r.openapi ? { ...r.openapi } : { ...s, ...r.openapi };
	return s;
}

/** A string rule's pattern, as JSON Schema spells it (lib/api/schema-pattern.ts). */
function patternOf(r: Record<string, unknown>): string | undefined {
	if (r.pattern instanceof RegExp) return schemaPattern(r.pattern);
	if (typeof r.pattern === "string") return schemaPattern(new RegExp(r.pattern, typeof r.patternFlags === "string" ? r.patternFlags : ""));
	return undefined;
}

/** What a boolean rule that converts takes besides true and false (fastest-validator's conversion). */
const BOOLEAN_TEXT = ["true", "false", "1", "0", "on", "off"];

function typeSchema(r: Record<string, unknown>): Schema {
	let s: Schema;
	switch (r.type) {
		case "string":
			s = { type: "string" };
			if (typeof r.min === "number") s.minLength = r.min;
			if (typeof r.max === "number") s.maxLength = r.max;
			if (typeof r.length === "number") s.minLength = s.maxLength = r.length;
			if (Array.isArray(r.enum)) s.enum = r.enum;
			if (patternOf(r) !== undefined) s.pattern = patternOf(r);
			break;
		case "number":
			s = { type: r.integer ? "integer" : "number" };
			if (typeof r.min === "number") s.minimum = r.min;
			if (typeof r.max === "number") s.maximum = r.max;
			if (r.positive) s.exclusiveMinimum = 0;
			if (r.negative) s.exclusiveMaximum = 0;
			s.examples = [numberExample(r)];
			break;
		case "boolean":
			s = r.convert === true ? { anyOf: [{ type: "boolean" }, { enum: [1, 0, ...BOOLEAN_TEXT] }] } : { type: "boolean" };
			break;
		case "email":
			s = { type: "string", format: "email" };
			break;
		case "url":
			s = { type: "string", format: "uri" };
			break;
		case "uuid":
			s = { type: "string", format: "uuid" };
			break;
		case "date":
			s = { type: "string", format: "date-time" };
			break;
		case "enum":
			s = { enum: Array.isArray(r.values) ? r.values : [] };
			break;
		case "equal":
			s = { const: r.value };
			break;
		case "array":
			s = { type: "array" };
			if (r.items !== undefined) s.items = ruleSchema(r.items);
			if (typeof r.min === "number") s.minItems = r.min;
			if (typeof r.max === "number") s.maxItems = r.max;
			break;
		case "object": {
			const props = (r.props ?? r.properties) as Record<string, unknown> | undefined;
			s = { type: "object" };
			if (props) Object.assign(s, objectSchema(props));
			break;
		}
		case "multi":
			s = { anyOf: Array.isArray(r.rules) ? r.rules.map(ruleSchema) : [] };
			break;
		default:
			// "any", "custom", "forbidden"…: the service checks the value itself (and answers 400).
			s = {};
	}
	return s;
}

/** The properties of a params object (its `$$` options left out), with the required ones. */
export function objectSchema(params: Record<string, unknown>, leaveOut: string[] = []): { properties: Record<string, Schema>; required?: string[] } {
	const properties: Record<string, Schema> = {};
	const required: string[] = [];
	for (const [name, rule] of Object.entries(params)) {
		if (name.startsWith("$$") || leaveOut.includes(name)) continue;
		properties[name] = isOptional(rule) ? orNull(rule, ruleSchema(rule)) : ruleSchema(rule);
		if (!isOptional(rule)) required.push(name);
	}
	return required.length ? { properties, required } : { properties };
}

/**
 * An optional field in a body takes null as well: the validator lets it through as not sent, as
 * Grape does (a value read by the action itself, "any", says what it takes in its own `openapi`).
 */
function orNull(rule: unknown, s: Schema): Schema {
	const r = ruleObject(rule);
	if (r.type === "any" || r.type === "custom" || r.type === "forbidden" || (r.openapi && typeof r.openapi === "object" && "type" in r.openapi)) return s;
	if (typeof s.type === "string") return { ...s, type: [s.type, "null"] };
	if (Array.isArray(s.type)) return s.type.includes("null") ? s : { ...s, type: [...(s.type as string[]), "null"] };
	if (Array.isArray(s.anyOf)) return (s.anyOf as Schema[]).some(b => b.type === "null") ? s : { ...s, anyOf: [...(s.anyOf as Schema[]), { type: "null" }] };
	if (Array.isArray(s.enum)) return s.enum.includes(null) ? s : { ...s, enum: [...(s.enum as unknown[]), null] };
	return { anyOf: [s, { type: "null" }] };
}

/** `page` and `per_page` as their rule takes them (lib/api/pagination.ts), with what the list makes of them. */
export function pageSchema(name: string, rule: unknown): Schema {
	if (name === "page") return { ...ruleSchema(rule), description: "The page, from 1 (default); below 1 is the first." };
	if (name === "per_page")
		return {
			...ruleSchema(rule),
			description: `Items per page: ${DEFAULT_PER_PAGE} by default, ${MAX_PER_PAGE} at most (more is ${MAX_PER_PAGE}); below 1 is the default.`,
		};
	return ruleSchema(rule);
}
