/**
 * Data written by the NeDB versions, brought into the embedded store once: the first time a
 * collection connects and finds its `<name>.db` (newline-delimited JSON, a later line for the
 * same `_id` replacing an earlier one, `$$deleted` removing it) and `<name>.counters.db` in
 * DATA_DIR, it imports them in the writer's transaction, with the counts checked, and the caller
 * then moves both files aside into DATA_DIR/nedb-imported/ (kept, never deleted). See
 * docs/architecture.md#nedb-import. Read with the standard library: no NeDB needed.
 *
 * A line that does not parse (a last line torn by a crash, which NeDB itself dropped) is
 * skipped and counted. A document that the store refuses (a repeated id or a unique key, which
 * two NeDB processes on one directory could write) is kept in `<name>.conflicts.db` beside the
 * moved files, and counted, rather than stopping the start.
 */
import fs from "fs";
import path from "path";
import type { Doc } from "../types";
import { isUniqueError, type Connection } from "./connection";
import { IDS_TABLE, IMPORTS_TABLE, tableOf } from "./schema";

export interface NedbImport {
	/** The collection's file (or NeDB's `<file>~` when a crash left only that). */
	file: string;
	countersFile: string;
	/** Where refused documents are written. */
	conflictsFile: string;
}

export interface NedbImportResult {
	/** The documents the file held (its last state). */
	found: number;
	imported: number;
	/** Refused by the store (in the conflicts file). */
	conflicts: number;
	/** Lines that did not parse. */
	skipped: number;
	/** The id counter the collection goes on from. */
	lastId: number;
	/** True when an earlier start imported it and only the moving aside was left to do. */
	earlier: boolean;
}

/** Bytes read at a time. */
export const NEDB_READ_CHUNK_BYTES = 1 << 20;
const NEWLINE = 0x0a;

/**
 * Every line of a file, read in chunks (the file may be larger than memory should hold). Lines are
 * cut on the newline byte and only then decoded: a newline byte never occurs inside a UTF-8
 * character, while a chunk boundary may cut one (decoding chunks apart turned its bytes into U+FFFD).
 */
function* lines(file: string): Generator<string> {
	const fd = fs.openSync(file, "r");
	try {
		const buf = Buffer.alloc(NEDB_READ_CHUNK_BYTES);
		/** The bytes of the line that the previous chunks began. */
		let rest: Buffer[] = [];
		for (let n; (n = fs.readSync(fd, buf, 0, NEDB_READ_CHUNK_BYTES, null)) > 0;) {
			const chunk = buf.subarray(0, n);
			let start = 0;
			for (let end; (end = chunk.indexOf(NEWLINE, start)) !== -1; start = end + 1) {
				yield Buffer.concat([...rest, chunk.subarray(start, end)]).toString("utf8");
				rest = [];
			}
			if (start < n) rest.push(Buffer.from(chunk.subarray(start)));
		}
		if (rest.length) yield Buffer.concat(rest).toString("utf8");
	} finally {
		fs.closeSync(fd);
	}
}

/** The id counter a NeDB counters file ends with (0 without one). */
function lastCounter(file: string, collection: string): number {
	if (!fs.existsSync(file)) return 0;
	let seq = 0;
	for (const line of lines(file)) {
		try {
			const doc = JSON.parse(line) as Doc;
			if (doc._id === collection && Number.isSafeInteger(doc.seq)) seq = doc.seq as number;
		} catch {
			// a torn last line
		}
	}
	return seq;
}

export function importNedbFiles(conn: Connection, collection: string, from: NedbImport): NedbImportResult {
	const table = tableOf(collection);
	const done = conn.statement(`SELECT documents FROM ${IMPORTS_TABLE} WHERE collection = ?`).get(collection) as { documents: number } | undefined;
	if (done) return { found: done.documents, imported: done.documents, conflicts: 0, skipped: 0, lastId: 0, earlier: true };
	if (conn.statement(`SELECT 1 FROM ${table} LIMIT 1`).get())
		throw new Error(`${from.file} is a NeDB file of a collection the store already holds data for; move it out of DATA_DIR to start`);

	// The file's last state, by NeDB's _id, staged on the disk rather than in memory.
	conn.db.exec("CREATE TEMP TABLE IF NOT EXISTS nedb_staged (_id TEXT PRIMARY KEY, line TEXT NOT NULL) WITHOUT ROWID; DELETE FROM temp.nedb_staged;");
	const stage = conn.statement("INSERT INTO temp.nedb_staged (_id, line) VALUES (?, ?) ON CONFLICT (_id) DO UPDATE SET line = excluded.line");
	const unstage = conn.statement("DELETE FROM temp.nedb_staged WHERE _id = ?");
	let skipped = 0;
	for (const line of lines(from.file)) {
		if (!line.trim()) continue;
		let doc: Doc;
		try {
			doc = JSON.parse(line) as Doc;
		} catch {
			skipped++;
			continue;
		}
		if (doc.$$indexCreated || doc.$$indexRemoved || typeof doc._id !== "string") continue;
		if (doc.$$deleted) unstage.run(doc._id);
		else stage.run(doc._id, line);
	}

	const insert = conn.statement(`INSERT INTO ${table} (id, doc) VALUES (?, ?)`);
	const conflicts: string[] = [];
	let found = 0;
	let imported = 0;
	let lastId = 0;
	for (const { line } of conn.statement("SELECT line FROM temp.nedb_staged").iterate() as Iterable<{ line: string }>) {
		found++;
		const { _id, ...doc } = JSON.parse(line) as Doc;
		const id = doc.id as number;
		if (!Number.isSafeInteger(id) || id < 1) {
			conflicts.push(line);
			continue;
		}
		try {
			insert.run(id, JSON.stringify(doc));
		} catch (err) {
			if (!isUniqueError(err)) throw err;
			conflicts.push(line);
			continue;
		}
		imported++;
		lastId = Math.max(lastId, id);
	}
	conn.db.exec("DROP TABLE temp.nedb_staged");

	const stored = (conn.statement(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
	if (stored !== imported || imported + conflicts.length !== found)
		throw new Error(`${from.file}: ${found} documents found, ${imported} imported, ${conflicts.length} refused, but the store holds ${stored}`);
	lastId = Math.max(lastId, lastCounter(from.countersFile, collection));
	if (lastId)
		conn.statement(`INSERT INTO ${IDS_TABLE} (name, seq) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET seq = max(seq, excluded.seq)`).run(
			collection,
			lastId,
		);
	conn.statement(`INSERT INTO ${IMPORTS_TABLE} (collection, file, documents, at) VALUES (?, ?, ?, ?)`).run(
		collection,
		path.basename(from.file),
		imported,
		new Date().toISOString(),
	);
	if (conflicts.length) {
		fs.mkdirSync(path.dirname(from.conflictsFile), { recursive: true });
		fs.writeFileSync(from.conflictsFile, conflicts.join("\n") + "\n");
	}
	return { found, imported, conflicts: conflicts.length, skipped, lastId, earlier: false };
}
