/**
 * Every change the embedded store makes, as plain data the writer thread runs (./writer-thread.ts)
 * inside its transaction: a record and the id it takes change together, and so do records and a
 * counter they move (CounterMove). Queries arrive already as SQL (./query.ts).
 */
import type { CounterMove, Doc, IndexSpec } from "../types";
import type { Connection } from "./connection";
import type { Sql } from "./query";
import { ensureCollection, IDS_TABLE, tableOf } from "./schema";
import { importNedbFiles, type NedbImport, type NedbImportResult } from "./nedb-import";

export type WriteRequest =
	| { op: "ensure"; collection: string; indexes: readonly IndexSpec[]; nedb?: NedbImport }
	| { op: "nextId"; collection: string }
	| { op: "insert"; collection: string; docs: Doc[]; counter?: CounterMove }
	| { op: "update"; collection: string; where: Sql; set: Doc; unset: string[] }
	| { op: "remove"; collection: string; where: Sql };

/** What each request answers. */
export interface WriteResults {
	ensure: NedbImportResult | null;
	nextId: number;
	/** The documents as stored; null when the counter was not where the request expected it. */
	insert: Doc[] | null;
	update: number;
	remove: number;
}

/** Sets a field, a dotted path making the objects on its way (as MongoDB's `$set`). */
function setPath(doc: Doc, path: string, value: unknown): void {
	const keys = path.split(".");
	let at = doc;
	for (const key of keys.slice(0, -1)) {
		if (typeof at[key] !== "object" || at[key] === null) at[key] = {};
		at = at[key] as Doc;
	}
	at[keys[keys.length - 1]] = value;
}

function unsetPath(doc: Doc, path: string): void {
	const keys = path.split(".");
	let at: Doc | undefined = doc;
	for (const key of keys.slice(0, -1)) at = typeof at?.[key] === "object" && at[key] !== null ? (at[key] as Doc) : undefined;
	if (at) delete at[keys[keys.length - 1]];
}

export class Writes {
	constructor(private readonly conn: Connection) {}

	run(req: WriteRequest): WriteResults[WriteRequest["op"]] {
		switch (req.op) {
			case "ensure":
				ensureCollection(this.conn.db, req.collection, req.indexes);
				return req.nedb ? importNedbFiles(this.conn, req.collection, req.nedb) : null;
			case "nextId":
				return this.nextId(req.collection);
			case "insert":
				return this.insert(req.collection, req.docs, req.counter);
			case "update":
				return this.update(req.collection, req.where, req.set, req.unset);
			case "remove":
				return Number(this.conn.statement(`DELETE FROM ${tableOf(req.collection)} WHERE ${req.where.sql}`).run(...req.where.params).changes);
		}
	}

	/** The next id of a collection, or the last of the next `count` (handed out in one write). */
	private nextId(collection: string, count = 1): number {
		const row = this.conn
			.statement(`INSERT INTO ${IDS_TABLE} (name, seq) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET seq = seq + excluded.seq RETURNING seq`)
			.get(collection, count) as { seq: number };
		return row.seq;
	}

	/** Stores documents (a fresh id each unless they have one), once the counter, if any, has moved. */
	private insert(collection: string, docs: Doc[], counter?: CounterMove): Doc[] | null {
		if (counter && !this.moveCounter(counter)) return null;
		const insert = this.conn.statement(`INSERT INTO ${tableOf(collection)} (id, doc) VALUES (?, ?)`);
		for (const doc of docs)
			if (doc.id !== undefined && !(Number.isSafeInteger(doc.id) && (doc.id as number) > 0))
				throw new Error(`${collection}: an id is a positive integer`);
		const fresh = docs.filter(doc => doc.id === undefined).length;
		let id = fresh ? this.nextId(collection, fresh) - fresh : 0;
		return docs.map(doc => {
			const stored = { ...doc, id: (doc.id as number | undefined) ?? ++id };
			insert.run(stored.id, JSON.stringify(stored));
			return stored;
		});
	}

	private moveCounter({ collection, id, field, from, to }: CounterMove): boolean {
		const table = tableOf(collection);
		const row = this.conn.statement(`SELECT doc FROM ${table} WHERE id = ?`).get(id) as { doc: string } | undefined;
		const current = row ? (JSON.parse(row.doc) as Doc) : { id };
		if ((current[field] ?? 0) !== from) return false;
		current[field] = to;
		this.conn.statement(`INSERT INTO ${table} (id, doc) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET doc = excluded.doc`).run(id, JSON.stringify(current));
		return true;
	}

	/** Every match read, changed and written back: all of them or, on a unique violation, none. */
	private update(collection: string, where: Sql, set: Doc, unset: string[]): number {
		const table = tableOf(collection);
		const rows = this.conn.statement(`SELECT id, doc FROM ${table} WHERE ${where.sql}`).all(...where.params) as { id: number; doc: string }[];
		const write = this.conn.statement(`UPDATE ${table} SET doc = ? WHERE id = ?`);
		for (const row of rows) {
			const doc = JSON.parse(row.doc) as Doc;
			for (const [path, value] of Object.entries(set)) setPath(doc, path, value);
			for (const path of unset) unsetPath(doc, path);
			if (doc.id !== row.id) throw new Error(`${collection}: a document's id cannot change`);
			write.run(JSON.stringify(doc), row.id);
		}
		return rows.length;
	}
}
