/**
 * Per-project build numbers (`seq`: 1…total, dense, in id order) that no crash can leave with a
 * gap.
 *
 * On the embedded store the builds, their ids and the project's counter change in one
 * transaction (Collection.insertWithCounter): the counter moves from the number that was read to
 * the last new one, or nothing is written and the numbers are read again (another process was
 * first). The counter is always the total.
 *
 * MongoDB here has no transaction across the two collections, so there a build claims its number
 * itself: it is inserted under the unique `project_seq` key, and only then does the project's
 * counter move forward (a conditional update that never moves it back). A process killed between
 * the two leaves the counter behind its builds, never ahead of them: `total()` rolls it forward
 * past any build stored after it (one point look-up of the next number), so X-Total and page
 * windows are exact at every read. A process killed after taking an id burns it (ids may have
 * gaps, never repeats), never a number.
 *
 * `repair()`, at start-up, rolls lagging counters forward and renumbers the projects whose counter
 * is ahead of their builds: data written by earlier versions (NeDB files imported, which could be
 * left either way by a crash).
 */
import { SEQ_DIGITS, seqKey, type BuildCounterDoc } from "../../models/build";
import { UniqueViolation, type Collection, type Doc } from "../store/collection";

/** What the numbering needs of a stored build. */
export interface NumberedDoc extends Doc {
	id: number;
	project_id: number;
	seq: number;
	project_seq: string;
}

/** Conflicting inserts in a row before giving up (each one means another writer took that number). */
const MAX_CONFLICTS = 100;
const REPAIR_PAGE = 1000;
const LAST_SEQ = 10 ** SEQ_DIGITS - 1;

export class NumberingBusy extends Error {
	constructor(projectId: number) {
		super(`project ${projectId}: build numbers kept being taken by other writers`);
		this.name = "NumberingBusy";
	}
}

export class BuildNumbers<T extends NumberedDoc> {
	constructor(
		private readonly builds: Collection<T>,
		private readonly counters: Collection<BuildCounterDoc & Doc>,
	) {}

	/**
	 * Stores new builds of one project under the next numbers, in order, and returns them as
	 * stored. `make(i)` gives the i-th document; this adds its id and numbers (and may call it
	 * again when another writer took the numbers first).
	 */
	async insert(projectId: number, count: number, make: (index: number) => Omit<T, "id" | "seq" | "project_seq">): Promise<T[]> {
		if (this.builds.transactional) return this.insertTogether(projectId, count, make);
		const stored: T[] = [];
		let next = (await this.counterSeq(projectId)) + 1;
		// Numbers follow ids: a build may only take number n if the build at n - 1 has a smaller id.
		let previousId = next > 1 ? ((await this.builds.findOne({ project_seq: seqKey(projectId, next - 1) }))?.id ?? 0) : 0;
		for (let i = 0; i < count; i++) {
			let id = await this.builds.nextId();
			for (let conflicts = 0; ; conflicts++) {
				// Ids are handed out in increasing order, so a fresh one is newer than any stored build.
				if (id < previousId) id = await this.builds.nextId();
				try {
					stored.push(await this.builds.insert({ ...make(i), id, seq: next, project_seq: seqKey(projectId, next) } as T));
					break;
				} catch (err) {
					if (!(err instanceof UniqueViolation)) throw err;
					if (conflicts >= MAX_CONFLICTS) throw new NumberingBusy(projectId);
					// Taken: by another replica, or by a build stored just before a crash. Try the number
					// after it, or after the counter when other writers are further ahead.
					next = Math.max(next + 1, (await this.counterSeq(projectId)) + 1);
					previousId = (await this.builds.findOne({ project_seq: seqKey(projectId, next - 1) }))?.id ?? previousId;
				}
			}
			previousId = id;
			next++;
		}
		if (stored.length) await this.advance(projectId, next - 1);
		return stored;
	}

