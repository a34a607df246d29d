/**
 * A collection of the embedded store (docs/architecture.md#embedded-store): reads on the event
 * loop through the read connection (indexed, and seeing only commits that are on the disk), every
 * write through the writer thread, answered once its transaction is synced.
 */
import fs from "fs";
import path from "path";
import type { Logger } from "moleculer";
import { unavailable } from "../../api/errors";
import type { CollectionOptions, CounterMove, Doc, FindOptions } from "../types";
import { isStorageFault } from "./connection";
import { orderSql, pathSql, whereSql, type SqlValue } from "./query";
import { countsTableOf, tableOf } from "./schema";
import { acquireStore, releaseStore, type SqliteStore } from "./store";
import type { NedbImport } from "./nedb-import";

/** Where imported NeDB files are kept, in DATA_DIR. */
export const NEDB_IMPORTED_DIR = "nedb-imported";

/** A read, settled as a promise; one that the storage cannot serve now is a 503, like a write. */
function reading<R>(read: () => R): Promise<R> {
	try {
		return Promise.resolve(read());
	} catch (err) {
		return Promise.reject(isStorageFault(err) ? unavailable() : (err as Error));
	}
}

export class SqliteCollection<T extends Doc = Doc> {
	private store?: SqliteStore;
	private readonly table: string;
	/** The fields whose values the store counts (IndexSpec.counted). */
	private readonly counted: Set<string>;
	/** Records and the counters they move change in one transaction (insertWithCounter). */
	readonly transactional = true;

	constructor(
		readonly name: string,
		private readonly options: CollectionOptions,
		private readonly dataDir: string,
	) {
		this.table = tableOf(name);
		this.counted = new Set((options.indexes ?? []).filter(ix => ix.counted).map(ix => Object.keys(ix.fields)[0]));
	}

	async connect(logger: Logger): Promise<void> {
		const store = await acquireStore(this.dataDir, logger);
		try {
			const nedb = this.nedbFiles();
			const imported = await store.writer.request({ op: "ensure", collection: this.name, indexes: this.options.indexes ?? [], nedb });
			if (nedb && imported) this.setAside(nedb, imported, logger);
		} catch (err) {
			await releaseStore(store);
			throw err;
		}
		this.store = store;
	}

	/** The NeDB files of this collection left in DATA_DIR by an earlier version, if any (./nedb-import.ts). */
	private nedbFiles(): NedbImport | undefined {
		const file = path.join(this.dataDir, `${this.name}.db`);
		// NeDB rewrites a file through `<file>~`; a crash in between leaves only that one.
		const found = [file, `${file}~`].find(f => fs.existsSync(f));
		if (!found) return undefined;
		const conflictsFile = path.join(this.dataDir, NEDB_IMPORTED_DIR, `${this.name}.conflicts.db`);
		return { file: found, countersFile: path.join(this.dataDir, `${this.name}.counters.db`), conflictsFile };
	}

	private setAside(
		nedb: NedbImport,
		imported: { found: number; imported: number; conflicts: number; skipped: number; earlier: boolean },
		logger: Logger,
	): void {
		const aside = path.join(this.dataDir, NEDB_IMPORTED_DIR);
		fs.mkdirSync(aside, { recursive: true });
		for (const f of [nedb.file, `${nedb.file.replace(/~$/, "")}~`, nedb.countersFile, `${nedb.countersFile}~`]) {
			try {
				fs.renameSync(f, path.join(aside, path.basename(f)));
			} catch (err) {
				if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
			}
		}
		if (imported.earlier) return logger.info(`${this.name}: imported from NeDB at an earlier start; its files are now in ${aside}`);
		const refused = imported.conflicts ? `, ${imported.conflicts} refused (a repeated id or key; kept in ${nedb.conflictsFile})` : "";
		const skipped = imported.skipped ? `, ${imported.skipped} unreadable lines skipped` : "";
		const counts = `${imported.imported} of ${imported.found} documents from ${path.basename(nedb.file)}${refused}${skipped}`;
		logger.warn(`${this.name}: imported ${counts}; the NeDB files are kept in ${aside}`);
	}

