/**
 * What NeDB leaves to its caller when its file cannot be written (a full, read-only or
 * unwritable volume): collection.ts builds each NeDB datastore's durability on this.
 *
 * NeDB changes its in-memory copy first and appends the change to the file after, and neither
 * rolls the memory back nor cleans up when the append fails; a failed append can also leave a torn
 * last line (no trailing `\n`) that the next append would be glued onto. So a failed append here
 * cuts the file back to its last `\n` (truncating needs no free space), reloads the memory from the
 * file, and answers 503. All of it runs inside the failing write's turn of NeDB's executor, before
 * any other operation on the datastore: none sees the undone write, and no append lands on a torn
 * line or is lost to the reload. (`loadDatabaseAsync` cannot serve here: pushed from inside a task
 * it waits for that task; pushed after it, the operations queued before it would run first, and it
 * rewrites the whole file, which a full volume refuses.)
 */
import fs from "fs";
import type { Logger } from "moleculer";
import type Nedb from "@seald-io/nedb";
import { unavailable } from "../api/errors";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- stored documents are open records
type Doc = Record<string, any>;

/** The parts of NeDB 3's datastore this relies on (lib/datastore.js, persistence.js, executor.js). */
interface NedbInternals {
	filename: string;
	persistence: {
		persistNewStateAsync(docs: Doc[]): Promise<void>;
		persistCachedDatabaseAsync(): Promise<void>;
		/** A whole file's text as its documents (throws past `corruptAlertThreshold`). */
		treatRawData(raw: string): { data: Doc[] };
	};
	/** Runs one task at a time: every read, write, load and compaction of the datastore. */
	executor: { pushAsync<R>(task: () => Promise<R>, forceQueuing?: boolean): Promise<R> };
	_resetIndexes(data?: Doc[]): void;
}

/** NeDB's `setAutocompactionInterval` compacts every 5 s at the most often; so does this. */
const MIN_COMPACT_EVERY_MS = 5000;

/** Cuts a torn last line (bytes after the last `\n`) off a file; returns how many bytes went. */
export async function cutTornTail(file: string): Promise<number> {
	let handle: fs.promises.FileHandle;
	try {
		handle = await fs.promises.open(file, "r");
	} catch (err) {
		if ((err as NodeJS.ErrnoException).code === "ENOENT") return 0;
		throw err;
	}
	let keep = 0;
	let size: number;
	try {
		size = (await handle.stat()).size;
		const chunk = Buffer.alloc(64 * 1024);
		for (let end = size; end > 0 && !keep;) {
			const start = Math.max(0, end - chunk.length);
			const { bytesRead } = await handle.read(chunk, 0, end - start, start);
			const nl = chunk.subarray(0, bytesRead).lastIndexOf(0x0a);
			if (nl >= 0) keep = start + nl + 1;
			end = start;
		}
	} finally {
		await handle.close();
	}
	if (keep < size) await fs.promises.truncate(file, keep);
	return size - keep;
}

/**
 * After a write fails to reach its file, writes are refused at once (503) this long: each failure
 * costs a reload of the whole file, which a full disk under load would repeat for every request.
 */
const WRITE_PAUSE_MS = 5000;

async function sizeOf(file: string): Promise<number> {
	try {
		return (await fs.promises.stat(file)).size;
	} catch {
		return 0;
	}
}

/** One NeDB datastore whose writes are either in its file or undone. */
export class NedbFile {
	/** Memory may differ from the file: a failed write could not be undone (yet). */
	private damaged = false;
	/** Writes are refused until then (ms since the epoch). */
	private pausedUntil = 0;
	private readonly nedb: NedbInternals;

