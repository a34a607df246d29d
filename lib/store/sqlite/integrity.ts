/**
 * The integrity check at start, bounded (docs/operations.md#damaged-store): SQLite's
 * `quick_check`, which reads every page of the file (a damaged page, a broken b-tree, a file cut
 * short), when the file is at most FULL_CHECK_PAGES pages; past that, a check whose cost does not
 * grow with the data: the header against the file's size (a copy cut short), the schema, the
 * store's own tables whole, and the first and last rows of every collection. The full check of
 * a larger store is `npm run store:check`, which reads it beside the running service; a backup
 * reads every row too, and fails on a damaged one. Measured in docs/operations.md#damaged-store.
 */
import fs from "fs";
import type { DatabaseSync } from "node:sqlite";
import { SQLITE, sqliteCode } from "./connection";

/**
 * Pages `quick_check` reads at start at most: 128 MiB of 4 KiB pages, some 90,000 builds. It read
 * 1,332 MiB (1,000,000 builds) in 24.6 s on the loaded build machine, and this much in well under
 * a second to a few seconds (docs/operations.md#damaged-store).
 */
export const FULL_CHECK_PAGES = 32768;
/** The first 16 bytes of every SQLite database file. */
const SQLITE_HEADER = "SQLite format 3\0";
/** Problems reported at most (SQLite's own limit argument). */
const MAX_PROBLEMS = 10;

type Row = Record<string, unknown>;

/** SQLite's full `quick_check`: its problems, none when the file is sound (a page it cannot read at all is one). */
export function quickCheck(db: DatabaseSync): string[] {
	let rows: Row[];
	try {
		rows = db.prepare(`PRAGMA quick_check(${MAX_PROBLEMS})`).all();
	} catch (err) {
		if (((sqliteCode(err) ?? 0) & 0xff) !== SQLITE.CORRUPT) throw err;
		return [(err as Error).message];
	}
	const problems = rows.map(r => String(Object.values(r)[0]));
	return problems.length === 1 && problems[0] === "ok" ? [] : problems;
}

/**
 * The database's size as its header says, against the file's, read before SQLite opens it (SQLite
 * would only say "malformed"): a copy cut short is shorter. Never while this process has the
 * store open: closing any descriptor of the file drops the process's SQLite locks on it (POSIX). None when a write-ahead log beside it
 * holds pages (a checkpoint stopped by a full disk leaves the header ahead of the file, and the log
 * complete), when the file is not a database (SQLite says so), or its header's size is not current (https://sqlite.org/fileformat2.html#in_header_database_size).
 */
export function cutShort(file: string): string | null {
	// With a log, the log holds the pages a checkpoint cut short by a full disk had not yet written.
	if (!fs.existsSync(file) || (fs.statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0) > 0) return null;
	const fd = fs.openSync(file, "r");
	try {
		const header = Buffer.alloc(100);
		if (fs.readSync(fd, header, 0, 100, 0) < 100 || header.toString("latin1", 0, 16) !== SQLITE_HEADER) return null;
		if (header.readUInt32BE(92) !== header.readUInt32BE(24)) return null;
		const raw = header.readUInt16BE(16);
		const pageSize = raw === 1 ? 65536 : raw;
		const pages = header.readUInt32BE(28);
		const size = fs.fstatSync(fd).size;
		return size < pages * pageSize
			? `the file is ${size} bytes, its header says ${pages} pages of ${pageSize} (${pages * pageSize} bytes): it was cut short`
			: null;
	} finally {
		fs.closeSync(fd);
	}
}

/** The bounded walk: every table's edges, the store's own tables whole (a page that cannot be read throws). */
function readEdges(db: DatabaseSync): void {
	const tables = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all() as { name: string; sql: string }[];
	for (const { name, sql } of tables) {
		const table = `"${name.replace(/"/g, '""')}"`;
		if (name.startsWith("_")) {
			db.prepare(`SELECT * FROM ${table}`).all();
			continue;
		}
		// WITHOUT ROWID tables (the counts) have no rowid to order by: their first row only.
		if (/WITHOUT\s+ROWID\s*$/i.test(sql)) db.prepare(`SELECT * FROM ${table} LIMIT 1`).get();
		else for (const dir of ["ASC", "DESC"]) db.prepare(`SELECT * FROM ${table} ORDER BY rowid ${dir} LIMIT 1`).get();
	}
}

/**
 * The check the start makes on the writer's connection, once cutShort passed: problems found,
 * none when it passed. A page that cannot be read at all throws SQLite's error (SQLITE_CORRUPT).
 */
export function checkIntegrity(db: DatabaseSync, fullCheckPages = FULL_CHECK_PAGES): string[] {
	const pages = (db.prepare("PRAGMA page_count").get() as { page_count: number }).page_count;
	if (pages <= fullCheckPages) return quickCheck(db);
	readEdges(db);
	return [];
}
