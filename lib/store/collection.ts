/**
 * The data-access layer: NeDB files under DATA_DIR by default (moleculer-db's memory adapter),
 * MongoDB when MONGO_URI is set (./mongo-collection.ts), behind one `Collection` interface.
 * Services get their collections from mixins/db.mixin.ts; the stored shapes and their keys are in
 * models/.
 *
 * Documents carry their own integer `id` from an atomic per-collection counter; `_id` never
 * leaves this layer. NeDB has no compound indexes, so a uniqueness rule over several fields is
 * a synthetic field (e.g. `project_title: "12|bug"`) with a unique index on both back ends.
 */
import fs from "fs";
import path from "path";
import type { ServiceBroker } from "moleculer";
import DbService from "moleculer-db";
import type Nedb from "@seald-io/nedb";
import { isUniqueViolation } from "../api/errors";
import { MongoCollection } from "./mongo-collection";
import { NedbFile, compactEvery, cutTornTail } from "./nedb-file";
import { UniqueViolation, type CollectionOptions, type Doc, type FindOptions, type IndexSpec } from "./types";

export { UniqueViolation };
export type { CollectionOptions, Doc, FindOptions, IndexSpec };

/** Where the data lives; tests point these elsewhere. */
export interface StoreLocation {
	dataDir: string;
	mongoUri: string;
	/** How often NeDB's append-only files are rewritten to what they hold (default 10 minutes). */
	compactEveryMs?: number;
	/** How long NeDB writes are refused after one failed to reach its file (default WRITE_PAUSE_MS). */
	writePauseMs?: number;
}

const COMPACT_EVERY_MS = 10 * 60 * 1000;

/** moleculer-db's find parameters. */
type FindParams = { query: Doc; sort?: string[]; offset?: number; limit?: number };

/** NeDB's Cursor, before it runs. */
interface StoreCursor {
	projection(fields: Record<string, 0>): StoreCursor;
	exec(callback: (err: Error | null, docs: unknown[]) => void): void;
}

/** What this layer uses of moleculer-db's memory adapter. */
interface StoreAdapter {
	init(broker: ServiceBroker, service: { schema: object; settings: object; logger: unknown }): void;
	connect(): Promise<void>;
	disconnect(): Promise<void>;
	insert(doc: Doc): Promise<unknown>;
	find(params: FindParams): Promise<unknown[]>;
	/** What `find` runs: both adapters build the query here. */
	createCursor(params: FindParams): StoreCursor;
	findOne(query: Doc): Promise<unknown>;
	count(params: { query: Doc }): Promise<number>;
	updateMany(query: Doc, update: Doc): Promise<number>;
	removeMany(query: Doc): Promise<number>;
}

/** The embedded adapter also exposes its NeDB datastore. */
interface NedbStoreAdapter extends StoreAdapter {
	db: Nedb<Doc>;
}

type Counter = { _id: string; seq: number };

/** Strips the store's own `_id` so documents look the same on both back ends. */
function plain<T>(doc: unknown): T {
	if (!doc) return doc as T;
	const obj = { ...(doc as Doc) };
	delete obj._id;
	return obj as T;
}

function toUpdate(set: Doc, unset?: string[]): Doc {
	const update: Doc = {};
	if (Object.keys(set).length) update.$set = set;
	if (unset?.length) update.$unset = Object.fromEntries(unset.map(f => [f, true]));
	return update;
}

async function uniqueGuard<T>(write: () => Promise<T>): Promise<T> {
	try {
		return await write();
	} catch (err) {
		if (isUniqueViolation(err)) throw new UniqueViolation();
		throw err;
	}
}

export class Collection<T extends Doc = Doc> {
	private adapter?: StoreAdapter;
	private counters?: Nedb<Counter>;
	/** The MongoDB back end, which this class hands every call to when MONGO_URI is set. */
	private readonly mongo?: MongoCollection<T>;

	constructor(
		readonly name: string,
		private readonly options: CollectionOptions,
		private readonly location: StoreLocation,
	) {
		if (location.mongoUri) this.mongo = new MongoCollection<T>(name, options, location.mongoUri);
	}

	async connect(broker: ServiceBroker): Promise<void> {
		if (this.mongo) return this.mongo.connect(broker);
		const indexes = this.options.indexes ?? [];
		fs.mkdirSync(this.location.dataDir, { recursive: true });
		const logger = broker.getLogger("db");
		const filename = path.join(this.location.dataDir, `${this.name}.db`);
		const countersFile = path.join(this.location.dataDir, `${this.name}.counters.db`);
		// A crash mid-append leaves a torn last line; NeDB would count it as corruption (and refuse to
		// start past 10% of the file) and glue the next append onto it.
		for (const file of [filename, countersFile]) {
			const cut = await cutTornTail(file);
			if (cut) logger.warn(`${file}: cut a torn last line of ${cut} bytes before loading`);
		}
		const adapter = new DbService.MemoryAdapter({ filename }) as unknown as NedbStoreAdapter;
		adapter.init(broker, { schema: {}, settings: {}, logger });
		await adapter.connect();
		const db = adapter.db;
		const dbFile = new NedbFile(db, logger, this.location.writePauseMs);
		await db.ensureIndexAsync({ fieldName: "id", unique: true });
		for (const ix of indexes) {
			const [first, ...rest] = Object.keys(ix.fields);
			if (first !== "id") await db.ensureIndexAsync({ fieldName: first, unique: !!ix.unique && rest.length === 0, sparse: !!ix.sparse });
		}
		const Datastore = db.constructor as new (options: Nedb.DataStoreOptions) => Nedb<Counter>;
		this.counters = new Datastore({ filename: countersFile });
		await this.counters.loadDatabaseAsync();
		this.files = [dbFile, new NedbFile(this.counters, logger, this.location.writePauseMs)];
		this.adapter = adapter;
		// Compaction keeps the append-only files from growing without bound: the counters' file takes
		// a line per id handed out. Not NeDB's own timer, whose failed rewrite is an unhandled rejection.
		this.stopCompaction = compactEvery(this.files, this.location.compactEveryMs ?? COMPACT_EVERY_MS, logger);
	}

