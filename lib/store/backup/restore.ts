/**
 * `npm run restore -- <backup dir>` (docs/operations.md#restore): DATA_DIR made what a backup
 * holds. The backup is checked whole first (./manifest.ts verifyBackup). DATA_DIR is refused
 * while any process has its store open (SQLite's lock, ../sqlite/exclusive.ts), and when it holds
 * anything unless told (`--force`: what it held is moved, never deleted, into
 * DATA_DIR/replaced-<time>/). While the lock is held the directory is marked
 * (`store.sqlite.restoring`): from then on a service refuses to start there until the restore
 * has finished; a restore cut short is finished by running it again.
 */
import fs from "fs";
import path from "path";
import { prepareDataDir } from "../sqlite/data-dir";
import { holdExclusively } from "../sqlite/exclusive";
import { DATABASE_FILE, RESTORING_FILE, syncDirectory, writeFileAtomically, writeMarker } from "../sqlite/store-files";
import { BackupError, copySynced, REPLACED_PREFIX, sha256File, verifyBackup, type BackupManifest } from "./manifest";

export interface RestoreReport {
	manifest: BackupManifest;
	/** Where what DATA_DIR held went (with --force), or null. */
	replaced: string | null;
}

/** DATA_DIR's entries that a restore would overwrite (a restore cut short left only its own). */
function heldEntries(dataDir: string): string[] {
	return fs.readdirSync(dataDir).filter(name => name !== RESTORING_FILE && !name.startsWith(REPLACED_PREFIX));
}

export function restoreDataDir(backupDir: string, dataDir: string, opts: { force: boolean }): RestoreReport {
	if (path.resolve(backupDir) === path.resolve(dataDir)) throw new BackupError(`${backupDir} is DATA_DIR itself`);
	const manifest = verifyBackup(backupDir);
	prepareDataDir(dataDir);
	const restoring = path.join(dataDir, RESTORING_FILE);
	const resuming = fs.existsSync(restoring);
	const lock = holdExclusively(dataDir, "restoring into it");
	try {
		const held = heldEntries(dataDir);
		if (held.length && !opts.force && !resuming)
			throw new BackupError(
				`DATA_DIR=${dataDir} is not empty (${held.slice(0, 5).join(", ")}${held.length > 5 ? ", …" : ""}): restore into an empty directory, ` +
					`or add --force to move what it holds into DATA_DIR/${REPLACED_PREFIX}<time>/ first`,
			);
		writeFileAtomically(restoring, `${JSON.stringify({ from: path.resolve(backupDir), at: new Date().toISOString() })}\n`);
	} finally {
		lock?.release();
	}

	// Listed once the lock is let go: the lock's own log is gone by then.
	const held = heldEntries(dataDir);
	let replaced: string | null = null;
	if (held.length) {
		// A restore cut short left part of the backup: moved aside too, then the whole backup copied.
		replaced = path.join(dataDir, `${REPLACED_PREFIX}${new Date().toISOString().replace(/[:.]/g, "-")}`);
		fs.mkdirSync(replaced);
		for (const name of held) fs.renameSync(path.join(dataDir, name), path.join(replaced, name));
		syncDirectory(dataDir);
	}
	for (const f of manifest.files) copySynced(path.join(backupDir, f.path), path.join(dataDir, f.path));
	const store = path.join(dataDir, DATABASE_FILE);
	const partial = path.join(dataDir, `.restore-${DATABASE_FILE}.tmp`);
	copySynced(path.join(backupDir, manifest.store.file), partial);
	if (sha256File(partial) !== manifest.store.sha256)
		throw new BackupError(`the copy of ${manifest.store.file} in ${dataDir} is not the backup's: run the restore again`);
	fs.renameSync(partial, store);
	writeMarker(dataDir, manifest.store.created);
	fs.rmSync(restoring);
	syncDirectory(dataDir);
	return { manifest, replaced };
}
