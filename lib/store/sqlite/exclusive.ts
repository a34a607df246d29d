/**
 * The store held by one program alone (a restore, a copy): SQLite's own lock, which every
 * process that has the store open holds a share of for as long as it has it open, so it tells
 * across processes (and containers on one host) whether a service uses the directory. While it
 * is held no service can open the store (its start waits, then stops naming the lock).
 */
import path from "path";
import fs from "fs";
import { DatabaseSync } from "node:sqlite";
import { isLockContention } from "./connection";
import { StoreStartError } from "./data-dir";
import { DATABASE_FILE, SHM_FILE } from "./store-files";

export interface ExclusiveStore {
	/** The connection that holds the lock (it reads the store too). */
	db: DatabaseSync;
	/** Lets go: the log is checkpointed into the database file and removed, as a clean stop leaves it. */
	release(): void;
}

/**
 * Takes the store in dataDir for this program alone; throws StoreStartError when a process has
 * it open. Null when there is no database file.
 */
export function holdExclusively(dataDir: string, purpose: string): ExclusiveStore | null {
	const file = path.join(dataDir, DATABASE_FILE);
	if (!fs.existsSync(file)) return null;
	const db = new DatabaseSync(file, { timeout: 0 });
	try {
		// Exclusive locking mode keeps the lock once taken, and keeps the log's index in this process.
		db.exec("PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; COMMIT;");
	} catch (err) {
		db.close();
		if (isLockContention(err))
			throw new StoreStartError(
				`${file} is open in another process: a service (or another tool) uses DATA_DIR=${dataDir}; stop every process on it before ${purpose}`,
			);
		throw err;
	}
	return {
		db,
		release() {
			// An index left by a crashed process is nobody's now (this one never used it): removed, so
			// that the directory is as a clean stop leaves it (./store-files.ts reads an index without its log as a lost log).
			fs.rmSync(path.join(dataDir, SHM_FILE), { force: true });
			db.close();
		},
	};
}
