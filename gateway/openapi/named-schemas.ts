import type { JsonSchema } from "../../presenters/json-schema";

type Schema = Record<string, unknown>;

/**
 * The document's named schemas: a schema with a `title` is kept once in `components.schemas` and
 * referred to by `$ref`, wherever it appears; two different schemas may not share a title.
 */
export class NamedSchemas {
	readonly schemas: Record<string, Schema> = {};

	use(schema: JsonSchema): Schema {
		const { title } = schema;
		const inner = this.within(schema);
		if (typeof title !== "string") return inner;
		const known = this.schemas[title];
		if (known && JSON.stringify(known) !== JSON.stringify(inner)) throw new Error(`two different schemas are named ${title}`);
		this.schemas[title] = inner;
		return { $ref: `#/components/schemas/${title}` };
	}

	/** The schema with the schemas it holds named in turn. */
	private within(schema: JsonSchema): Schema {
		const out: Schema = { ...schema };
		if (schema.properties)
			out.properties = Object.fromEntries(Object.entries(schema.properties as Record<string, JsonSchema>).map(([k, v]) => [k, this.use(v)]));
		if (schema.items) out.items = this.use(schema.items as JsonSchema);
		if (typeof schema.additionalProperties === "object") out.additionalProperties = this.use(schema.additionalProperties as JsonSchema);
		for (const list of ["anyOf", "oneOf", "allOf"] as const)
			if (Array.isArray(schema[list])) out[list] = (schema[list] as JsonSchema[]).map(s => this.use(s));
		return out;
	}
}
