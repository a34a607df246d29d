/**
 * A whole store copied into another back end, and compared record by record after
 * (`npm run copy-store`, docs/operations.md#from-one-machine-to-a-cluster): the embedded store
 * into MongoDB, or back. Every collection in id order, each document as it is (its `id`, the
 * encrypted secrets as ciphertext, a build's `seq` and its artifacts' names, the per-project
 * counters, which are documents too), then each collection's id counter: the highest id ever
 * handed out, so that no id is given twice (./sqlite-side.ts, ./mongo-side.ts say how each keeps it).
 *
 * A target that holds data is refused unless `force` (which empties it first). The target keeps a
 * record of the copy (its source, when it began, when it finished): a copy cut short is taken up
 * again where it stopped, collection by collection after the highest id already there.
 */
import { isDeepStrictEqual } from "util";
import type { Doc } from "../types";

/** Documents read or written at a time. */
const BATCH = 500;
/** Differences listed at most. */
const MAX_LISTED = 10;

export interface CopyRecord {
	source: string;
	startedAt: string;
	finishedAt: string | null;
}

/** One back end as a copy reads and writes it. */
export interface StoreSide {
	/** Where it is, for messages (no credentials). */
	readonly where: string;
	/** What names this store as a copy's source (kept in the target's record). */
	identity(): Promise<string>;
	collections(): Promise<string[]>;
	count(collection: string): Promise<number>;
	/** Documents in id order after `afterId`, at most `limit`. */
	documents(collection: string, afterId: number, limit: number): Promise<Doc[]>;
	/** The highest id handed out, per collection (stored or not: ids are never reused). */
	idCounters(): Promise<Record<string, number>>;
	/** The collections holding documents, and whether a copy's record is there. */
	holdsData(): Promise<string[]>;
	copyRecord(): Promise<CopyRecord | null>;
	writeCopyRecord(record: CopyRecord): Promise<void>;
	/** Empties it (`--force`). */
	clear(): Promise<void>;
	highestId(collection: string): Promise<number>;
	/** Stores documents with their ids, in order: a batch cut short leaves a prefix of it at most. */
	insert(collection: string, docs: Doc[]): Promise<void>;
	/** Records that every id of the collection up to `last` was handed out. */
	setIdCounter(collection: string, last: number, highestStored: number): Promise<void>;
	close(): Promise<void>;
}

class CopyRefused extends Error {
	constructor(message: string) {
		super(message);
		this.name = "CopyRefused";
		this.stack = `${this.name}: ${message}`;
	}
}

export interface CopyReport {
	resumed: boolean;
	collections: { name: string; documents: number; copied: number; equal: number }[];
	counters: Record<string, number>;
	/** Records or counters that differ between source and target after the copy (none when it is sound). */
	differences: string[];
}

/** A document as JSON with its keys in order, for comparing the two back ends (MongoDB's `_id` left out). */
function canonical(value: unknown): unknown {
	if (Array.isArray(value)) return value.map(canonical);
	if (value instanceof Date) return value.toISOString();
	if (value && typeof value === "object") {
		const out: Record<string, unknown> = {};
		for (const key of Object.keys(value).sort()) if (key !== "_id") out[key] = canonical((value as Record<string, unknown>)[key]);
		return out;
	}
	return value;
}

const lastId = (docs: Doc[]): number => (docs.at(-1)?.id as number | undefined) ?? 0;

/** Every document of a collection on both sides, in id order, compared: the differences. */
async function compareCollection(source: StoreSide, target: StoreSide, name: string): Promise<{ equal: number; differences: string[] }> {
	const differences: string[] = [];
	let equal = 0;
	let after = 0;
	for (;;) {
		const [a, b] = await Promise.all([source.documents(name, after, BATCH), target.documents(name, after, BATCH)]);
		if (!a.length && !b.length) break;
		for (let i = 0; i < Math.max(a.length, b.length); i++) {
			const [x, y] = [a[i], b[i]];
			if (x && y && x.id === y.id && isDeepStrictEqual(canonical(x), canonical(y))) equal++;
			else {
				const side = (doc: Doc | undefined, where: string) => `${doc ? `id ${String(doc.id)}` : "nothing"} in ${where}`;
				differences.push(`${name}: ${side(x, source.where)}, ${side(y, target.where)}${x && y && x.id === y.id ? " differ" : ""}`);
			}
			if (differences.length >= MAX_LISTED) return { equal, differences };
		}
		const [lastA, lastB] = [lastId(a), lastId(b)];
		after = Math.max(lastA, lastB);
		if (a.length !== b.length || lastA !== lastB) {
			differences.push(`${name}: the two sides part after id ${Math.min(lastA, lastB)}`);
			return { equal, differences };
		}
	}
	return { equal, differences };
}

export async function copyStore(source: StoreSide, target: StoreSide, opts: { force: boolean; progress?: (line: string) => void }): Promise<CopyReport> {
	const say = opts.progress ?? (() => undefined);
	const identity = await source.identity();
	const record = await target.copyRecord();
	const resumed = !!record && record.source === identity && !record.finishedAt;
	const startedAt = resumed ? record.startedAt : new Date().toISOString();
	if (resumed) say(`Taking up the copy begun at ${startedAt} where it stopped.`);
	else {
		const held = await target.holdsData();
		if (held.length || record) {
			if (!opts.force)
				throw new CopyRefused(
					`${target.where} is not empty (${held.length ? `documents in ${held.slice(0, 5).join(", ")}` : `a copy of ${record!.source}`}): ` +
						`copy into an empty target, or add --force to empty it first`,
				);
			say(`Emptying ${target.where} (--force).`);
			await target.clear();
		}
		await target.writeCopyRecord({ source: identity, startedAt, finishedAt: null });
	}

	const names = await source.collections();
	const report: CopyReport = { resumed, collections: [], counters: {}, differences: [] };
	for (const name of names) {
		const documents = await source.count(name);
		let after = await target.highestId(name);
		let copied = 0;
		for (;;) {
			const docs = await source.documents(name, after, BATCH);
			if (!docs.length) break;
			await target.insert(name, docs);
			copied += docs.length;
			after = docs.at(-1)!.id as number;
		}
		say(`${name}: ${documents} documents${copied !== documents ? ` (${copied} copied now, the others before)` : ""}`);
		report.collections.push({ name, documents, copied, equal: 0 });
	}
	const counters = await source.idCounters();
	for (const [name, last] of Object.entries(counters)) await target.setIdCounter(name, last, await target.highestId(name));
	report.counters = counters;

	say("Comparing every record…");
	for (const entry of report.collections) {
		const { equal, differences } = await compareCollection(source, target, entry.name);
		entry.equal = equal;
		report.differences.push(...differences);
	}
	const targetCounters = await target.idCounters();
	for (const [name, last] of Object.entries(counters))
		if ((targetCounters[name] ?? 0) !== last)
			report.differences.push(`ids of ${name}: ${last} handed out in ${source.where}, ${targetCounters[name] ?? 0} in ${target.where}`);
	if (!report.differences.length) await target.writeCopyRecord({ source: identity, startedAt, finishedAt: new Date().toISOString() });
	return report;
}
