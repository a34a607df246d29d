/**
 * Writes to one document, one at a time in this process. A compare-and-set update or delete is
 * atomic on MongoDB, but FerretDB 1.x evaluates the condition, then writes the document back in a
 * second step: two racing writes could both pass it, and one field update could undo another.
 * Queued here, the writes of one process never race on FerretDB either; across processes the
 * guarantee stays MongoDB's (docs/storage.md#ferretdb). A write that names no single document
 * (no numeric `id` in its query) waits for every write before it, and every later write waits
 * for it.
 */
const EVERY = "*";

export class DocumentLocks {
	/** The last write queued per document id (and EVERY): what the next one waits for. */
	private readonly last = new Map<string, Promise<unknown>>();

	/** Runs `write` once the earlier writes to the same document (or to all) are done. */
	run<T>(id: unknown, write: () => Promise<T>): Promise<T> {
		const key = typeof id === "number" ? String(id) : EVERY;
		const before = key === EVERY ? [...this.last.values()] : [this.last.get(key), this.last.get(EVERY)].filter(p => p !== undefined);
		const result = Promise.allSettled(before).then(write);
		const settled = result.then(
			() => undefined,
			() => undefined,
		);
		this.last.set(key, settled);
		void settled.then(() => this.last.get(key) === settled && this.last.delete(key));
		return result;
	}
}
