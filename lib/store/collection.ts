/**
 * The data-access layer: the embedded SQLite store under DATA_DIR by default
 * (./sqlite/sqlite-collection.ts), MongoDB (mongoose) when MONGO_URI is set, behind one
 * `Collection` interface. Services get their collections from mixins/db.mixin.ts; the stored
 * shapes and their keys are in models/.
 *
 * Documents carry their own integer `id` from an atomic per-collection counter; `_id` never
 * leaves this layer. A uniqueness rule over several fields is a synthetic field (e.g.
 * `project_title: "12|bug"`) with a unique index on both back ends.
 */
import type { ServiceBroker } from "moleculer";
import MongooseAdapter from "moleculer-db-adapter-mongoose";
import mongoose from "mongoose";
import { isUniqueViolation } from "../api/errors";
import { SqliteCollection } from "./sqlite/sqlite-collection";
import { UniqueViolation, type CollectionOptions, type CounterMove, type Doc, type FindOptions, type IndexSpec, type StoreLocation } from "./types";

export { UniqueViolation };
export type { CollectionOptions, CounterMove, Doc, FindOptions, IndexSpec, StoreLocation };

/** moleculer-db's find parameters. */
type FindParams = { query: Doc; sort?: string[]; offset?: number; limit?: number };

/** A mongoose Query, before it runs. */
interface StoreCursor {
	select(fields: Record<string, 0>): StoreCursor;
	exec(): Promise<unknown[]>;
}

/** What this layer uses of moleculer-db's mongoose adapter. */
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

/** The MongoDB adapter also exposes its mongoose model. */
interface MongoStoreAdapter extends StoreAdapter {
	model: mongoose.Model<Doc>;
}

type Counter = { _id: string; seq: number };

/** Strips the store's own `_id` so documents look the same on both back ends. */
function plain<T>(doc: unknown): T {
	if (!doc) return doc as T;
	const stored = doc as Doc & { toObject?: () => Doc };
	const obj = typeof stored.toObject === "function" ? stored.toObject() : { ...stored };
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

function mongoModel(name: string, indexes: readonly IndexSpec[]) {
	if (mongoose.models[name]) return mongoose.models[name];
	const schema = new mongoose.Schema({}, { strict: false, versionKey: false, collection: name });
	schema.index({ id: 1 }, { unique: true });
	for (const ix of indexes) schema.index(ix.fields, { unique: !!ix.unique, sparse: !!ix.sparse });
	return mongoose.model(name, schema);
}

const mongoCounters = () =>
	mongoose.models.counters ?? mongoose.model("counters", new mongoose.Schema({ _id: String, seq: Number }, { versionKey: false, collection: "counters" }));

export class Collection<T extends Doc = Doc> {
	private adapter?: MongoStoreAdapter;
	/** The embedded store (no MONGO_URI). */
	private readonly sqlite?: SqliteCollection<T>;

	constructor(
		readonly name: string,
		private readonly options: CollectionOptions,
		private readonly location: StoreLocation,
	) {
		if (!location.mongoUri) this.sqlite = new SqliteCollection<T>(name, options, location.dataDir);
	}

	/** Whether records and the counters they move change in one transaction (insertWithCounter). */
	get transactional(): boolean {
		return !!this.sqlite;
	}

	async connect(broker: ServiceBroker): Promise<void> {
		if (this.sqlite) return this.sqlite.connect(broker.getLogger("db"));
		const adapter = new MongooseAdapter(this.location.mongoUri) as unknown as MongoStoreAdapter;
		adapter.init(broker, { schema: { model: mongoModel(this.name, this.options.indexes ?? []) }, settings: {}, logger: broker.getLogger("db") });
		await adapter.connect();
		await adapter.model.createIndexes();
		this.adapter = adapter;
	}

	/** The adapter, once connected. */
	private get store(): MongoStoreAdapter {
		if (!this.adapter) throw new Error(`collection ${this.name} is not connected`);
		return this.adapter;
	}

	async disconnect(): Promise<void> {
		if (this.sqlite) return this.sqlite.disconnect();
		await this.adapter?.disconnect();
	}

	/** The next integer id: atomic, never reused. */
	async nextId(): Promise<number> {
		if (this.sqlite) return this.sqlite.nextId();
		const doc = await mongoCounters()
			.findOneAndUpdate({ _id: this.name }, { $inc: { seq: 1 } }, { upsert: true, new: true })
			.lean();
		return (doc as unknown as Counter).seq;
	}

	/** Inserts with a fresh id unless the document has one (in one transaction with its id on the embedded store). Throws UniqueViolation. */
	async insert(doc: Omit<T, "id"> & { id?: number }): Promise<T> {
		if (this.sqlite) return this.sqlite.insert(doc);
		const id = doc.id ?? (await this.nextId());
		return plain<T>(await uniqueGuard(() => this.store.insert({ ...doc, id })));
	}

	/**
	 * Inserts documents (fresh ids, in order) and moves a counter document of another collection
	 * (`counter.collection`) from `counter.from` to `counter.to`, in one transaction: null, and
	 * nothing written, when the counter was elsewhere. Only where `transactional` is true.
	 * Throws UniqueViolation.
	 */
	async insertWithCounter(docs: Omit<T, "id">[], counter: CounterMove): Promise<T[] | null> {
		if (!this.sqlite) throw new Error(`collection ${this.name}: MongoDB here has no transactions`);
		return this.sqlite.insertWithCounter(docs, counter);
	}

	async find(query: Doc, opts: FindOptions = {}): Promise<T[]> {
		if (this.sqlite) return this.sqlite.find(query, opts);
		const sort = typeof opts.sort === "string" ? opts.sort.split(/[\s,]+/) : opts.sort;
		const params = { query, sort, offset: opts.offset, limit: opts.limit };
		const docs = opts.omit?.length ? await this.findWithout(params, opts.omit) : await this.store.find(params);
		return docs.map((d: unknown) => plain<T>(d));
	}

	/** The adapter's own query, with a projection leaving `fields` in the store. */
	private findWithout(params: FindParams, fields: string[]): Promise<unknown[]> {
		const without = Object.fromEntries(fields.map(f => [f, 0 as const]));
		return this.store.createCursor(params).select(without).exec();
	}

	async findOne(query: Doc): Promise<T | null> {
		if (this.sqlite) return this.sqlite.findOne(query);
		return plain<T>(await this.store.findOne(query)) ?? null;
	}

	async count(query: Doc = {}): Promise<number> {
		if (this.sqlite) return this.sqlite.count(query);
		return this.store.count({ query });
	}

	/**
	 * Sets fields on every match and returns how many matched. With a condition in the query it is
	 * a compare-and-set: 0 means the document was not in the expected state. Throws UniqueViolation.
	 */
	async update(query: Doc, set: Doc, unset?: string[]): Promise<number> {
		if (!Object.keys(set).length && !unset?.length) return this.count(query);
		if (this.sqlite) return this.sqlite.update(query, set, unset);
		const update = toUpdate(set, unset);
		return uniqueGuard(async () => (await this.store.model.updateMany(query, update)).matchedCount);
	}

	/** Sets fields on the first match and returns it as it is now, or null when nothing matched. */
	async updateOne(query: Doc, set: Doc, unset?: string[]): Promise<T | null> {
		const current = await this.findOne(query);
		if (!current) return null;
		const id = current.id as number;
		if (!(await this.update({ ...query, id }, set, unset))) return null;
		return this.findOne({ id });
	}

	async remove(query: Doc): Promise<number> {
		if (this.sqlite) return this.sqlite.remove(query);
		return this.store.removeMany(query);
	}
}
