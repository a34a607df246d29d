/**
 * A collection's integer ids on MongoDB, handed out atomically across processes with nothing but
 * inserts: FerretDB 1.x applies `$inc` by reading the counter and writing it back, so racing
 * increments are lost (docs/storage.md#ids).
 *
 * A process claims the range after the newest claim by inserting a claim document keyed by the
 * range's first id: of two processes that read the same newest claim, the unique `_id` lets one
 * win. The winner then checks that no other claim reaches into its range (one that read an older
 * claim, since deleted, would); a claim that fails the check is withdrawn and tried again, so two
 * ranges handed out never overlap. Claims older than the newest are deleted. Ids only grow;
 * a process killed after claiming leaves a gap, never a repeat. The callers waiting in one
 * process share one claim.
 */
import type mongoose from "mongoose";

interface Claim {
	_id: string;
	counter: string;
	first: number;
	last: number;
}

/** Claims in a row that other writers got first before giving up. */
const MAX_ATTEMPTS = 100;

/** The claims of every counter, in one collection of the connection. */
function claimsModel(conn: mongoose.Connection): mongoose.Model<Claim> {
	if (conn.models.id_claims) return conn.models.id_claims as mongoose.Model<Claim>;
	const schema = new conn.base.Schema<Claim>(
		{ _id: String, counter: String, first: Number, last: Number },
		{ versionKey: false, collection: "id_claims", autoIndex: false, autoCreate: false },
	);
	schema.index({ counter: 1, last: -1 });
	return conn.model<Claim>("id_claims", schema);
}

export class IdClaims {
	private readonly claims: mongoose.Model<Claim>;
	private waiting: { resolve: (id: number) => void; reject: (err: unknown) => void }[] = [];
	private claiming = false;

	/**
	 * @param counter whose ids (the collection's name)
	 * @param highestStored the highest id already stored, where the first claim starts after
	 * @param isDuplicateKey whether an error is a unique index's refusal
	 */
	constructor(
		conn: mongoose.Connection,
		private readonly counter: string,
		private readonly highestStored: () => Promise<number>,
		private readonly isDuplicateKey: (err: unknown) => boolean,
	) {
		this.claims = claimsModel(conn);
	}

	async createIndexes(): Promise<void> {
		await this.claims.createIndexes();
	}

	/** The next id: atomic, never reused. */
	next(): Promise<number> {
		return new Promise((resolve, reject) => {
			this.waiting.push({ resolve, reject });
			if (!this.claiming) void this.claimForWaiting();
		});
	}

	/** One claim at a time, for everyone waiting when it starts. */
	private async claimForWaiting(): Promise<void> {
		this.claiming = true;
		while (this.waiting.length) {
			const batch = this.waiting.splice(0);
			try {
				const first = await this.claim(batch.length);
				batch.forEach((w, i) => w.resolve(first + i));
			} catch (err) {
				for (const w of batch) w.reject(err);
			}
		}
		this.claiming = false;
	}

	/** Claims `count` ids and returns the first. */
	private async claim(count: number): Promise<number> {
		for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
			const newest = await this.claims.findOne({ counter: this.counter }).sort({ last: -1 }).lean();
			const first = (newest ? newest.last : await this.highestStored()) + 1;
			const claim: Claim = { _id: `${this.counter}:${first}`, counter: this.counter, first, last: first + count - 1 };
			try {
				await this.claims.insertMany([claim], { lean: true });
			} catch (err) {
				if (this.isDuplicateKey(err)) continue;
				throw err;
			}
			if (await this.claims.exists({ counter: this.counter, last: { $gte: first }, _id: { $ne: claim._id } })) {
				// Another claim reaches into this range: withdraw, and let a moment pass so that two
				// claims that saw each other do not withdraw in step again.
				await this.claims.deleteOne({ _id: claim._id });
				await new Promise(resolve => setTimeout(resolve, Math.random() * 5 * (attempt + 1)));
				continue;
			}
			await this.claims.deleteMany({ counter: this.counter, last: { $lt: first } });
			return first;
		}
		throw new Error(`ids of ${this.counter}: the claims kept being taken by other writers`);
	}
}

/**
 * The highest id handed out of each counter that has claims (a copy's source, ../copy/mongo-side.ts):
 * the newest claim's last id.
 */
export async function claimedThrough(conn: mongoose.Connection): Promise<Record<string, number>> {
	const highest: Record<string, number> = {};
	for (const claim of await claimsModel(conn).find({}).lean()) highest[claim.counter] = Math.max(highest[claim.counter] ?? 0, claim.last);
	return highest;
}

/**
 * Records that every id of `counter` up to `last` was handed out (a copy into MongoDB carries the
 * embedded store's counters): one claim of the range after the newest claim, or after
 * `highestStored`, through `last`, as a process claiming that many ids would insert. Nothing
 * when the counter is already there.
 */
export async function claimThrough(conn: mongoose.Connection, counter: string, last: number, highestStored: number): Promise<void> {
	const claims = claimsModel(conn);
	const newest = await claims.findOne({ counter }).sort({ last: -1 }).lean();
	const first = (newest ? newest.last : highestStored) + 1;
	if (first > last) return;
	await claims.insertMany([{ _id: `${counter}:${first}`, counter, first, last }], { lean: true });
}