	/** The builds, their ids and the counter in one transaction, from the counter as read. */
	private async insertTogether(projectId: number, count: number, make: (index: number) => Omit<T, "id" | "seq" | "project_seq">): Promise<T[]> {
		for (let conflicts = 0; ; conflicts++) {
			const from = (await this.counters.findOne({ id: projectId }))?.seq ?? 0;
			const docs = Array.from(
				{ length: count },
				(_, i) => ({ ...make(i), seq: from + 1 + i, project_seq: seqKey(projectId, from + 1 + i) }) as Omit<T, "id">,
			);
			try {
				const stored = await this.builds.insertWithCounter(docs, {
					collection: this.counters.name,
					id: projectId,
					field: "seq",
					from,
					to: from + count,
				});
				if (stored) return stored;
			} catch (err) {
				// A number taken behind the counter's back: data imported from an earlier version.
				if (!(err instanceof UniqueViolation)) throw err;
				await this.rollForward(projectId);
			}
			if (conflicts >= MAX_CONFLICTS) throw new NumberingBusy(projectId);
		}
	}

	/** How many builds the project has, exact even after a crash between an insert and its counter update. */
	async total(projectId: number): Promise<number> {
		if (this.builds.transactional) return (await this.counters.findOne({ id: projectId }))?.seq ?? 0;
		return this.rollForward(projectId);
	}

	/** Moves a counter left behind its builds forward past them; the total. */
	private async rollForward(projectId: number): Promise<number> {
		const counted = await this.counterSeq(projectId);
		let total = counted;
		while (await this.builds.findOne({ project_seq: seqKey(projectId, total + 1) })) total++;
		if (total > counted) await this.advance(projectId, total);
		return total;
	}

	/**
	 * Start-up check of every project's counter: rolls lagging counters forward and renumbers the
	 * builds of a project whose counter is ahead of them (a gap left by an earlier version).
	 * Resolves with the projects renumbered.
	 */
	async repair(log: (message: string) => void = () => undefined): Promise<number[]> {
		const renumbered: number[] = [];
		let after = 0;
		for (;;) {
			const page = (await this.counters.find({ id: { $gt: after } }, { sort: ["id"], limit: REPAIR_PAGE })) as BuildCounterDoc[];
			if (!page.length) break;
			after = page[page.length - 1].id;
			const numbered = page.filter(c => c.seq > 0);
			const lastKeys = numbered.map(c => seqKey(c.id, c.seq));
			const nextKeys = page.map(c => seqKey(c.id, c.seq + 1));
			const found = new Set((await this.builds.find({ project_seq: { $in: [...lastKeys, ...nextKeys] } })).map(b => b.project_seq));
			for (const c of numbered)
				if (!found.has(seqKey(c.id, c.seq))) {
					const total = await this.renumber(c.id);
					log(`Project ${c.id}: its build counter said ${c.seq} but ${total} builds are stored; renumbered them 1…${total}.`);
					renumbered.push(c.id);
				}
			for (const c of page) if (found.has(seqKey(c.id, c.seq + 1))) await this.rollForward(c.id);
		}
		return renumbered;
	}

	/** Numbers a project's builds 1…n in id order again and sets its counter to n. */
	private async renumber(projectId: number): Promise<number> {
		const all = await this.builds.find({ project_seq: { $gte: seqKey(projectId, 0), $lte: seqKey(projectId, LAST_SEQ) } }, { sort: ["id"] });
		// In id order every build moves down (or stays), into a number the builds before it have left.
		for (const [i, b] of all.entries())
			if (b.seq !== i + 1) await this.builds.update({ id: b.id, seq: b.seq }, { seq: i + 1, project_seq: seqKey(projectId, i + 1) });
		await this.counters.update({ id: projectId }, { seq: all.length });
		return all.length;
	}

	private async counterSeq(projectId: number): Promise<number> {
		const counter = await this.counters.findOne({ id: projectId });
		if (counter) return counter.seq;
		try {
			await this.counters.insert({ id: projectId, seq: 0 });
		} catch (err) {
			if (!(err instanceof UniqueViolation)) throw err;
		}
		return (await this.counters.findOne({ id: projectId }))?.seq ?? 0;
	}

	/** Moves the counter forward to `seq`, never back (another writer may be further already). */
	private async advance(projectId: number, seq: number): Promise<void> {
		await this.counters.update({ id: projectId, seq: { $lt: seq } }, { seq });
	}
}
