/**
 * One embedded store per DATA_DIR and process (DATA_DIR/store.sqlite), shared by the collections
 * of every service in the process: the writer thread and the read connection, opened by the
 * first collection that connects and closed after the last one disconnects. Other processes on
 * the same DATA_DIR open their own, and SQLite's locks keep them apart
 * (docs/architecture.md#embedded-store). A DATA_DIR that cannot be made, written or opened stops
 * the start with a message naming it.
 */
import fs from "fs";
import path from "path";
import type { Logger } from "moleculer";
import { DATABASE_FILE, openConnection, type Connection } from "./connection";
import { StoreStartError, Writer } from "./writer";

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

function failure(dataDir: string, what: string, err: unknown): StoreStartError {
	const e = err as NodeJS.ErrnoException;
	return new StoreStartError(
		`DATA_DIR=${dataDir} ${what} (${e.code ?? e.message}): the embedded store keeps its data there; point DATA_DIR at a writable directory`,
	);
}

/** Why a directory could not be made: a recursive mkdir says ENOENT where its nearest parent is read-only. */
function whyNotMade(dataDir: string, err: unknown): unknown {
	if ((err as NodeJS.ErrnoException).code !== "ENOENT") return err;
	let parent = path.dirname(dataDir);
	while (!fs.existsSync(parent) && path.dirname(parent) !== parent) parent = path.dirname(parent);
	try {
		fs.accessSync(parent, fs.constants.W_OK);
		return err;
	} catch (denied) {
		return denied;
	}
}

async function open(dataDir: string, logger: Logger): Promise<SqliteStore> {
	try {
		fs.mkdirSync(dataDir, { recursive: true });
	} catch (err) {
		throw failure(dataDir, "cannot be created", whyNotMade(dataDir, err));
	}
	try {
		fs.accessSync(dataDir, fs.constants.R_OK | fs.constants.W_OK);
	} catch (err) {
		throw failure(dataDir, "is not writable", err);
	}
	const file = path.join(dataDir, DATABASE_FILE);
	const writer = new Writer(file, logger);
	try {
		await writer.start();
	} catch (err) {
		await writer.close();
		throw failure(dataDir, `cannot hold the store ${DATABASE_FILE}`, err);
	}
	try {
		return { dataDir, file, reader: openConnection(file, "reader"), writer };
	} catch (err) {
		await writer.close();
		throw failure(dataDir, `cannot hold the store ${DATABASE_FILE}`, err);
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
	await store.writer.close();
	store.reader.close();
}
