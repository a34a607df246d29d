/**
 * The embedded store's files in DATA_DIR and what they must say before SQLite opens them
 * (docs/architecture.md#embedded-store, docs/operations.md#damaged-store):
 *
 * - `store.sqlite`, with its write-ahead log `store.sqlite-wal` and index `store.sqlite-shm`.
 *   SQLite creates the log before the index when it opens, and removes the index before the log
 *   when the last connection closes cleanly, so an index without its log is never a state SQLite
 *   leaves: the log was lost (deleted, or not copied), and with it the writes since the last
 *   checkpoint. A log whose header does not check out would be ignored by SQLite just the same.
 * - `store.sqlite.marker`, written once the store exists: a store.sqlite that is missing or
 *   holds no store beside it is data that is gone, never a fresh start.
 * - `store.sqlite.restoring`, while a restore writes the directory (../backup/restore.ts).
 *
 * Each fault stops the start with a StoreStartError naming the file, what is wrong and how to
 * recover; nothing here changes a file.
 */
import fs from "fs";
import path from "path";
import { StoreStartError } from "./data-dir";

/** The database file in DATA_DIR; its `-wal` and `-shm` files sit beside it. */
export const DATABASE_FILE = "store.sqlite";
export const WAL_FILE = `${DATABASE_FILE}-wal`;
export const SHM_FILE = `${DATABASE_FILE}-shm`;
export const MARKER_FILE = `${DATABASE_FILE}.marker`;
export const RESTORING_FILE = `${DATABASE_FILE}.restoring`;

const RECOVERY = "docs/operations.md#damaged-store";
const restoreHint = "restore the last backup (npm run restore -- <backup dir>)";

interface Marker {
	created: string;
}

export function readMarker(dataDir: string): Marker | null {
	const file = path.join(dataDir, MARKER_FILE);
	if (!fs.existsSync(file)) return null;
	try {
		const marker = JSON.parse(fs.readFileSync(file, "utf8")) as Partial<Marker>;
		return { created: String(marker.created ?? "an unknown date") };
	} catch {
		return { created: "an unknown date" };
	}
}

/** Writes a small file whole or not at all: a temporary file synced, renamed into place, the directory synced. */
export function writeFileAtomically(file: string, text: string): void {
	const tmp = `${file}.${process.pid}.tmp`;
	const fd = fs.openSync(tmp, "w", 0o600);
	try {
		fs.writeSync(fd, text);
		fs.fsyncSync(fd);
	} finally {
		fs.closeSync(fd);
	}
	fs.renameSync(tmp, file);
	syncDirectory(path.dirname(file));
}

export function syncDirectory(dir: string): void {
	const fd = fs.openSync(dir, "r");
	try {
		fs.fsyncSync(fd);
	} finally {
		fs.closeSync(fd);
	}
}

/** Records that a store exists in dataDir (kept from then on; a restore writes its own). */
export function writeMarker(dataDir: string, created: string): void {
	const text = JSON.stringify({
		created,
		note:
			`A store was created in this directory: ${DATABASE_FILE} missing or empty beside this file is data lost, ` +
			`and the store will not start over it (${RECOVERY}).`,
	});
	writeFileAtomically(path.join(dataDir, MARKER_FILE), `${text}\n`);
}

export function refuseWhileRestoring(dataDir: string): void {
	if (fs.existsSync(path.join(dataDir, RESTORING_FILE)))
		throw new StoreStartError(
			`DATA_DIR=${dataDir} is being restored (${RESTORING_FILE} is there): a restore is under way or was cut short; ` +
				`let it finish, or run npm run restore -- <backup dir> again (docs/operations.md#restore)`,
		);
}

/** The data a marker says existed is gone. */
export function storeGone(dataDir: string, marker: Marker, what: string): StoreStartError {
	return new StoreStartError(
		`${path.join(dataDir, DATABASE_FILE)} ${what}, but ${MARKER_FILE} beside it says a store was created there on ${marker.created}: ` +
			`its data is gone (a lost or replaced file), and an empty store would start with a new root. To recover, ${restoreHint}; ` +
			`to start an empty store there on purpose, delete ${MARKER_FILE} (${RECOVERY})`,
	);
}

const WAL_MAGIC = [0x377f0682, 0x377f0683];
const WAL_HEADER_BYTES = 32;

/**
 * Whether a WAL header checks out: its magic number, and the checksum of its first 24 bytes in
 * the byte order the magic says (https://sqlite.org/fileformat2.html#walformat).
 */
function walHeaderValid(header: Buffer): boolean {
	if (header.length < WAL_HEADER_BYTES) return false;
	const magic = header.readUInt32BE(0);
	if (!WAL_MAGIC.includes(magic)) return false;
	const bigEndian = (magic & 1) === 1;
	const word = (at: number) => (bigEndian ? header.readUInt32BE(at) : header.readUInt32LE(at));
	let s0 = 0;
	let s1 = 0;
	for (let at = 0; at < 24; at += 8) {
		s0 = (s0 + word(at) + s1) >>> 0;
		s1 = (s1 + word(at + 4) + s0) >>> 0;
	}
	return s0 === header.readUInt32BE(24) && s1 === header.readUInt32BE(28);
}

function readHead(file: string, bytes: number): Buffer {
	const fd = fs.openSync(file, "r");
	try {
		const buf = Buffer.alloc(bytes);
		return buf.subarray(0, fs.readSync(fd, buf, 0, bytes, 0));
	} finally {
		fs.closeSync(fd);
	}
}

/**
 * The checks that need no SQLite, made before it opens (and may change) anything: a restore
 * under way, a store the marker says existed gone, a lost or damaged write-ahead log.
 */
export function checkStoreFiles(dataDir: string): void {
	refuseWhileRestoring(dataDir);
	const file = (name: string) => path.join(dataDir, name);
	const marker = readMarker(dataDir);
	const database = fs.statSync(file(DATABASE_FILE), { throwIfNoEntry: false });
	if (marker && !database) throw storeGone(dataDir, marker, "is missing");
	const wal = fs.statSync(file(WAL_FILE), { throwIfNoEntry: false });
	if (!wal && fs.existsSync(file(SHM_FILE)))
		throw new StoreStartError(
			`${file(WAL_FILE)} is missing while ${SHM_FILE} shows the store was not closed cleanly: the writes since its last checkpoint ` +
				`(at most about a second of them) were in that file. Put it back if a copy exists; otherwise ${restoreHint}, or, to go on ` +
				`with what ${DATABASE_FILE} holds, delete ${SHM_FILE} and start again (${RECOVERY})`,
		);
	// An empty log (a truncating checkpoint left it) holds nothing; anything else starts with a header.
	if (wal && wal.size > 0 && !walHeaderValid(readHead(file(WAL_FILE), WAL_HEADER_BYTES)))
		throw new StoreStartError(
			`${file(WAL_FILE)} is damaged (its header is not a write-ahead log's): SQLite would ignore it, and the writes since the ` +
				`last checkpoint with it. To recover, ${restoreHint}; or, to go on with what ${DATABASE_FILE} holds (every write up to ` +
				`its last checkpoint), move ${WAL_FILE} and ${SHM_FILE} out of DATA_DIR and start again (${RECOVERY})`,
		);
}
