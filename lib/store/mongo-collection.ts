/**
 * The data-access layer on MongoDB (MONGO_URI), through mongoose: one connection per URI shared
 * by a process's collections, documents read as plain objects, ids from claimed ranges
 * (./id-claims.ts), writes to one document queued in the process (./document-locks.ts). It asks
 * of the server only what MongoDB and FerretDB 1.24 both do: no transaction, no `$inc`, no
 * partial index, no collation (docs/storage.md).
 *
 * Writes are acknowledged once a majority of the replica set has them in its journal, so that an
 * answered write survives a crash and a power loss (docs/storage.md#durability).
 */
import mongoose from "mongoose";
import { DocumentLocks } from "./document-locks";
import { IdClaims } from "./id-claims";
import { UniqueViolation, type CollectionOptions, type Doc, type FindOptions } from "./types";

const CONNECTION_OPTIONS: mongoose.ConnectOptions = {
	writeConcern: { w: "majority", journal: true },
	// Stored as JSON would store them: an undefined field is left out, not written as null.
	ignoreUndefined: true,
	autoIndex: false,
	autoCreate: false,
};

/** The connections of this process, one per URI, closed with the last collection that uses it. */
const connections = new Map<string, { ready: Promise<mongoose.Connection>; users: number }>();

async function openConnection(uri: string): Promise<mongoose.Connection> {
	let entry = connections.get(uri);
	if (!entry) {
		const conn = mongoose.createConnection(uri, CONNECTION_OPTIONS);
		const ready = conn.asPromise();
		const opened = { ready, users: 0 };
		// A failed connection is closed and forgotten, so that the next collection tries again.
		ready.catch(() => {
			if (connections.get(uri) === opened) connections.delete(uri);
			conn.close().catch(() => undefined);
		});
		connections.set(uri, (entry = opened));
	}
	entry.users++;
	try {
		return await entry.ready;
	} catch (err) {
		entry.users--;
		throw err;
	}
}

async function closeConnection(uri: string): Promise<void> {
	const entry = connections.get(uri);
	if (!entry || --entry.users > 0) return;
	connections.delete(uri);
	await (await entry.ready).close();
}

/**
 * A unique index's refusal: MongoDB's duplicate key error (11000), or FerretDB 1.x's on an update,
 * which reports SQLite's constraint as an internal error (docs/storage.md#ferretdb).
 */
function isDuplicateKey(err: unknown): boolean {
	const e = err as { code?: number; message?: string } | null;
	return !!e && (e.code === 11000 || /E11000|UNIQUE constraint failed/.test(String(e.message)));
}

async function uniqueGuard<T>(write: () => Promise<T>): Promise<T> {
	try {
		return await write();
	} catch (err) {
		if (isDuplicateKey(err)) throw new UniqueViolation();
		throw err;
	}
}

/** Strips the store's own `_id`: documents carry their integer `id`. */
function plain<T>(doc: Doc | null): T | null {
	if (!doc) return null;
	const { _id, ...rest } = doc;
	return rest as T;
}

/** moleculer-db style ("-id", ["project_id", "-id"]) to a mongoose sort. */
function sortSpec(sort: string | string[]): Record<string, 1 | -1> {
	const fields = typeof sort === "string" ? sort.split(/[\s,]+/) : sort;
	return Object.fromEntries(fields.filter(Boolean).map(f => (f.startsWith("-") ? [f.slice(1), -1] : [f, 1])));
}

function toUpdate(set: Doc, unset?: string[]): Doc {
	const update: Doc = {};
	if (Object.keys(set).length) update.$set = set;
	if (unset?.length) update.$unset = Object.fromEntries(unset.map(f => [f, true]));
	return update;
}

export class MongoCollection<T extends Doc = Doc> {
	private conn?: mongoose.Connection;
	private stored?: mongoose.Model<Doc>;
	private ids?: IdClaims;
	private readonly locks = new DocumentLocks();
	/** No multi-document transaction: FerretDB 1.x has none (docs/storage.md); build numbers claim theirs instead. */
	readonly transactional = false;

	constructor(
		readonly name: string,
		private readonly options: CollectionOptions,
		private readonly uri: string,
	) {}

	async connect(): Promise<void> {
		const conn = await openConnection(this.uri);
		this.conn = conn;
		this.stored = conn.models[this.name] ?? conn.model(this.name, this.schema());
		const model = this.stored;
		this.ids = new IdClaims(conn, this.name, async () => ((await model.findOne({}, { id: 1 }).sort({ id: -1 }).lean())?.id as number) ?? 0, isDuplicateKey);
		await model.createIndexes();
		await this.ids.createIndexes();
	}

	/** Any fields (models/ gives the shapes), the integer `id` unique, and the declared indexes. */
	private schema(): mongoose.Schema<Doc> {
		// No `id` virtual (the documents' own `id` is a field), and empty objects kept as they are.
		const schema = new mongoose.Schema<Doc>({}, { strict: false, versionKey: false, id: false, minimize: false, collection: this.name });
		schema.index({ id: 1 }, { unique: true });
		for (const ix of this.options.indexes ?? []) schema.index(ix.fields, { unique: !!ix.unique, ...(ix.sparse ? { sparse: true } : {}) });
		return schema;
	}

	async disconnect(): Promise<void> {
		if (!this.conn) return;
		this.conn = this.stored = this.ids = undefined;
		await closeConnection(this.uri);
	}

	private get model(): mongoose.Model<Doc> {
		if (!this.stored) throw new Error(`collection ${this.name} is not connected`);
		return this.stored;
	}

	/** The next integer id: atomic, never reused. */
	nextId(): Promise<number> {
		if (!this.ids) throw new Error(`collection ${this.name} is not connected`);
		return this.ids.next();
	}

	/** Inserts with a fresh id unless the document has one. Throws UniqueViolation. */
	async insert(doc: Omit<T, "id"> & { id?: number }): Promise<T> {
		const id = doc.id ?? (await this.nextId());
		const [stored] = await uniqueGuard(() => this.model.insertMany([{ ...doc, id }], { lean: true }));
		return plain<T>(stored)!;
	}

	async find(query: Doc, opts: FindOptions = {}): Promise<T[]> {
		const found = this.model.find(query);
		if (opts.sort) found.sort(sortSpec(opts.sort));
		if (opts.offset) found.skip(opts.offset);
		if (opts.limit) found.limit(opts.limit);
		if (opts.omit?.length) found.select(Object.fromEntries(opts.omit.map(f => [f, 0])));
		return (await found.lean()).map(d => plain<T>(d)!);
	}

	async findOne(query: Doc): Promise<T | null> {
		return plain<T>(await this.model.findOne(query).lean());
	}

	async count(query: Doc = {}): Promise<number> {
		return this.model.countDocuments(query);
	}

	/**
	 * Sets fields on every match and returns how many matched. With a condition in the query it is
	 * a compare-and-set: 0 means the document was not in the expected state. Throws UniqueViolation.
	 */
	async update(query: Doc, set: Doc, unset?: string[]): Promise<number> {
		const update = toUpdate(set, unset);
		if (!Object.keys(update).length) return this.count(query);
		return this.locks.run(query.id, async () => (await uniqueGuard(() => this.model.updateMany(query, update))).matchedCount);
	}

	async remove(query: Doc): Promise<number> {
		return this.locks.run(query.id, async () => (await this.model.deleteMany(query)).deletedCount);
	}
}
