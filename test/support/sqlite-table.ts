/**
 * A collection's table of the embedded store in memory (lib/store/sqlite/schema.ts), with the
 * documents given, queried through the store's own translation (lib/store/sqlite/query.ts): what
 * a query selects on a real SQLite, without the writer thread.
 */
import { DatabaseSync } from "node:sqlite";
import type { Doc, IndexSpec } from "../../lib/store/types";
import { orderSql, REGEXP_FUNCTION, regexpTester, whereSql } from "../../lib/store/sqlite/query";
import { ensureCollection } from "../../lib/store/sqlite/schema";

export interface MemoryTable {
	db: DatabaseSync;
	/** The documents the query selects, sorted by `sort` (default: id). */
	find(query: Doc, sort?: string[]): Doc[];
	/** The SQL of a query's plan (EXPLAIN QUERY PLAN), to check that an index serves it. */
	plan(query: Doc, sort?: string[]): string;
}

export function memoryTable(docs: Doc[], indexes: IndexSpec[] = []): MemoryTable {
	const db = new DatabaseSync(":memory:");
	db.function(REGEXP_FUNCTION, { deterministic: true }, regexpTester());
	ensureCollection(db, "docs", indexes);
	const insert = db.prepare("INSERT INTO docs (id, doc) VALUES (?, ?)");
	for (const doc of docs) insert.run(doc.id, JSON.stringify(doc));
	const select = (query: Doc, sort: string[] = ["id"]) => {
		const where = whereSql(query);
		return { sql: `SELECT doc FROM docs WHERE ${where.sql} ORDER BY ${orderSql(sort)}`, params: where.params };
	};
	return {
		db,
		find(query, sort) {
			const { sql, params } = select(query, sort);
			return (db.prepare(sql).all(...params) as { doc: string }[]).map(r => JSON.parse(r.doc) as Doc);
		},
		plan(query, sort) {
			const { sql, params } = select(query, sort);
			return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map(r => r.detail).join("; ");
		},
	};
}
