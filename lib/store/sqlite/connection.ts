/**
 * A connection to the embedded store's database file, as both of its sides open it: the writer
 * thread's (./writer-thread.ts), which commits each group of writes synchronously to the disk
 * (WAL, `synchronous=FULL`), and the readers' on the event loop (read-only, never syncing). See
 * docs/architecture.md#embedded-store.
 */
import { DatabaseSync, type StatementSync } from "node:sqlite";
import { REGEXP_FUNCTION, regexpTester } from "./query";

/** How long a writer waits for another process's write transaction before answering 503. */
const WRITER_BUSY_TIMEOUT_MS = 10000;
/**
 * How long a read waits for a lock. In WAL mode a reader waits only while a crashed database is
 * recovered, or in the moment a WAL header is rewritten; it waits on the event loop, so briefly.
 */
const READER_BUSY_TIMEOUT_MS = 250;
/** Statements kept prepared per connection (queries differ by shape, not by their values). */
const STATEMENTS_KEPT = 500;

/** SQLite's primary result codes this layer tells apart (an error's `errcode & 0xff`). */
export const SQLITE = {
	BUSY: 5,
	LOCKED: 6,
	NOMEM: 7,
	READONLY: 8,
	IOERR: 10,
	CORRUPT: 11,
	FULL: 13,
	CANTOPEN: 14,
	PROTOCOL: 15,
	CONSTRAINT: 19,
	NOTADB: 26,
} as const;
/** The extended codes of a unique index and of a repeated id. */
const UNIQUE_CODES = new Set([2067, 1555]);

/** The SQLite result code of an error thrown by node:sqlite, if it is one. */
export function sqliteCode(err: unknown): number | undefined {
	const e = err as { code?: string; errcode?: number } | null;
	return e?.code === "ERR_SQLITE_ERROR" && typeof e.errcode === "number" ? e.errcode : undefined;
}

export const isUniqueError = (err: unknown) => UNIQUE_CODES.has(sqliteCode(err) ?? 0);

/** Another connection holds the lock (SQLITE_BUSY or SQLITE_LOCKED). */
export function isLockContention(err: unknown): boolean {
	const code = (sqliteCode(err) ?? 0) & 0xff;
	return code === SQLITE.BUSY || code === SQLITE.LOCKED;
}

/** The storage cannot take the operation now (full, read-only or failing disk, locked too long): a 503, never a lost answer. */
export function isStorageFault(err: unknown): boolean {
	const code = sqliteCode(err);
	if (code === undefined) return false;
	return (
		[SQLITE.BUSY, SQLITE.LOCKED, SQLITE.NOMEM, SQLITE.READONLY, SQLITE.IOERR, SQLITE.CORRUPT, SQLITE.FULL, SQLITE.CANTOPEN, SQLITE.PROTOCOL] as number[]
	).includes(code & 0xff);
}

export interface Connection {
	db: DatabaseSync;
	/** The statement for this SQL, prepared once. */
	statement(sql: string): StatementSync;
	close(): void;
}

/** Opens the database file; the writer's connection also sets the journal up. */
export function openConnection(file: string, role: "writer" | "reader"): Connection {
	const writer = role === "writer";
	const db = new DatabaseSync(file, { readOnly: !writer, timeout: writer ? WRITER_BUSY_TIMEOUT_MS : READER_BUSY_TIMEOUT_MS });
	try {
		if (writer) {
			// WAL: readers never wait for the writer. FULL: a commit is on the disk when it returns.
			db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA journal_size_limit = 67108864;");
		}
		db.function(REGEXP_FUNCTION, { deterministic: true }, regexpTester());
	} catch (err) {
		db.close();
		throw err;
	}
	const statements = new Map<string, StatementSync>();
	return {
		db,
		statement(sql) {
			let st = statements.get(sql);
			if (!st) {
				if (statements.size >= STATEMENTS_KEPT) statements.clear();
				st = db.prepare(sql);
				statements.set(sql, st);
			}
			return st;
		},
		close() {
			statements.clear();
			if (db.isOpen) db.close();
		},
	};
}
