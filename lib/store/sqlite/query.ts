/**
 * The Mongo-style queries the services write (`{project_id: 5, status: {$in: [...]}}`, `$or`,
 * ranges, `$regex`) as SQL over a collection's table, where each document is one JSON text in
 * `doc` and its integer `id` the row id (docs/architecture.md#embedded-store). A field is
 * `json_extract(doc, '$.field')`, spelled exactly as the expression indexes of ./schema.ts are, so
 * that SQLite finds them. Operators outside this subset are refused with an error, never guessed.
 *
 * Comparisons follow MongoDB where the services rely on it: a missing field equals null, `$ne`
 * and `$nin` match documents without the field, a range on strings never matches numbers (and
 * the reverse), a regular expression matches strings only.
 */
import type { Doc } from "../types";

export type SqlValue = string | number | null;

export interface Sql {
	sql: string;
	params: SqlValue[];
}

/** The SQL function ./connection.ts registers on every connection: 1 when a string matches. */
export const REGEXP_FUNCTION = "doc_regexp";

const FIELD = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

export class UnsupportedQuery extends Error {
	constructor(what: string) {
		super(`unsupported query for the embedded store: ${what}`);
		this.name = "UnsupportedQuery";
	}
}

/** A field's JSON path as an SQL literal (`'$.artifacts.file'`), the name checked. */
export function pathSql(field: string): string {
	if (!FIELD.test(field)) throw new UnsupportedQuery(`field name ${JSON.stringify(field)}`);
	return `'$.${field}'`;
}

/** A field as SQL: the row id for `id`, otherwise its value in the document (`doc`, or a trigger's `NEW.doc`). */
export function fieldSql(field: string, doc = "doc"): string {
	return field === "id" ? "id" : `json_extract(${doc}, ${pathSql(field)})`;
}

/** JSON's own type of a field (`'true'`, `'text'`, …; NULL when missing). */
function typeSql(field: string): string {
	return field === "id" ? "'integer'" : `json_type(doc, ${pathSql(field)})`;
}

const isPlainObject = (v: unknown): v is Doc => typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof RegExp);

type Scalar = string | number | boolean | null;

function scalar(v: unknown, where: string): Scalar {
	if (v === null || v === undefined) return null;
	if (typeof v === "string" || typeof v === "boolean") return v;
	if (typeof v === "number" && Number.isFinite(v)) return v;
	throw new UnsupportedQuery(`${where}: ${Object.prototype.toString.call(v)}`);
}

class Builder {
	readonly params: SqlValue[] = [];

	param(v: SqlValue): string {
		this.params.push(v);
		return "?";
	}

	query(q: Doc): string {
		const parts = Object.entries(q).map(([key, value]) => {
			if (key === "$or" || key === "$and") {
				if (!Array.isArray(value) || !value.length) throw new UnsupportedQuery(`${key} needs a non-empty list`);
				return `(${value.map(sub => this.query(sub as Doc)).join(key === "$or" ? " OR " : " AND ")})`;
			}
			if (key.startsWith("$")) throw new UnsupportedQuery(key);
			return this.condition(key, value);
		});
		return parts.length ? parts.join(" AND ") : "1";
	}

	private condition(field: string, value: unknown): string {
		if (value instanceof RegExp) return this.regexp(field, value);
		if (!isPlainObject(value)) return this.equals(field, scalar(value, field));
		const ops = Object.entries(value);
		if (!ops.length || ops.some(([op]) => !op.startsWith("$"))) throw new UnsupportedQuery(`${field}: an embedded document`);
		return ops
			.filter(([op]) => op !== "$options")
			.map(([op, operand]) => this.operator(field, op, operand, value.$options))
			.join(" AND ");
	}

	private operator(field: string, op: string, operand: unknown, options: unknown): string {
		switch (op) {
			case "$eq":
				return this.equals(field, scalar(operand, field));
			case "$ne":
				return this.differs(field, scalar(operand, field));
			case "$in":
				return this.oneOf(field, this.list(field, op, operand));
			case "$nin":
				return this.noneOf(field, this.list(field, op, operand));
			case "$gt":
			case "$gte":
			case "$lt":
			case "$lte":
				return this.range(field, op, operand);
			case "$exists":
				return `${typeSql(field)} IS ${operand ? "NOT NULL" : "NULL"}`;
			case "$regex": {
				if (operand instanceof RegExp) return this.regexp(field, operand);
				if (typeof operand !== "string") throw new UnsupportedQuery(`${field}.$regex`);
				return this.regexp(field, new RegExp(operand, typeof options === "string" ? options : ""));
			}
			default:
				throw new UnsupportedQuery(`${field}.${op}`);
		}
	}

