/**
 * The embedded store as a copy's source or target (./copy-store.ts), held for the copy alone
 * (SQLite's lock, ../sqlite/exclusive.ts): a service writing meanwhile would leave the two sides
 * apart, so the copy is refused while one runs, and no service starts until it is done. Its id
 * counters are the `_ids` table; a collection made here gets its table only: the services make
 * its indexes and counts when they start on it. `clear` moves the store aside, never deletes it.
 */
import fs from "fs";
import path from "path";
import type { DatabaseSync } from "node:sqlite";
import type { Doc } from "../types";
import { REPLACED_PREFIX } from "../backup/manifest";
import { prepareDataDir } from "../sqlite/data-dir";
import { holdExclusively, type ExclusiveStore } from "../sqlite/exclusive";
import { ensureCollection, IDS_TABLE, isCollectionTable, setStoreValue, storeCreated, storeValue, tableOf } from "../sqlite/schema";
import { DATABASE_FILE, MARKER_FILE, syncDirectory } from "../sqlite/store-files";
import { openForWriting } from "../sqlite/writer-start";
import type { CopyRecord, StoreSide } from "./copy-store";

const COPY_KEY = "copy";

/** Opens the store in dataDir for this program alone; a target's is made, as a start would, when missing. */
function hold(dataDir: string, purpose: string, role: "source" | "target"): ExclusiveStore {
	prepareDataDir(dataDir);
	if (!fs.existsSync(path.join(dataDir, DATABASE_FILE))) {
		if (role === "source") throw new Error(`${path.join(dataDir, DATABASE_FILE)} does not exist: DATA_DIR=${dataDir} holds no store to copy`);
		openForWriting(dataDir).close();
	}
	return holdExclusively(dataDir, purpose)!;
}

function inTransaction(db: DatabaseSync, run: () => void): void {
	db.exec("BEGIN IMMEDIATE");
	try {
		run();
		db.exec("COMMIT");
	} catch (err) {
		if (db.isTransaction) db.exec("ROLLBACK");
		throw err;
	}
}

export function sqliteSide(dataDir: string, purpose: string, role: "source" | "target"): StoreSide {
	let store = hold(dataDir, purpose, role);
	const db = () => store.db;
	const tables = () =>
		(db().prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[])
			.map(r => r.name)
			.filter(isCollectionTable);
	const highestId = (name: string) =>
		tables().includes(name)
			? ((
					db()
						.prepare(`SELECT max(id) AS id FROM ${tableOf(name)}`)
						.get() as { id: number | null }
				).id ?? 0)
			: 0;
	return {
		where: `DATA_DIR=${dataDir}`,
		identity: () => Promise.resolve(`embedded store ${path.join(dataDir, DATABASE_FILE)} created ${storeCreated(db())}`),
		collections: () => Promise.resolve(tables()),
		count: name =>
			Promise.resolve(
				(
					db()
						.prepare(`SELECT count(*) AS n FROM ${tableOf(name)}`)
						.get() as { n: number }
				).n,
			),
		documents(name, afterId, limit) {
			if (!tables().includes(name)) return Promise.resolve([]);
			const rows = db()
				.prepare(`SELECT doc FROM ${tableOf(name)} WHERE id > ? ORDER BY id LIMIT ?`)
				.all(afterId, limit) as { doc: string }[];
			return Promise.resolve(rows.map(r => JSON.parse(r.doc) as Doc));
		},
		idCounters() {
			const counters: Record<string, number> = {};
			for (const { name, seq } of db().prepare(`SELECT name, seq FROM ${IDS_TABLE}`).all() as { name: string; seq: number }[]) counters[name] = seq;
			for (const name of tables()) counters[name] = Math.max(counters[name] ?? 0, highestId(name));
			return Promise.resolve(counters);
		},
		holdsData: () => Promise.resolve(tables().filter(name => highestId(name) > 0)),
		copyRecord() {
			const text = storeValue(db(), COPY_KEY);
			return Promise.resolve(text ? (JSON.parse(text) as CopyRecord) : null);
		},
		writeCopyRecord(record) {
			inTransaction(db(), () => setStoreValue(db(), COPY_KEY, JSON.stringify(record)));
			return Promise.resolve();
		},
		clear() {
			store.release();
			const aside = path.join(dataDir, `${REPLACED_PREFIX}${new Date().toISOString().replace(/[:.]/g, "-")}`);
			fs.mkdirSync(aside);
			for (const name of [DATABASE_FILE, MARKER_FILE]) fs.renameSync(path.join(dataDir, name), path.join(aside, name));
			syncDirectory(dataDir);
			store = hold(dataDir, purpose, role);
			return Promise.resolve();
		},
		highestId: name => Promise.resolve(highestId(name)),
		insert(name, docs) {
			if (!tables().includes(name)) inTransaction(db(), () => ensureCollection(db(), name, []));
			inTransaction(db(), () => {
				const insert = db().prepare(`INSERT INTO ${tableOf(name)} (id, doc) VALUES (?, ?)`);
				for (const doc of docs) insert.run(doc.id as number, JSON.stringify(doc));
			});
			return Promise.resolve();
		},
		setIdCounter(name, last) {
			inTransaction(db(), () =>
				db()
					.prepare(`INSERT INTO ${IDS_TABLE} (name, seq) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET seq = max(seq, excluded.seq)`)
					.run(name, last),
			);
			return Promise.resolve();
		},
		close() {
			store.release();
			return Promise.resolve();
		},
	};
}
