/**
 * The embedded store's tables (docs/architecture.md#embedded-store): one per collection, its
 * documents as JSON text beside their integer id, with an expression index for each index that
 * models/ declares, so a new field or a new collection needs no change here. Made or brought in
 * line with the declaration each time a collection connects, inside one write transaction (so two
 * processes starting together agree): indexes no longer declared are dropped, new ones built.
 *
 * An index marked `counted` also keeps, through triggers in the same transactions as the writes,
 * the number of documents per value of its first field (`<collection>__counts`).
 */
import type { DatabaseSync } from "node:sqlite";
import type { IndexSpec } from "../types";
import { fieldSql } from "./query";

/** Ids handed out per collection (never reused), and the NeDB files imported (./nedb-import.ts). */
export const IDS_TABLE = "_ids";
export const IMPORTS_TABLE = "_imports";
/** The store's own facts: when it was created, when a writer last started on it. */
const STORE_TABLE = "_store";
/** The layout of the database file, in `PRAGMA user_version`. */
const LAYOUT_VERSION = 1;

const NAME = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;

/** A collection's table name, checked: it is written into SQL. */
export function tableOf(collection: string): string {
	if (!NAME.test(collection)) throw new Error(`invalid collection name ${JSON.stringify(collection)}`);
	return `"${collection}"`;
}

export const countsTableOf = (collection: string) => `"${collection}__counts"`;

/** The tables every store has; run once per connection that writes. */
export function createStoreTables(db: DatabaseSync): void {
	db.exec(`CREATE TABLE IF NOT EXISTS ${IDS_TABLE} (name TEXT PRIMARY KEY, seq INTEGER NOT NULL) WITHOUT ROWID;
		CREATE TABLE IF NOT EXISTS ${IMPORTS_TABLE} (
			collection TEXT PRIMARY KEY, file TEXT NOT NULL, documents INTEGER NOT NULL, at TEXT NOT NULL
		) WITHOUT ROWID;
		CREATE TABLE IF NOT EXISTS ${STORE_TABLE} (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;`);
	const version = (db.prepare("PRAGMA user_version").get() as { user_version: number }).user_version;
	if (version > LAYOUT_VERSION) throw new Error(`the database was written by a newer version (layout ${version}; this one knows ${LAYOUT_VERSION})`);
	if (version < LAYOUT_VERSION) db.exec(`PRAGMA user_version = ${LAYOUT_VERSION}`);
}

/** One of the store's own facts (`_store`), or null. */
export function storeValue(db: DatabaseSync, key: string): string | null {
	return (db.prepare(`SELECT value FROM ${STORE_TABLE} WHERE key = ?`).get(key) as { value: string } | undefined)?.value ?? null;
}

/** Sets one of the store's own facts (in the caller's transaction, if any). */
export function setStoreValue(db: DatabaseSync, key: string, value: string): void {
	db.prepare(`INSERT INTO ${STORE_TABLE} (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`).run(key, value);
}

/**
 * Records a writer's start (and the store's creation, the first time) in a transaction synced to
 * the disk: a store that cannot take a write fails here, at the start.
 */
export function recordStart(db: DatabaseSync, at: string): void {
	db.exec("BEGIN IMMEDIATE");
	try {
		if (storeValue(db, "created") === null) setStoreValue(db, "created", at);
		setStoreValue(db, "started", at);
		db.exec("COMMIT");
	} catch (err) {
		if (db.isTransaction) db.exec("ROLLBACK");
		throw err;
	}
}

/** When the store was created (or first started by a version that records it). */
export const storeCreated = (db: DatabaseSync): string => storeValue(db, "created") ?? "an unknown date";

/** The store's own tables and the counts derived from collections: everything in the file that is not a collection. */
export const isCollectionTable = (name: string) => !name.startsWith("_") && !name.endsWith("__counts") && !name.startsWith("sqlite_");

function indexName(collection: string, ix: IndexSpec): string {
	const fields = Object.entries(ix.fields).map(([f, dir]) => `${f}:${dir}`);
	return `ix:${collection}:${fields.join(",")}${ix.unique ? ":unique" : ""}`;
}

