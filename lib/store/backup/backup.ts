/**
 * `npm run backup -- <dir>` (docs/operations.md#backup): a backup of DATA_DIR while the service
 * runs and writes. The store is copied by SQLite's `VACUUM INTO`, which reads it in one read
 * transaction: a snapshot holding every write committed before it began (every write answered
 * before the backup began), none in part, whatever is written meanwhile. The other files are
 * copied around it, in two passes: artifacts are never rewritten in place (an upload gets a new
 * name, the old file is removed after), so the first pass, before the snapshot, keeps what a
 * replacement or an erase would remove meanwhile, and the second takes what came before the
 * snapshot. Traces only grow: a trace copied after the snapshot may hold more lines than the
 * snapshot's build knows of, never fewer. Then every artifact the snapshot's builds name is looked
 * for in the backup, and `backup.json` written last.
 */
import fs from "fs";
import path from "path";
import { DatabaseSync } from "node:sqlite";
import { ArtifactStore } from "../../builds/artifact-store";
import { quickCheck } from "../sqlite/integrity";
import { storeCreated } from "../sqlite/schema";
import { checkStoreFiles, DATABASE_FILE, syncDirectory, writeFileAtomically } from "../sqlite/store-files";
import { BackupError, collectionCounts, copySynced, dataFiles, MANIFEST_FILE, sha256File, type BackupManifest } from "./manifest";

const GENERATED_KEY = ".secrets-key";

/** Copies what `dataFiles` finds in `from` and `to` lacks; the paths copied. */
function copyFilesNotThere(from: string, to: string): string[] {
	const copied: string[] = [];
	for (const rel of dataFiles(from)) {
		if (fs.existsSync(path.join(to, rel))) continue;
		try {
			copySynced(path.join(from, rel), path.join(to, rel));
			copied.push(rel);
		} catch (err) {
			// Removed between the listing and the copy (an erase, a replaced upload): nothing to keep.
			if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
		}
	}
	return copied;
}

/** The artifacts files the snapshot's builds name, as paths under DATA_DIR. */
function namedArtifacts(db: DatabaseSync): string[] {
	if (!db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'builds'").get()) return [];
	const store = new ArtifactStore("artifacts", 0);
	const rows = db
		.prepare("SELECT id, json_extract(doc, '$.project_id') AS project, json_extract(doc, '$.artifacts.file') AS file FROM builds WHERE file IS NOT NULL")
		.all() as { id: number; project: number; file: string }[];
	return rows.map(r => path.join("artifacts", store.artifactKey(r.project, r.id, r.file)));
}

export interface BackupOptions {
	/** SECRETS_KEY is set: the key is not in DATA_DIR, and the backup says it must be kept apart. */
	secretsKeyFromEnv: boolean;
	/**
	 * The bucket of ARTIFACTS_STORE=s3: artifacts and traces are there, not under DATA_DIR, so the
	 * backup does not look for them and says where they are (docs/operations.md#backup).
	 */
	artifactsBucket?: string;
}

/** Backs DATA_DIR up into `target` (a new or empty directory); throws BackupError. */
export function backupDataDir(dataDir: string, target: string, opts: BackupOptions): BackupManifest {
	const file = path.join(dataDir, DATABASE_FILE);
	if (!fs.existsSync(file)) throw new BackupError(`${file} does not exist: DATA_DIR=${dataDir} holds no store to back up`);
	// A store whose log is lost or damaged would be copied without what it lost: said first, as the start says it.
	checkStoreFiles(dataDir);
	if (fs.existsSync(target) && fs.readdirSync(target).length) throw new BackupError(`${target} is not empty: a backup goes into a new or empty directory`);
	if (path.resolve(target).startsWith(path.resolve(dataDir) + path.sep)) throw new BackupError(`${target} is inside DATA_DIR: put backups elsewhere`);
	fs.mkdirSync(target, { recursive: true });

	copyFilesNotThere(dataDir, target);
	const snapshot = path.join(target, DATABASE_FILE);
	const partial = `${snapshot}.partial.tmp`;
	const snapshotAt = new Date().toISOString();
	// Read only, on a connection that may write: closing last, it leaves no log behind (a read-only one would).
	const source = new DatabaseSync(file, { timeout: 10000 });
	try {
		source.prepare("VACUUM INTO ?").run(partial);
	} catch (err) {
		fs.rmSync(partial, { force: true });
		throw new BackupError(`${file} could not be read whole (${(err as Error).message}): if it is damaged, see docs/operations.md#damaged-store`);
	} finally {
		source.close();
	}
	copySynced(partial, snapshot);
	fs.rmSync(partial);
	copyFilesNotThere(dataDir, target);

	const db = new DatabaseSync(snapshot, { readOnly: true });
	let manifest: BackupManifest;
	try {
		const problems = quickCheck(db);
		if (problems.length)
			throw new BackupError(`the snapshot of ${file} is damaged (SQLite's integrity check: ${problems.slice(0, 3).join("; ")}): so is the store`);
		const files = dataFiles(target);
		const held = new Set(files);
		manifest = {
			format: 1,
			snapshotAt,
			from: dataDir,
			store: {
				file: DATABASE_FILE,
				bytes: fs.statSync(snapshot).size,
				sha256: sha256File(snapshot),
				created: storeCreated(db),
				collections: collectionCounts(db),
			},
			files: files.map(rel => ({ path: rel, bytes: fs.statSync(path.join(target, rel)).size })),
			secretsKey: held.has(GENERATED_KEY)
				? `in ${GENERATED_KEY} (generated; a restore brings it back)`
				: opts.secretsKeyFromEnv
					? "SECRETS_KEY: not in DATA_DIR; keep it with this backup, a restore needs the same one"
					: "none found",
			missingArtifacts: opts.artifactsBucket ? [] : namedArtifacts(db).filter(rel => !held.has(rel)),
			...(opts.artifactsBucket ? { artifactsBucket: opts.artifactsBucket } : {}),
		};
	} finally {
		db.close();
	}
	writeFileAtomically(path.join(target, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
	syncDirectory(target);
	return manifest;
}
