/**
 * A durable append-only journal of JSON records, one per line, in one file.
 *
 * - `append(record)` resolves once the record is written and flushed to the disk (fdatasync).
 *   Records appended while a flush is running go out together in the next one (group commit),
 *   so many concurrent writers share one write and one fsync.
 * - `open` reads every record back, in order. A last line cut short (a write torn by a power
 *   loss) is dropped; a bad line elsewhere is skipped and counted.
 * - `compact(snapshot)` replaces the file with the records `snapshot()` gives (the live state),
 *   written to a temporary file, flushed and renamed over the journal, so a crash at any point
 *   leaves either the old journal or the new one. Appends made meanwhile wait and land after it.
 */
import fs from "fs";
import path from "path";
import readline from "readline";

interface Pending {
	line: string;
	resolve: () => void;
	reject: (err: Error) => void;
}

export interface OpenedLog<R> {
	log: AppendLog;
	records: R[];
	/** Lines that could not be read (other than a torn last line). */
	skipped: number;
}

async function syncDir(dir: string): Promise<void> {
	const handle = await fs.promises.open(dir, "r");
	try {
		await handle.sync();
	} finally {
		await handle.close();
	}
}

async function endsWithNewline(file: string): Promise<boolean> {
	const handle = await fs.promises.open(file, "r");
	try {
		const { size } = await handle.stat();
		if (!size) return true;
		const last = Buffer.alloc(1);
		await handle.read(last, 0, 1, size - 1);
		return last[0] === 0x0a;
	} finally {
		await handle.close();
	}
}

export class AppendLog {
	private queue: Pending[] = [];
	private scheduled = false;
	/** Writes and compactions, one at a time, in order. */
	private chain: Promise<void> = Promise.resolve();
	private closed = false;
	/** Bytes in the file (appended and flushed). */
	bytes = 0;

	private constructor(
		readonly file: string,
		private handle: fs.promises.FileHandle,
	) {}

	static async open<R = unknown>(file: string): Promise<OpenedLog<R>> {
		await fs.promises.mkdir(path.dirname(file), { recursive: true });
		const records: R[] = [];
		let skipped = 0;
		let bytes = 0;
		let torn = false;
		if (fs.existsSync(file)) {
			const lines = readline.createInterface({ input: fs.createReadStream(file, { encoding: "utf8" }), crlfDelay: Infinity });
			for await (const line of lines) {
				if (torn) skipped++;
				torn = false;
				if (!line) continue;
				try {
					records.push(JSON.parse(line) as R);
					bytes += Buffer.byteLength(line) + 1;
				} catch {
					torn = true;
				}
			}
		}
		const opened = new AppendLog(file, await fs.promises.open(file, "a"));
		opened.bytes = bytes;
		// Rewritten without the cut line (or with the missing line end), so that appends never follow a partial line.
		if (torn || !(await endsWithNewline(file))) await opened.compact(() => records.map(r => JSON.stringify(r)));
		return { log: opened, records, skipped };
	}

	/** Resolves once the record is on the disk. */
	append(record: unknown): Promise<void> {
		if (this.closed) return Promise.reject(new Error(`${this.file} is closed`));
		const line = JSON.stringify(record) + "\n";
		return new Promise<void>((resolve, reject) => {
			this.queue.push({ line, resolve, reject });
			if (!this.scheduled) {
				this.scheduled = true;
				void this.exclusive(() => this.writeQueued());
			}
		});
	}

	private exclusive(work: () => Promise<void>): Promise<void> {
		const run = this.chain.then(work);
		this.chain = run.catch(() => undefined);
		return run;
	}

	/** One write and one fsync for everything queued (what arrives meanwhile waits for the next). */
	private async writeQueued(): Promise<void> {
		this.scheduled = false;
		const batch = this.queue.splice(0);
		if (!batch.length) return;
		const data = batch.map(p => p.line).join("");
		try {
			await this.handle.write(data);
			await this.handle.datasync();
			this.bytes += Buffer.byteLength(data);
			for (const p of batch) p.resolve();
		} catch (err) {
			for (const p of batch) p.reject(err as Error);
		}
	}

	/** Waits for every record appended so far to be on the disk. */
	drain(): Promise<void> {
		return this.exclusive(() => Promise.resolve());
	}

	/**
	 * Replaces the journal with `snapshot()`'s lines. The snapshot is taken between two writes:
	 * it covers every record appended so far, so the records still waiting to be written are
	 * not written (they resolve once the new file is on the disk); later ones follow it.
	 */
	compact(snapshot: () => Iterable<string>): Promise<void> {
		return this.exclusive(async () => {
			const lines = [...snapshot()];
			const covered = this.queue.splice(0);
			const data = lines.length ? lines.join("\n") + "\n" : "";
			const tmp = `${this.file}.compact`;
			try {
				const out = await fs.promises.open(tmp, "w");
				try {
					await out.write(data);
					await out.datasync();
				} finally {
					await out.close();
				}
				await fs.promises.rename(tmp, this.file);
				await syncDir(path.dirname(this.file));
			} catch (err) {
				// The old journal stays; the records it lacks are written to it after all.
				this.queue.unshift(...covered);
				if (this.queue.length && !this.scheduled) {
					this.scheduled = true;
					void this.exclusive(() => this.writeQueued());
				}
				throw err;
			}
			await this.handle.close();
			this.handle = await fs.promises.open(this.file, "a");
			this.bytes = Buffer.byteLength(data);
			for (const p of covered) p.resolve();
		});
	}

	async close(): Promise<void> {
		await this.drain();
		this.closed = true;
		await this.handle.close();
	}
}
