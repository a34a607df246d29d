/**
 * A MongoDB database as a copy's source or target (./copy-store.ts), through the driver under
 * mongoose, with the write concern the services use (majority, journaled). Its id counters are
 * the claims of ../id-claims.ts: a copy into it claims every id the source handed out, as a
 * process would have. A collection made here gets its unique `id` index at once (the copy reads
 * and resumes by it); the services add their declared indexes when they start. The copy's own
 * record is the `store_copy` collection.
 */
import mongoose from "mongoose";
import { claimedThrough, claimThrough } from "../id-claims";
import type { CopyRecord, StoreSide } from "./copy-store";

const RECORD_COLLECTION = "store_copy";
const CLAIMS_COLLECTION = "id_claims";
const RECORD_ID = "copy";

/** A connection string without its credentials, for messages. */
const shown = (uri: string) => uri.replace(/\/\/[^@/]*@/, "//");

export async function mongoSide(uri: string): Promise<StoreSide> {
	const conn = await mongoose.createConnection(uri, { writeConcern: { w: "majority", journal: true }, serverSelectionTimeoutMS: 15000 }).asPromise();
	const db = conn.db!;
	const names = async () =>
		(await db.listCollections({}, { nameOnly: true }).toArray())
			.map(c => c.name)
			.filter(n => n !== RECORD_COLLECTION && n !== CLAIMS_COLLECTION && !n.startsWith("system."))
			.sort();
	const highestId = async (name: string) =>
		((await db.collection(name).findOne({}, { sort: { id: -1 }, projection: { id: 1 } }))?.id as number | undefined) ?? 0;
	const made = new Set<string>();
	return {
		where: `MongoDB ${shown(uri)}`,
		identity: () => Promise.resolve(`MongoDB ${shown(uri)}`),
		collections: names,
		count: name => db.collection(name).countDocuments({}),
		async documents(name, afterId, limit) {
			const found = db.collection(name).find({ id: { $gt: afterId } }, { projection: { _id: 0 } });
			return found.sort({ id: 1 }).limit(limit).toArray();
		},
		async idCounters() {
			const counters = await claimedThrough(conn);
			for (const name of await names()) counters[name] = Math.max(counters[name] ?? 0, await highestId(name));
			return counters;
		},
		async holdsData() {
			const held: string[] = [];
			for (const name of await names()) if (await db.collection(name).findOne({})) held.push(name);
			return held;
		},
		async copyRecord() {
			const doc = await db.collection<{ _id: string } & CopyRecord>(RECORD_COLLECTION).findOne({ _id: RECORD_ID });
			return doc ? { source: doc.source, startedAt: doc.startedAt, finishedAt: doc.finishedAt } : null;
		},
		async writeCopyRecord(record) {
			const records = db.collection<{ _id: string } & CopyRecord>(RECORD_COLLECTION);
			await records.deleteOne({ _id: RECORD_ID });
			await records.insertOne({ _id: RECORD_ID, ...record });
		},
		async clear() {
			for (const c of await db.listCollections({}, { nameOnly: true }).toArray()) if (!c.name.startsWith("system.")) await db.dropCollection(c.name);
			made.clear();
		},
		highestId,
		async insert(name, docs) {
			const collection = db.collection(name);
			if (!made.has(name)) {
				await collection.createIndex({ id: 1 }, { unique: true });
				made.add(name);
			}
			// Copies: the driver gives each inserted object an `_id`.
			await collection.insertMany(
				docs.map(d => ({ ...d })),
				{ ordered: true },
			);
		},
		setIdCounter: (name, last, highestStored) => claimThrough(conn, name, last, highestStored),
		close: () => conn.close(),
	};
}
