/**
 * How the writer thread opens the store (./writer-thread.ts): only a store that holds what it
 * held and can take writes starts (docs/operations.md#damaged-store). In order:
 *
 * 1. the files, before SQLite touches them (./store-files.ts): no restore under way, no store
 *    gone that the marker says existed, no lost or damaged write-ahead log, no database file cut
 *    short (./integrity.ts);
 * 2. the connection, waiting for other processes starting on the same DATA_DIR;
 * 3. no restore began meanwhile (a restore takes the store's lock before it marks the directory,
 *    so once this connection holds the store, the mark is there or cannot come);
 * 4. the database holds a store if the marker says one existed (a log lost before any checkpoint
 *    leaves an empty file);
 * 5. SQLite's integrity check, bounded (./integrity.ts);
 * 6. the store's tables, and a write synced to the disk: a file this process may not write, or a
 *    disk that will not take it, stops here rather than answering every write 503;
 * 7. the marker, once the store exists in the database file itself (checkpointed: a log lost
 *    before the first periodic checkpoint then costs writes, not the store).
 *
 * Every fault is a StoreStartError saying which file, what is wrong and how to recover.
 */
import path from "path";
import { isLockContention, openConnection, SQLITE, sqliteCode, type Connection } from "./connection";
import { StoreStartError } from "./data-dir";
import { checkIntegrity, cutShort } from "./integrity";
import { createStoreTables, recordStart, storeCreated } from "./schema";
import { checkStoreFiles, DATABASE_FILE, readMarker, refuseWhileRestoring, SHM_FILE, storeGone, WAL_FILE, writeMarker } from "./store-files";

/**
 * How long the start waits for other processes on the same DATA_DIR. Replicas that start together
 * contend for its first writes (the journal mode, the layout), and SQLite answers some of those
 * BUSY at once, without its busy timeout: the start tries again meanwhile.
 */
const START_WAIT_MS = 30000;

/** What a SQLite error at the start means for an operator, in one line. */
export function startFault(dataDir: string, err: unknown): StoreStartError {
	if (err instanceof StoreStartError) return err;
	const file = path.join(dataDir, DATABASE_FILE);
	const message = err instanceof Error ? err.message : String(err);
	const code = (sqliteCode(err) ?? 0) & 0xff;
	if (code === SQLITE.CORRUPT || code === SQLITE.NOTADB) return damaged(dataDir, message);
	if (code === SQLITE.READONLY || code === SQLITE.CANTOPEN) {
		const uid = process.getuid?.() ?? "?";
		return new StoreStartError(
			`${file} cannot be written by this process (user ${uid}: ${message}): give the service's user write access to ${DATABASE_FILE}, ` +
				`${WAL_FILE} and ${SHM_FILE} in DATA_DIR (chown, chmod), or move DATA_DIR to a writable volume (docs/operations.md#start-up-faults)`,
		);
	}
	if (code === SQLITE.FULL || code === SQLITE.IOERR)
		return new StoreStartError(
			`${file} cannot be written (${message}): the disk of DATA_DIR is full or failing; ` +
				`free space or fix the volume and start again (docs/operations.md#start-up-faults)`,
		);
	if (code === SQLITE.BUSY || code === SQLITE.LOCKED)
		return new StoreStartError(
			`${file} stayed locked by another process for ${START_WAIT_MS / 1000} s (${message}): ` +
				`another program holds the store (a restore, a copy, sqlite3); let it finish and start again`,
		);
	return new StoreStartError(`${file} cannot be opened as the store (${message})`);
}

/** A damaged database file: restore it, or recover what SQLite can still read. */
function damaged(dataDir: string, what: string): StoreStartError {
	const file = path.join(dataDir, DATABASE_FILE);
	return new StoreStartError(
		`${file} is damaged (${what}): the service will not serve from it. To recover, restore the last backup (npm run restore -- <backup dir>), ` +
			`or recover what SQLite can still read of it into a new directory (npm run recover-store -- <new dir>; docs/operations.md#damaged-store)`,
	);
}

/** Steps 3 to 7 on a connection that is open. */
function checkOpened(conn: Connection, dataDir: string): void {
	refuseWhileRestoring(dataDir);
	const marker = readMarker(dataDir);
	const holdsStore = !!conn.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_ids'").get();
	if (marker && !holdsStore) throw storeGone(dataDir, marker, "holds no store");
	const problems = checkIntegrity(conn.db);
	if (problems.length) throw damaged(dataDir, `SQLite's integrity check: ${problems.slice(0, 3).join("; ")}`);
	createStoreTables(conn.db);
	recordStart(conn.db, new Date().toISOString());
	if (!marker) {
		conn.db.exec("PRAGMA wal_checkpoint(PASSIVE)");
		writeMarker(dataDir, storeCreated(conn.db));
	}
}

/** The writer's connection, on a store that passed every check. Throws StoreStartError. */
export function openForWriting(dataDir: string): Connection {
	try {
		checkStoreFiles(dataDir);
		const file = path.join(dataDir, DATABASE_FILE);
		const cut = cutShort(file);
		if (cut) throw damaged(dataDir, cut);
		const until = Date.now() + START_WAIT_MS;
		const pause = new Int32Array(new SharedArrayBuffer(4));
		for (let wait = 20; ; wait = Math.min(wait * 2, 500)) {
			let conn: Connection | undefined;
			try {
				conn = openConnection(file, "writer");
				checkOpened(conn, dataDir);
				return conn;
			} catch (err) {
				conn?.close();
				if (!isLockContention(err) || Date.now() + wait > until) throw err;
				// This thread only writes: waiting here blocks no request.
				Atomics.wait(pause, 0, 0, wait);
			}
		}
	} catch (err) {
		throw startFault(dataDir, err);
	}
}