	constructor(
		db: Nedb<Doc> | Nedb<{ _id: string; seq: number }>,
		private readonly logger: Logger,
		private readonly writePauseMs = WRITE_PAUSE_MS,
	) {
		this.nedb = db as unknown as NedbInternals;
		const persistence = this.nedb.persistence;
		const append = persistence.persistNewStateAsync.bind(persistence);
		// Every insert, update and remove ends here, in its executor turn, its change already in memory.
		persistence.persistNewStateAsync = async docs => {
			if (this.damaged) {
				// Queued before an undo failed: this change cannot go on top of unknown memory.
				await this.restoreOrMark();
				throw unavailable();
			}
			// Several documents are appended in one go: a failure may leave some of their lines whole,
			// so the file is cut back to where it ended before, not only to its last whole line.
			const before = docs.length > 1 ? await sizeOf(this.file) : undefined;
			try {
				await append(docs);
			} catch (err) {
				this.pausedUntil = Date.now() + this.writePauseMs;
				this.logger.error(`${this.file}: a write could not be saved (${String(err)}); it is undone and answered 503`);
				await this.restoreOrMark(before);
				throw unavailable();
			}
		};
	}

	/** Throws the 503 while writes are paused after a failed one (before NeDB changes its memory). */
	refuseWritesWhileFailing(): void {
		if (Date.now() < this.pausedUntil) throw unavailable();
	}

	get file(): string {
		return this.nedb.filename;
	}

	/** Memory may differ from the file (`sound` tries to set that right). */
	get isDamaged(): boolean {
		return this.damaged;
	}

	/** Throws the 503 unless memory is what the file holds, undoing a failed write first if one is left. */
	async sound(): Promise<void> {
		if (!this.damaged) return;
		await this.nedb.executor.pushAsync(async () => {
			if (this.damaged) await this.restoreOrMark();
		});
		if (this.damaged) throw unavailable();
	}

	/**
	 * Rewrites the file to what memory holds, in the executor like NeDB's own compaction. A failed
	 * rewrite leaves the file as it was and its temporary copy (`<file>~`) behind, which is removed:
	 * NeDB reads it only when the file itself is missing.
	 */
	compact(): Promise<void> {
		return this.nedb.executor.pushAsync(async () => {
			if (this.damaged) await this.restore();
			try {
				await this.nedb.persistence.persistCachedDatabaseAsync();
			} catch (err) {
				if (fs.existsSync(this.file)) await fs.promises.rm(`${this.file}~`, { force: true }).catch(() => undefined);
				throw err;
			}
		});
	}

	/** Makes memory what the file holds (cut back to `size` first, when given). Only from inside an executor task. */
	private async restore(size?: number): Promise<void> {
		if (size !== undefined && (await sizeOf(this.file)) > size) await fs.promises.truncate(this.file, size);
		const cut = await cutTornTail(this.file);
		if (cut) this.logger.warn(`${this.file}: cut a torn last line of ${cut} bytes`);
		// Read whole: NeDB's line stream would never settle if the read failed.
		const { data } = this.nedb.persistence.treatRawData(await fs.promises.readFile(this.file, "utf8"));
		this.nedb._resetIndexes(data);
		this.damaged = false;
	}

	private async restoreOrMark(size?: number): Promise<void> {
		try {
			await this.restore(size);
		} catch (err) {
			this.damaged = true;
			this.logger.error(`${this.file}: could not reload after a failed write (${String(err)}); it answers 503 until it can`);
		}
	}
}

/**
 * Compacts the files every `everyMs` (at least MIN_COMPACT_EVERY_MS), one at a time, on an unref'd
 * timer. A failed compaction is logged and the next one tried as usual. Returns the stop function,
 * which waits for a compaction under way.
 */
export function compactEvery(files: NedbFile[], everyMs: number, logger: Logger): () => Promise<void> {
	let running: Promise<void> | undefined;
	const compactAll = async () => {
		for (const file of files) {
			try {
				await file.compact();
			} catch (err) {
				logger.warn(`${file.file}: compaction failed (${String(err)}); the file is as it was, the next compaction will try again`);
			}
		}
	};
	const timer = setInterval(
		() => {
			running ??= compactAll().finally(() => (running = undefined));
		},
		Math.max(everyMs, MIN_COMPACT_EVERY_MS),
	);
	timer.unref();
	return async () => {
		clearInterval(timer);
		await running;
	};
}
