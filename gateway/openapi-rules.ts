/**
 * fastest-validator rules (the actions' `params`) as JSON Schema (2020-12, OpenAPI 3.1's dialect),
 * for the parameters and request bodies of the API description (gateway/openapi.ts). Pure.
 */
import { MAX_PER_PAGE } from "../lib/api/pagination";

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
	let s: Schema;
	switch (r.type) {
		case "string":
			s = { type: "string" };
			if (typeof r.min === "number") s.minLength = r.min;
			if (typeof r.max === "number") s.maxLength = r.max;
			if (typeof r.length === "number") s.minLength = s.maxLength = r.length;
			if (Array.isArray(r.enum)) s.enum = r.enum;
			if (r.pattern instanceof RegExp) s.pattern = r.pattern.source;
			else if (typeof r.pattern === "string") s.pattern = r.pattern;
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
			s = { type: "boolean" };
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
	if (r.convert === true && (r.type === "number" || r.type === "boolean"))
		s.description = `${r.type === "boolean" ? "true/false/1/0" : "A number"}; form fields and query strings are converted.`;
	if (r.nullable === true && typeof s.type === "string") s.type = [s.type, "null"];
	if (r.default !== undefined && typeof r.default !== "function") s.default = r.default;
	return s;
}

/** The properties of a params object (its `$$` options left out), with the required ones. */
export function objectSchema(params: Record<string, unknown>, leaveOut: string[] = []): { properties: Record<string, Schema>; required?: string[] } {
	const properties: Record<string, Schema> = {};
	const required: string[] = [];
	for (const [name, rule] of Object.entries(params)) {
		if (name.startsWith("$$") || leaveOut.includes(name)) continue;
		properties[name] = ruleSchema(rule);
		if (!isOptional(rule)) required.push(name);
	}
	return required.length ? { properties, required } : { properties };
}

/** `page` and `per_page` follow the gateway's pagination contract (lib/api/pagination.ts) whatever their rule says. */
export function pageSchema(name: string, rule: unknown): Schema {
	if (name === "page") return { type: "integer", minimum: 1 };
	if (name === "per_page") return { type: "integer", minimum: 1, maximum: MAX_PER_PAGE };
	return ruleSchema(rule);
}
