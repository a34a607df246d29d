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

/**
 * An object with exactly these properties, all present, and `sometimes` those a presenter writes
 * only for some records (a failed job's `failure_reason`); `title` names it in the document.
 */
export function object(properties: Record<string, JsonSchema>, title?: string, sometimes: Record<string, JsonSchema> = {}): JsonSchema {
	return {
		...(title ? { title } : {}),
		type: "object",
		properties: { ...properties, ...sometimes },
		required: Object.keys(properties),
		additionalProperties: false,
	};
}

/** One of these values. */
export const oneOfValues = (...values: unknown[]): JsonSchema => ({ enum: values });

/** Any of these shapes (an admin's user or another's); lists of either match both when empty, hence `anyOf`. */
export const either = (...schemas: JsonSchema[]): JsonSchema => ({ anyOf: schemas });

/** The properties of an object schema, to build a larger one from it. */
export function propertiesOf(schema: JsonSchema): Record<string, JsonSchema> {
	return schema.properties as Record<string, JsonSchema>;
}
