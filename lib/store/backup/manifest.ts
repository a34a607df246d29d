/**
 * What a backup directory holds (docs/operations.md#backup): the store as one consistent
 * snapshot (`store.sqlite`), the other files of DATA_DIR (artifacts and traces, the generated
 * secrets key and its check value, the mail spool, NeDB files kept aside) under their own paths,
 * and `backup.json`, written last, listing every file with its size and the snapshot's SHA-256.
 * A directory without it is not a complete backup. A backup directory is a DATA_DIR itself.
 */
import crypto from "crypto";
import fs from "fs";
import path from "path";
import { DatabaseSync } from "node:sqlite";
import { quickCheck } from "../sqlite/integrity";
import { isCollectionTable } from "../sqlite/schema";
import { DATABASE_FILE } from "../sqlite/store-files";

export const MANIFEST_FILE = "backup.json";
/** Where a restore with --force moves what DATA_DIR held (inside it, so that a mounted volume works too). */
export const REPLACED_PREFIX = "replaced-";
const UPLOADS_IN_PROGRESS = path.join("artifacts", ".tmp");

export interface BackupManifest {
	format: 1;
	/** When the snapshot was taken: the backup holds every write answered before the backup began. */
	snapshotAt: string;
	from: string;
	store: { file: string; bytes: number; sha256: string; created: string; collections: Record<string, number> };
	/** Every other file, relative to the directory, with its size. */
	files: { path: string; bytes: number }[];
	/** Where the secrets key is: in the backup (`.secrets-key`), or SECRETS_KEY, kept apart from it. */
	secretsKey: string;
	/** Artifacts the snapshot's builds name that were erased or replaced before they could be copied. */
	missingArtifacts: string[];
	/** The bucket that holds artifacts and traces (ARTIFACTS_STORE=s3): not in the backup, backed up on the S3 side. */
	artifactsBucket?: string;
}

/**
 * The files of a DATA_DIR that travel beside the store, relative and in order: everything but the
 * store's own files (the snapshot stands for them), uploads in progress, the start's write
 * probes, temporary files, a manifest and what an earlier restore moved aside.
 */
export function dataFiles(dir: string): string[] {
	const found: string[] = [];
	const walk = (relative: string) => {
		for (const entry of fs.readdirSync(path.join(dir, relative), { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
			const rel = path.join(relative, entry.name);
			if (!relative && (entry.name.startsWith(DATABASE_FILE) || entry.name === MANIFEST_FILE || entry.name.startsWith(REPLACED_PREFIX))) continue;
			if (entry.name.startsWith(".write-probe-") || entry.name.endsWith(".tmp") || rel === UPLOADS_IN_PROGRESS) continue;
			if (entry.isDirectory()) walk(rel);
			else if (entry.isFile()) found.push(rel);
		}
	};
	walk("");
	return found;
}

export function sha256File(file: string): string {
	const hash = crypto.createHash("sha256");
	const fd = fs.openSync(file, "r");
	try {
		const buf = Buffer.alloc(1 << 20);
		for (let n; (n = fs.readSync(fd, buf, 0, buf.length, null)) > 0;) hash.update(buf.subarray(0, n));
	} finally {
		fs.closeSync(fd);
	}
	return hash.digest("hex");
}

/** Copies a file and syncs the copy, making its directory first. */
export function copySynced(from: string, to: string): void {
	fs.mkdirSync(path.dirname(to), { recursive: true });
	fs.copyFileSync(from, to);
	const fd = fs.openSync(to, "r+");
	try {
		fs.fsyncSync(fd);
	} finally {
		fs.closeSync(fd);
	}
}

/** Each collection of a store file and how many documents it holds. */
export function collectionCounts(db: DatabaseSync): Record<string, number> {
	const names = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]).map(r => r.name);
	return Object.fromEntries(
		names.filter(isCollectionTable).map(name => [name, (db.prepare(`SELECT count(*) AS n FROM "${name}"`).get() as { n: number }).n]),
	);
}

export class BackupError extends Error {
	constructor(message: string) {
		super(message);
		this.name = "BackupError";
		this.stack = `${this.name}: ${message}`;
	}
}

/**
 * A backup directory checked whole before anything is restored from it: its manifest, every file
 * at its size, the snapshot's digest and SQLite's integrity check of it.
 */
export function verifyBackup(dir: string): BackupManifest {
	const manifestFile = path.join(dir, MANIFEST_FILE);
	if (!fs.existsSync(manifestFile)) throw new BackupError(`${dir} is not a complete backup: it has no ${MANIFEST_FILE} (a backup writes it last)`);
	const manifest = JSON.parse(fs.readFileSync(manifestFile, "utf8")) as BackupManifest;
	if (manifest.format !== 1) throw new BackupError(`${manifestFile}: a backup format this version does not know (${String(manifest.format)})`);
	const store = path.join(dir, manifest.store.file);
	const wrong: string[] = [];
	for (const f of [{ path: manifest.store.file, bytes: manifest.store.bytes }, ...manifest.files]) {
		const size = fs.statSync(path.join(dir, f.path), { throwIfNoEntry: false })?.size;
		if (size !== f.bytes) wrong.push(`${f.path} (${size === undefined ? "missing" : `${size} bytes`}, ${f.bytes} listed)`);
	}
	if (wrong.length) throw new BackupError(`${dir} is damaged: ${wrong.slice(0, 5).join(", ")}${wrong.length > 5 ? ` and ${wrong.length - 5} more` : ""}`);
	if (sha256File(store) !== manifest.store.sha256) throw new BackupError(`${store} is damaged: its SHA-256 is not the one ${MANIFEST_FILE} lists`);
	const db = new DatabaseSync(store, { readOnly: true });
	try {
		const problems = quickCheck(db);
		if (problems.length) throw new BackupError(`${store} is damaged (SQLite's integrity check: ${problems.slice(0, 3).join("; ")})`);
	} finally {
		db.close();
	}
	return manifest;
}