	private list(field: string, op: string, operand: unknown): Scalar[] {
		if (!Array.isArray(operand)) throw new UnsupportedQuery(`${field}.${op} needs a list`);
		return operand.map(v => scalar(v, field));
	}

	/** Equality in the bare form an index serves (NULL, so no match, when the field is missing). */
	private equals(field: string, v: Scalar): string {
		if (v === null) return `${fieldSql(field)} IS NULL`;
		if (typeof v === "boolean") return `${typeSql(field)} = '${v}'`;
		return `${fieldSql(field)} = ${this.param(v)}`;
	}

	/** Not equal, a missing field included. */
	private differs(field: string, v: Scalar): string {
		if (v === null) return `${fieldSql(field)} IS NOT NULL`;
		if (typeof v === "boolean") return `${typeSql(field)} IS NOT '${v}'`;
		return `${fieldSql(field)} IS NOT ${this.param(v)}`;
	}

	/** Numbers and strings of a list, as one JSON array parameter (one statement for any length). */
	private listed(values: Scalar[]): string | null {
		const plain = values.filter(v => v !== null && typeof v !== "boolean");
		return plain.length ? `(SELECT value FROM json_each(${this.param(JSON.stringify(plain))}))` : null;
	}

	private oneOf(field: string, values: Scalar[]): string {
		const parts: string[] = [];
		const listed = this.listed(values);
		if (listed) parts.push(`${fieldSql(field)} IN ${listed}`);
		for (const v of [true, false, null]) if (values.includes(v)) parts.push(this.equals(field, v));
		return parts.length ? `(${parts.join(" OR ")})` : "0";
	}

	private noneOf(field: string, values: Scalar[]): string {
		const parts: string[] = [];
		const listed = this.listed(values);
		if (listed) parts.push(`coalesce(${fieldSql(field)} NOT IN ${listed}, 1)`);
		for (const v of [true, false, null]) if (values.includes(v)) parts.push(this.differs(field, v));
		return parts.length ? `(${parts.join(" AND ")})` : "1";
	}

	/**
	 * A bound on numbers or on strings. SQLite orders every number before every string, so a string
	 * bound from above and a number bound from below also say that the other kind is out.
	 */
	private range(field: string, op: string, operand: unknown): string {
		if (typeof operand !== "string" && !(typeof operand === "number" && Number.isFinite(operand))) throw new UnsupportedQuery(`${field}.${op}`);
		const sign = { $gt: ">", $gte: ">=", $lt: "<", $lte: "<=" }[op];
		const expr = fieldSql(field);
		const bound = `${expr} ${sign} ${this.param(operand)}`;
		const below = op === "$lt" || op === "$lte";
		if (typeof operand === "string" && below) return `${bound} AND ${expr} >= ''`;
		if (typeof operand === "number" && !below && field !== "id") return `${bound} AND ${expr} < ''`;
		return bound;
	}

	private regexp(field: string, re: RegExp): string {
		// Flags that change what matches; `g` and `y` would make the test stateful.
		const flags = re.flags.replace(/[gy]/g, "");
		return `${REGEXP_FUNCTION}(${fieldSql(field)}, ${this.param(re.source)}, ${this.param(flags)})`;
	}
}

/** The WHERE condition for a query (`1` for `{}`) and its parameters. */
export function whereSql(query: Doc): Sql {
	const b = new Builder();
	const sql = b.query(query);
	return { sql, params: b.params };
}

/** moleculer-db's sort (`"-seq"`, `["project_id", "-id"]`) as an ORDER BY list; "" for none. */
export function orderSql(sort: readonly string[] | undefined): string {
	if (!sort?.length) return "";
	return sort.map(key => (key.startsWith("-") ? `${fieldSql(key.slice(1))} DESC` : `${fieldSql(key)} ASC`)).join(", ");
}

/** The regular-expression test behind REGEXP_FUNCTION, with the compiled expressions kept. */
export function regexpTester(): (value: unknown, source: unknown, flags: unknown) => number {
	const compiled = new Map<string, RegExp>();
	return (value, source, flags) => {
		if (typeof value !== "string") return 0;
		const key = `${String(flags)}/${String(source)}`;
		let re = compiled.get(key);
		if (!re) {
			if (compiled.size >= 256) compiled.clear();
			re = new RegExp(String(source), String(flags));
			compiled.set(key, re);
		}
		return re.test(value) ? 1 : 0;
	};
}
