/**
 * The data-access layer: the embedded SQLite store under DATA_DIR by default
 * (./sqlite/sqlite-collection.ts), MongoDB through mongoose when MONGO_URI is set
 * (./mongo-collection.ts), behind one `Collection` interface. Services get their collections from
 * mixins/db.mixin.ts; the stored shapes and their keys are in models/.
 *
 * Documents carry their own integer `id` from an atomic per-collection counter; `_id` never
 * leaves this layer. A uniqueness rule over several fields is a synthetic field (e.g.
 * `project_title: "12|bug"`) with a unique index on both back ends. Each back end turns its own
 * unique-index refusal into UniqueViolation.
 */
import type { ServiceBroker } from "moleculer";
import { MongoCollection } from "./mongo-collection";
import { SqliteCollection } from "./sqlite/sqlite-collection";
import { UniqueViolation, type CollectionOptions, type CounterMove, type Doc, type FindOptions, type PageWindow, type StoreLocation } from "./types";

export { UniqueViolation };
export type { CollectionOptions, CounterMove, Doc, FindOptions, StoreLocation };

export class Collection<T extends Doc = Doc> {
	private readonly backend: SqliteCollection<T> | MongoCollection<T>;

	constructor(
		readonly name: string,
		options: CollectionOptions,
		location: StoreLocation,
	) {
		this.backend = location.mongoUri ? new MongoCollection<T>(name, options, location.mongoUri) : new SqliteCollection<T>(name, options, location.dataDir);
	}

	/**
	 * Whether records and the counters they move change in one transaction (insertWithCounter):
	 * the embedded store; not MongoDB here, which keeps to what FerretDB does (docs/storage.md).
	 */
	get transactional(): boolean {
		return this.backend.transactional;
	}

	connect(broker: ServiceBroker): Promise<void> {
		return this.backend.connect(broker.getLogger("db"));
	}

	disconnect(): Promise<void> {
		return this.backend.disconnect();
	}

	/** The next integer id: atomic, never reused. */
	nextId(): Promise<number> {
		return this.backend.nextId();
	}

	/** Inserts with a fresh id unless the document has one (in one transaction with its id on the embedded store). Throws UniqueViolation. */
	insert(doc: Omit<T, "id"> & { id?: number }): Promise<T> {
		return this.backend.insert(doc);
	}

	/**
	 * Inserts documents (fresh ids, in order) and moves a counter document of another collection
	 * (`counter.collection`) from `counter.from` to `counter.to`, in one transaction: null, and
	 * nothing written, when the counter was elsewhere. Only where `transactional` is true.
	 * Throws UniqueViolation.
	 */
	async insertWithCounter(docs: Omit<T, "id">[], counter: CounterMove): Promise<T[] | null> {
		if (!(this.backend instanceof SqliteCollection)) throw new Error(`collection ${this.name}: MongoDB here has no transactions`);
		return this.backend.insertWithCounter(docs, counter);
	}

	find(query: Doc, opts: FindOptions = {}): Promise<T[]> {
		return this.backend.find(query, opts);
	}

	/** The rows of what `query` finds in `window`, in `opts`' order, and how many it finds in all: both of the one query, read at once. */
	findPage(query: Doc, window: PageWindow, opts: Omit<FindOptions, "offset" | "limit"> = {}): Promise<[T[], number]> {
		return Promise.all([this.find(query, { ...opts, ...window }), this.count(query)]);
	}

	findOne(query: Doc): Promise<T | null> {
		return this.backend.findOne(query);
	}

	count(query: Doc = {}): Promise<number> {
		return this.backend.count(query);
	}

	/**
	 * Sets fields on every match and returns how many matched. With a condition in the query it is
	 * a compare-and-set: 0 means the document was not in the expected state. Throws UniqueViolation.
	 */
	update(query: Doc, set: Doc, unset?: string[]): Promise<number> {
		if (!Object.keys(set).length && !unset?.length) return this.count(query);
		return this.backend.update(query, set, unset);
	}

	/** Sets fields on the first match and returns it as it is now, or null when nothing matched. */
	async updateOne(query: Doc, set: Doc, unset?: string[]): Promise<T | null> {
		const current = await this.findOne(query);
		if (!current) return null;
		const id = current.id as number;
		if (!(await this.update({ ...query, id }, set, unset))) return null;
		return this.findOne({ id });
	}

	remove(query: Doc): Promise<number> {
		return this.backend.remove(query);
	}
}
