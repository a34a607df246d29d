/**
 * One embedded store per DATA_DIR and process (DATA_DIR/store.sqlite), shared by the collections
 * of every service in the process: the writer thread and the read connection, opened by the
 * first collection that connects and closed after the last one disconnects. Other processes on
 * the same DATA_DIR open their own, and SQLite's locks keep them apart
 * (docs/architecture.md#embedded-store). A DATA_DIR that cannot be made or written, or a store
 * that is damaged, gone or cannot take writes, stops the start with a message naming the file
 * (./data-dir.ts, ./writer-start.ts). After a clean stop the database file alone holds every record.
 */
import path from "path";
import type { Logger } from "moleculer";
import { openConnection, type Connection } from "./connection";
import { prepareDataDir } from "./data-dir";
import { DATABASE_FILE } from "./store-files";
import { startFault } from "./writer-start";
import { Writer } from "./writer";

export interface SqliteStore {
	readonly dataDir: string;
	readonly file: string;
	readonly reader: Connection;
	readonly writer: Writer;
}

interface Opened {
	store: Promise<SqliteStore>;
	users: number;
}

const opened = new Map<string, Opened>();

async function open(dataDir: string, logger: Logger): Promise<SqliteStore> {
	prepareDataDir(dataDir);
	const file = path.join(dataDir, DATABASE_FILE);
	// The writer's start checks the files and the database (./writer-start.ts) before anything reads them.
	const writer = new Writer(dataDir, logger);
	try {
		await writer.start();
	} catch (err) {
		await writer.close();
		throw err;
	}
	try {
		return { dataDir, file, reader: openConnection(file, "reader"), writer };
	} catch (err) {
		await writer.close();
		throw startFault(dataDir, err);
	}
}

/** The process's store for this DATA_DIR, opened on first use. */
export async function acquireStore(dataDir: string, logger: Logger): Promise<SqliteStore> {
	const key = path.resolve(dataDir);
	let entry = opened.get(key);
	if (!entry) {
		entry = { store: open(key, logger), users: 0 };
		opened.set(key, entry);
		entry.store.catch(() => opened.delete(key));
	}
	entry.users++;
	return entry.store;
}

/** Closes the store once its last user is done with it. */
export async function releaseStore(store: SqliteStore): Promise<void> {
	const entry = opened.get(store.dataDir);
	if (!entry || --entry.users > 0) return;
	opened.delete(store.dataDir);
	// The reader first: the writer's connection, closing last, leaves every record in the database file.
	store.reader.close();
	await store.writer.close();
}
