/**
 * JSON Schema (2020-12, OpenAPI 3.1's dialect) for what the presenters answer, declared beside each
 * presenter (docs/architecture.md#the-api-document). An object lists every property its presenter
 * writes, all of them required and no other allowed, so that a presenter and its schema cannot
 * drift apart unnoticed: test/unit/presenters/schemas.spec.ts checks each presenter's output
 * against its schema, and Schemathesis checks the running service's answers against the document.
 * A schema with a `title` is named once in the document's components and referred to elsewhere.
 */
export type JsonSchema = { readonly [keyword: string]: unknown };

export const string: JsonSchema = { type: "string" };
export const integer: JsonSchema = { type: "integer" };
export const number: JsonSchema = { type: "number" };
export const boolean: JsonSchema = { type: "boolean" };
/** A time the service wrote (ISO 8601, UTC). */
export const timestamp: JsonSchema = { type: "string", format: "date-time" };
export const alwaysNull: JsonSchema = { type: "null" };

/** `schema`, or null. */
export function nullable(schema: JsonSchema): JsonSchema {
	const keys = Object.keys(schema);
	if (typeof schema.type === "string" && keys.every(k => k === "type" || k === "format")) return { ...schema, type: [schema.type, "null"] };
	return { anyOf: [schema, alwaysNull] };
}

export const arrayOf = (items: JsonSchema): JsonSchema => ({ type: "array", items });

export const oneValue = (value: unknown): JsonSchema => ({ const: value });

/** An object with exactly these properties, all present; `title` names it in the document. */
export function object(properties: Record<string, JsonSchema>, title?: string): JsonSchema {
	return { ...(title ? { title } : {}), type: "object", properties, required: Object.keys(properties), additionalProperties: false };
}

/** The properties of an object schema, to build a larger one from it. */
export function propertiesOf(schema: JsonSchema): Record<string, JsonSchema> {
	return schema.properties as Record<string, JsonSchema>;
}