	async disconnect(): Promise<void> {
		const store = this.store;
		this.store = undefined;
		if (store) await releaseStore(store);
	}

	private get connected(): SqliteStore {
		if (!this.store) throw new Error(`collection ${this.name} is not connected`);
		return this.store;
	}

	nextId(): Promise<number> {
		return this.connected.writer.request({ op: "nextId", collection: this.name });
	}

	async insert(doc: Omit<T, "id"> & { id?: number }): Promise<T> {
		const [stored] = (await this.connected.writer.request({ op: "insert", collection: this.name, docs: [doc] }))!;
		return stored as T;
	}

	/** Inserts `docs` and moves `counter` in one transaction; null (nothing written) when the counter was not at `counter.from`. */
	async insertWithCounter(docs: Omit<T, "id">[], counter: CounterMove): Promise<T[] | null> {
		return (await this.connected.writer.request({ op: "insert", collection: this.name, docs, counter })) as T[] | null;
	}

	find(query: Doc, opts: FindOptions = {}): Promise<T[]> {
		return reading(() => {
			const sort = typeof opts.sort === "string" ? opts.sort.split(/[\s,]+/) : opts.sort;
			const where = whereSql(query);
			const order = orderSql(sort);
			const omitted = opts.omit?.length ? `json_remove(doc, ${opts.omit.map(pathSql).join(", ")})` : "doc";
			const params: SqlValue[] = [...where.params];
			let window = "";
			if (opts.limit !== undefined || opts.offset) {
				window = " LIMIT ? OFFSET ?";
				params.push(opts.limit ?? -1, opts.offset ?? 0);
			}
			const sql = `SELECT ${omitted} AS doc FROM ${this.table} WHERE ${where.sql}${order ? ` ORDER BY ${order}` : ""}${window}`;
			return (this.connected.reader.statement(sql).all(...params) as { doc: string }[]).map(r => JSON.parse(r.doc) as T);
		});
	}

	async findOne(query: Doc): Promise<T | null> {
		return (await this.find(query, { limit: 1 }))[0] ?? null;
	}

	count(query: Doc = {}): Promise<number> {
		return reading(() => {
			const { reader } = this.connected;
			const counted = this.countedValues(query);
			if (counted) {
				const sql = `SELECT coalesce(sum(n), 0) AS n FROM ${countsTableOf(this.name)} WHERE field = ? AND value IN (SELECT value FROM json_each(?))`;
				return (reader.statement(sql).get(counted.field, JSON.stringify(counted.values)) as { n: number }).n;
			}
			const where = whereSql(query);
			return (reader.statement(`SELECT count(*) AS n FROM ${this.table} WHERE ${where.sql}`).get(...where.params) as { n: number }).n;
		});
	}

	/** A query that only asks for some values of a counted field: those values. */
	private countedValues(query: Doc): { field: string; values: (string | number)[] } | null {
		const keys = Object.keys(query);
		if (keys.length !== 1 || !this.counted.has(keys[0])) return null;
		const v: unknown = query[keys[0]];
		const operand = typeof v === "object" && v !== null && Object.keys(v).length === 1 ? (v as { $in?: unknown }).$in : undefined;
		const values: unknown[] = Array.isArray(operand) ? operand : [v];
		const plain = values.every(x => typeof x === "string" || (typeof x === "number" && Number.isFinite(x)));
		return plain ? { field: keys[0], values: values as (string | number)[] } : null;
	}

	update(query: Doc, set: Doc, unset: string[] = []): Promise<number> {
		return this.connected.writer.request({ op: "update", collection: this.name, where: whereSql(query), set, unset });
	}

	remove(query: Doc): Promise<number> {
		return this.connected.writer.request({ op: "remove", collection: this.name, where: whereSql(query) });
	}
}