	private stopCompaction?: () => Promise<void>;
	/** The NeDB datastores (documents, counters): a write that fails to reach the file is undone, a 503. */
	private files: NedbFile[] = [];

	/** Throws the 503 while a failed NeDB write could not be undone yet (trying again first). */
	private async sound(): Promise<void> {
		// No await at all on the usual path: every read and write comes through here.
		for (const file of this.files) if (file.isDamaged) await file.sound();
	}

	/** As `sound`, and a write is refused at once for a while after one failed to reach its file. */
	private async writable(): Promise<void> {
		for (const file of this.files) file.refuseWritesWhileFailing();
		await this.sound();
	}

	/** The adapter, once connected. */
	private get store(): StoreAdapter {
		if (!this.adapter) throw new Error(`collection ${this.name} is not connected`);
		return this.adapter;
	}

	async disconnect(): Promise<void> {
		if (this.mongo) return this.mongo.disconnect();
		await this.stopCompaction?.();
		this.stopCompaction = undefined;
		await this.adapter?.disconnect();
	}

	/** The next integer id: atomic, never reused. */
	async nextId(): Promise<number> {
		if (this.mongo) return this.mongo.nextId();
		// NeDB runs one operation at a time per datastore, so $inc with returnUpdatedDocs is atomic.
		await this.writable();
		const res = await this.counters!.updateAsync({ _id: this.name }, { $inc: { seq: 1 } }, { upsert: true, returnUpdatedDocs: true });
		return (res.affectedDocuments as Counter).seq;
	}

	/** Inserts with a fresh id unless the document has one. Throws UniqueViolation. */
	async insert(doc: Omit<T, "id"> & { id?: number }): Promise<T> {
		if (this.mongo) return this.mongo.insert(doc);
		// nextId has checked that the files take writes; a given id has not.
		const id = doc.id ?? (await this.nextId());
		if (doc.id !== undefined) await this.writable();
		return plain<T>(await uniqueGuard(() => this.store.insert({ ...doc, id })));
	}

	async find(query: Doc, opts: FindOptions = {}): Promise<T[]> {
		if (this.mongo) return this.mongo.find(query, opts);
		const sort = typeof opts.sort === "string" ? opts.sort.split(/[\s,]+/) : opts.sort;
		await this.sound();
		const params = { query, sort, offset: opts.offset, limit: opts.limit };
		const docs = opts.omit?.length ? await this.findWithout(params, opts.omit) : await this.store.find(params);
		return docs.map((d: unknown) => plain<T>(d));
	}

	/** The adapter's own query, with a projection leaving `fields` in the store. */
	private findWithout(params: FindParams, fields: string[]): Promise<unknown[]> {
		const without = Object.fromEntries(fields.map(f => [f, 0 as const]));
		const cursor = this.store.createCursor(params);
		return new Promise((resolve, reject) => cursor.projection(without).exec((err, docs) => (err ? reject(err) : resolve(docs))));
	}

	async findOne(query: Doc): Promise<T | null> {
		if (this.mongo) return this.mongo.findOne(query);
		await this.sound();
		return plain<T>(await this.store.findOne(query)) ?? null;
	}

	async count(query: Doc = {}): Promise<number> {
		if (this.mongo) return this.mongo.count(query);
		await this.sound();
		return this.store.count({ query });
	}

	/**
	 * Sets fields on every match and returns how many matched. With a condition in the query it is
	 * a compare-and-set: 0 means the document was not in the expected state. Throws UniqueViolation.
	 */
	async update(query: Doc, set: Doc, unset?: string[]): Promise<number> {
		if (this.mongo) return this.mongo.update(query, set, unset);
		const update = toUpdate(set, unset);
		if (!Object.keys(update).length) return this.count(query);
		await this.writable();
		return uniqueGuard(() => this.store.updateMany(query, update));
	}

	/** Sets fields on the first match and returns it as it is now, or null when nothing matched. */
	async updateOne(query: Doc, set: Doc, unset?: string[]): Promise<T | null> {
		if (this.mongo) return this.mongo.updateOne(query, set, unset);
		const current = await this.findOne(query);
		if (!current) return null;
		const id = current.id as number;
		if (!(await this.update({ ...query, id }, set, unset))) return null;
		return this.findOne({ id });
	}

	async remove(query: Doc): Promise<number> {
		if (this.mongo) return this.mongo.remove(query);
		await this.writable();
		return this.store.removeMany(query);
	}
}