/**
 * Makes the collection's table, indexes and counts what `indexes` declares. SQLite's unique
 * indexes let any number of rows lack the field, so `sparse` needs nothing more here.
 */
export function ensureCollection(db: DatabaseSync, collection: string, indexes: readonly IndexSpec[]): void {
	const table = tableOf(collection);
	db.exec(`CREATE TABLE IF NOT EXISTS ${table} (id INTEGER PRIMARY KEY, doc TEXT NOT NULL)`);
	const wanted = new Map(indexes.filter(ix => !(Object.keys(ix.fields).length === 1 && "id" in ix.fields)).map(ix => [indexName(collection, ix), ix]));
	const existing = db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND name LIKE 'ix:%'").all(collection) as {
		name: string;
	}[];
	for (const { name } of existing) if (!wanted.has(name)) db.exec(`DROP INDEX "${name}"`);
	for (const [name, ix] of wanted) {
		const columns = Object.entries(ix.fields).map(([f, dir]) => `${fieldSql(f)}${dir === -1 ? " DESC" : ""}`);
		db.exec(`CREATE ${ix.unique ? "UNIQUE " : ""}INDEX IF NOT EXISTS "${name}" ON ${table} (${columns.join(", ")})`);
	}
	ensureCounts(
		db,
		collection,
		indexes.filter(ix => ix.counted).map(ix => Object.keys(ix.fields)[0]),
	);
}

/** Triggers that keep `<collection>__counts` (field, value, n) for each counted field, filled from the table when new. */
function ensureCounts(db: DatabaseSync, collection: string, fields: string[]): void {
	const table = tableOf(collection);
	const counts = countsTableOf(collection);
	const prefix = `count:${collection}:`;
	const existing = db.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ? AND name LIKE 'count:%'").all(collection) as {
		name: string;
	}[];
	const wanted = new Set(fields.flatMap(f => ["insert", "delete", "update"].map(on => `${prefix}${f}:${on}`)));
	for (const { name } of existing) if (!wanted.has(name)) db.exec(`DROP TRIGGER "${name}"`);
	if (!fields.length) {
		db.exec(`DROP TABLE IF EXISTS ${counts}`);
		return;
	}
	db.exec(`CREATE TABLE IF NOT EXISTS ${counts} (field TEXT NOT NULL, value, n INTEGER NOT NULL, PRIMARY KEY (field, value)) WITHOUT ROWID`);
	const known = new Set(existing.map(t => t.name));
	for (const field of fields) {
		if (field === "id") throw new Error(`${collection}: the id is not a counted field`);
		if (known.has(`${prefix}${field}:insert`)) continue;
		const value = (row: "NEW" | "OLD") => fieldSql(field, `${row}.doc`);
		const trigger = (on: string) => `"${prefix}${field}:${on}"`;
		const add = `INSERT INTO ${counts} (field, value, n) SELECT '${field}', ${value("NEW")}, 1 WHERE ${value("NEW")} IS NOT NULL
			ON CONFLICT (field, value) DO UPDATE SET n = n + 1;`;
		const remove = `UPDATE ${counts} SET n = n - 1 WHERE field = '${field}' AND value = ${value("OLD")};`;
		db.exec(`DELETE FROM ${counts} WHERE field = '${field}';
			INSERT INTO ${counts} (field, value, n)
				SELECT '${field}', v, count(*) FROM (SELECT ${fieldSql(field)} AS v FROM ${table}) WHERE v IS NOT NULL GROUP BY v;
			CREATE TRIGGER ${trigger("insert")} AFTER INSERT ON ${table} BEGIN ${add} END;
			CREATE TRIGGER ${trigger("delete")} AFTER DELETE ON ${table} BEGIN ${remove} END;
			CREATE TRIGGER ${trigger("update")} AFTER UPDATE OF doc ON ${table} WHEN ${value("OLD")} IS NOT ${value("NEW")} BEGIN ${remove} ${add} END;`);
	}
}
