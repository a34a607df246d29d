/**
 * The store as data, to prove that a request changed nothing (or something); and its files as a
 * crash leaves them, or as a copy of the database file alone would.
 */
import crypto from "crypto";
import fs from "fs";
import os from "os";
import path from "path";
import { DatabaseSync } from "node:sqlite";
import { DATABASE_FILE } from "../../lib/store/sqlite/store-files";

/** Every collection's documents in the embedded store, in id order (read-only, beside the running service). */
function storeText(file: string): string {
	const db = new DatabaseSync(file, { readOnly: true, timeout: 5000 });
	try {
		// Collections only: not the store's own tables (`_ids`, `_imports`) nor the counts derived from them.
		const names = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[];
		const tables = names.filter(({ name }) => !name.startsWith("_") && !name.endsWith("__counts"));
		return tables
			.map(({ name }) => `${name}\n${(db.prepare(`SELECT doc FROM "${name}" ORDER BY id`).all() as { doc: string }[]).map(r => r.doc).join("\n")}\n`)
			.join("");
	} finally {
		db.close();
	}
}

/**
 * The data in DATA_DIR as a digest of its meaning: the embedded store's documents (not its file
 * pages, which checkpoints rewrite), other files by path, size and content. Id counters (the
 * `_ids` table: a refused duplicate may burn an id, which is never reused and never shown)
 * and the mail spool (written later by workers for events accepted earlier) are left out.
 */
export function storeDigest(dataDir: string): string {
	const hash = crypto.createHash("sha256");
	const store = path.join(dataDir, DATABASE_FILE);
	if (fs.existsSync(store)) hash.update(storeText(store));
	const walk = (dir: string) => {
		if (!fs.existsSync(dir)) return;
		for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
			const abs = path.join(dir, entry.name);
			const rel = path.relative(dataDir, abs);
			if (entry.isDirectory()) {
				if (rel !== "mail") walk(abs);
			} else if (!entry.name.startsWith(DATABASE_FILE)) {
				hash.update(`${rel}\n`).update(fs.readFileSync(abs)).update("\n");
			}
		}
	};
	walk(dataDir);
	return hash.digest("hex");
}

/**
 * A copy of DATA_DIR's files taken while the store has them open (database, write-ahead log,
 * index): what a kill -9 or a power loss leaves on the disk, in a new directory.
 */
export function crashImage(dataDir: string): string {
	const image = fs.mkdtempSync(path.join(os.tmpdir(), "glv3-crash-image-"));
	fs.cpSync(dataDir, image, { recursive: true });
	return image;
}

/** A collection's documents as the database file alone holds them (copied without its log), in id order. */
export function databaseFileAlone(dataDir: string, collection: string): Record<string, unknown>[] {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "glv3-file-alone-"));
	const copy = path.join(dir, DATABASE_FILE);
	fs.copyFileSync(path.join(dataDir, DATABASE_FILE), copy);
	const db = new DatabaseSync(copy);
	try {
		const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(collection);
		if (!table) return [];
		return (db.prepare(`SELECT doc FROM "${collection}" ORDER BY id`).all() as { doc: string }[]).map(r => JSON.parse(r.doc) as Record<string, unknown>);
	} finally {
		db.close();
		fs.rmSync(dir, { recursive: true, force: true });
	}
}
