/**
 * `npm run recover-store -- <new dir>` (docs/operations.md#damaged-store): what can still be read of
 * a damaged store, written into a new DATA_DIR. Each collection is read in id order from its first
 * row until a damaged page stops the read, then from its last row backwards until one stops it
 * again: the rows between are lost and said so, by id range. The store's own tables are read
 * whole where they can be. Every id counter is kept at least as high as the highest id read, so no
 * id is handed out twice; the counts are made again by the services when they start. The other
 * files of DATA_DIR are copied beside it. The damaged store is only read (a service cannot run
 * on it: its start refuses it).
 */
import fs from "fs";
import path from "path";
import { DatabaseSync } from "node:sqlite";
import { copySynced, dataFiles } from "../backup/manifest";
import { prepareDataDir } from "./data-dir";
import { holdExclusively } from "./exclusive";
import { ensureCollection, IDS_TABLE, IMPORTS_TABLE, isCollectionTable, storeValue, setStoreValue, tableOf } from "./schema";
import { DATABASE_FILE } from "./store-files";
import { openForWriting } from "./writer-start";

export interface SalvageReport {
	collections: { name: string; rows: number; lost: string | null }[];
	/** The store's own tables that could not be read (their content is made again, or lost). */
	unreadable: string[];
	files: number;
}

/** Rows of a collection from one end, one at a time, until a read fails: the rows, and whether it reached the other end. */
function readFrom(db: DatabaseSync, table: string, order: "ASC" | "DESC", beyond: number): { rows: { id: number; doc: string }[]; whole: boolean } {
	const rows: { id: number; doc: string }[] = [];
	const all = db.prepare(`SELECT id, doc FROM ${table} WHERE id ${order === "ASC" ? ">" : "<"} ? ORDER BY id ${order}`);
	try {
		for (const row of all.iterate(beyond) as Iterable<{ id: number; doc: string }>) rows.push(row);
		return { rows, whole: true };
	} catch {
		return { rows, whole: false };
	}
}

export function salvageStore(dataDir: string, target: string): SalvageReport {
	if (!fs.existsSync(path.join(dataDir, DATABASE_FILE))) throw new Error(`${path.join(dataDir, DATABASE_FILE)} does not exist: nothing to recover`);
	if (fs.existsSync(target) && fs.readdirSync(target).length) throw new Error(`${target} is not empty: recover into a new or empty directory`);
	prepareDataDir(target);
	const from = new DatabaseSync(path.join(dataDir, DATABASE_FILE), { readOnly: true });
	openForWriting(target).close();
	const into = holdExclusively(target, "recovering into it")!;
	const report: SalvageReport = { collections: [], unreadable: [], files: 0 };
	try {
		const to = into.db;
		const tables = (from.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]).map(r => r.name);
		const highest: Record<string, number> = {};
		for (const name of tables.filter(isCollectionTable)) {
			const table = tableOf(name);
			const forward = readFrom(from, table, "ASC", 0);
			const reached = forward.rows.at(-1)?.id ?? 0;
			const backward = forward.whole ? { rows: [], whole: true } : readFrom(from, table, "DESC", Number.MAX_SAFE_INTEGER);
			const rows = [...forward.rows, ...backward.rows.filter(r => r.id > reached).reverse()];
			to.exec("BEGIN IMMEDIATE");
			ensureCollection(to, name, []);
			const insert = to.prepare(`INSERT INTO ${table} (id, doc) VALUES (?, ?)`);
			for (const r of rows) insert.run(r.id, r.doc);
			to.exec("COMMIT");
			highest[name] = rows.at(-1)?.id ?? 0;
			const resumedAt = rows.find(r => r.id > reached)?.id;
			const lost = forward.whole ? null : `the documents with ids after ${reached}${resumedAt ? ` and before ${resumedAt}` : ""}`;
			report.collections.push({ name, rows: rows.length, lost });
		}
		to.exec("BEGIN IMMEDIATE");
		const counter = to.prepare(`INSERT INTO ${IDS_TABLE} (name, seq) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET seq = max(seq, excluded.seq)`);
		if (tables.includes(IDS_TABLE))
			try {
				for (const { name, seq } of from.prepare(`SELECT name, seq FROM ${IDS_TABLE}`).all() as { name: string; seq: number }[]) counter.run(name, seq);
			} catch {
				report.unreadable.push(IDS_TABLE);
			}
		for (const [name, id] of Object.entries(highest)) counter.run(name, id);
		if (tables.includes(IMPORTS_TABLE))
			try {
				const imports = from.prepare(`SELECT collection, file, documents, at FROM ${IMPORTS_TABLE}`).all() as Record<string, string | number>[];
				const record = to.prepare(`INSERT OR REPLACE INTO ${IMPORTS_TABLE} (collection, file, documents, at) VALUES (?, ?, ?, ?)`);
				for (const r of imports) record.run(r.collection, r.file, r.documents, r.at);
			} catch {
				report.unreadable.push(IMPORTS_TABLE);
			}
		if (tables.includes("_store"))
			try {
				const created = storeValue(from, "created");
				if (created) setStoreValue(to, "created", created);
			} catch {
				report.unreadable.push("_store");
			}
		to.exec("COMMIT");
	} finally {
		into.release();
		from.close();
	}
	for (const rel of dataFiles(dataDir)) copySynced(path.join(dataDir, rel), path.join(target, rel));
	report.files = dataFiles(dataDir).length;
	return report;
}
