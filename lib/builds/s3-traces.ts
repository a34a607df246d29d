/**
 * Build traces in an S3-compatible bucket (docs/architecture.md#s3-traces). S3 has no append, so a
 * trace is a run of objects under `<project>/<build>/trace/`: each append is a new object named by
 * its place (`0000000007`), created with a conditional write (`If-None-Match: *`), so two appenders
 * can never take the same place and an answered append is whole; and once the build finishes (or
 * the run grows long) the run is copied into one object, `base-<last place>`, and the pieces it
 * replaces are removed. A reader lists the run, takes the newest base and the places after it, and
 * reads them in order. Bytes never change once written, so a reader whose pieces were compacted
 * away under it lists again and goes on from the same byte.
 */
import crypto from "crypto";
import { Readable, type Writable } from "stream";
import { finished } from "stream/promises";
import { TraceBusy, TraceTooLarge } from "./artifact-errors";
import { positiveId, type ByteRange, type OpenedFile } from "./artifact-storage";
import { isPreconditionFailed, sendBody, type ListedObject, type ObjectBody, type S3Objects } from "./s3-objects";

/** Places are ten digits: a trace of MAX_TRACE_BYTES takes far fewer appends than that. */
const PLACE = /^\d{10}$/;
const BASE = /^base-(\d{10})$/;
/** Appends after the base before the run is compacted while the build still runs (a listing stays one page). */
const COMPACT_AFTER = 200;
/** Places an append tries when other appends keep taking them first. */
const APPEND_TRIES = 100;
/** Times a read lists the trace again when a piece it was reading was compacted away. */
const RELISTS = 3;

const place = (n: number) => String(n).padStart(10, "0");

interface Piece {
	name: string;
	size: number;
	/** Offset of its first byte in the trace. */
	start: number;
	/** Its place: the last append it holds. */
	seq: number;
}

/** What a listing of the trace says: its pieces in order, and what is left over from compactions. */
interface Layout {
	pieces: Piece[];
	size: number;
	/** The highest place taken (the next append takes the one after). */
	lastSeq: number;
	/** Appends after the base. */
	loose: number;
	/** Replaced pieces a compaction has not removed yet (never read). */
	leftovers: string[];
}

export class S3Traces {
	/** Compactions this process runs, by trace, so that one at a time runs here. */
	private readonly compacting = new Map<string, Promise<void>>();

	constructor(
		private readonly objects: S3Objects,
		readonly maxBytes: number,
		private readonly warn: (message: string, err: unknown) => void,
	) {}

	/** `<project>/<build>/trace/` */
	dir(projectId: number, buildId: number): string {
		return `${positiveId(projectId, "project id")}/${positiveId(buildId, "build id")}/trace/`;
	}

	async layout(projectId: number, buildId: number): Promise<Layout> {
		const dir = this.dir(projectId, buildId);
		const listed: ListedObject[] = [];
		for await (const o of this.objects.list(dir)) listed.push(o);
		let base: ListedObject | null = null;
		let baseSeq = 0;
		const chunks: { o: ListedObject; seq: number }[] = [];
		let lastSeq = 0;
		for (const o of listed) {
			const rest = o.name.slice(dir.length);
			const b = BASE.exec(rest);
			const seq = b ? Number(b[1]) : PLACE.test(rest) ? Number(rest) : null;
			if (seq === null) continue;
			lastSeq = Math.max(lastSeq, seq);
			if (!b) chunks.push({ o, seq });
			else if (!base || seq > baseSeq) [base, baseSeq] = [o, seq];
		}
		const leftovers = listed.filter(o => {
			const rest = o.name.slice(dir.length);
			const b = BASE.exec(rest);
			return b ? o !== base : PLACE.test(rest) && Number(rest) <= baseSeq;
		});
		const pieces: Piece[] = [];
		let size = 0;
		if (base) {
			pieces.push({ name: base.name, size: base.size, start: 0, seq: baseSeq });
			size = base.size;
		}
		// The places after the base, in order; a place missing (never seen: appends take the next one) ends the run.
		let next = baseSeq + 1;
		for (const { o, seq } of chunks.filter(c => c.seq > baseSeq).sort((a, b) => a.seq - b.seq)) {
			if (seq !== next) break;
			pieces.push({ name: o.name, size: o.size, start: size, seq });
			size += o.size;
			next++;
		}
		return { pieces, size, lastSeq, loose: pieces.length - (base ? 1 : 0), leftovers: leftovers.map(o => o.name) };
	}

	async size(projectId: number, buildId: number): Promise<number> {
		return (await this.layout(projectId, buildId)).size;
	}

	/**
	 * Appends `text` in the next free place; the trace's size afterwards. A place another append
	 * took first is followed by the next one (the taken place holds that append: the run stays unbroken).
	 */
	async append(projectId: number, buildId: number, text: string | Buffer): Promise<number> {
		const bytes = typeof text === "string" ? Buffer.from(text) : text;
		// Tells this append's own object from another's when a retried request finds its place taken.
		const token = crypto.randomBytes(12).toString("hex");
		const layout = await this.layout(projectId, buildId);
		if (layout.size + bytes.length > this.maxBytes) throw new TraceTooLarge(this.maxBytes);
		for (let seq = layout.lastSeq + 1, taken = 0; taken < APPEND_TRIES; seq++) {
			const name = this.dir(projectId, buildId) + place(seq);
			try {
				await this.objects.put(name, bytes, { ifNoneMatch: true, metadata: { append: token } });
			} catch (err) {
				if (!isPreconditionFailed(err)) throw err;
				// Taken: by another append (take the next place), or by this one, its answer lost and the request sent again.
				if ((await this.objects.head(name))?.metadata.append !== token) {
					taken++;
					continue;
				}
			}
			if (layout.loose + 1 + taken >= COMPACT_AFTER) this.compactInBackground(projectId, buildId);
			// Others appended meanwhile: the size is the trace's as it is now.
			return taken ? this.size(projectId, buildId) : layout.size + bytes.length;
		}
		throw new TraceBusy();
	}

	/** The trace, or a range of it; null when the build has none. */
	async open(projectId: number, buildId: number, range?: ByteRange): Promise<OpenedFile | null> {
		const layout = await this.layout(projectId, buildId);
		if (!layout.pieces.length) return null;
		return new TraceReader(this, projectId, buildId, layout, range ?? { start: 0, end: layout.size - 1 });
	}

	/** Bytes of one piece (null: compacted away). */
	readPiece(name: string, range: ByteRange): Promise<ObjectBody | null> {
		return this.objects.get(name, range);
	}

	async remove(projectId: number, buildId: number): Promise<void> {
		const names: string[] = [];
		for await (const o of this.objects.list(this.dir(projectId, buildId))) names.push(o.name);
		await this.objects.deleteMany(names);
	}

	/**
	 * A trace file of the filesystem store (`npm run artifacts:to-s3`) becomes the trace's base,
	 * `base-0000000000`, which appends follow from place 1. Copied when the bucket has no trace of
	 * the build, or only an earlier copy that is shorter (the file grew since); "present" when the
	 * copy there is whole; "kept" when the bucket's trace has appends of its own (the service
	 * already writes there), which are left as they are.
	 */
	async importFile(projectId: number, buildId: number, size: number, open: () => Readable): Promise<"copied" | "present" | "kept"> {
		const layout = await this.layout(projectId, buildId);
		const base = `${this.dir(projectId, buildId)}base-${place(0)}`;
		const onlyACopy = layout.pieces.length === 1 && layout.pieces[0].name === base;
		if (layout.pieces.length && !onlyACopy) return "kept";
		if (onlyACopy && layout.size >= size) return layout.size === size ? "present" : "kept";
		await this.objects.upload(base, open());
		const copied = await this.objects.head(base);
		if (copied?.size !== size) throw new Error(`the copy of ${base} has ${copied?.size ?? 0} bytes, not ${size}`);
		return "copied";
	}

	/** Copies the run into one base object and removes what it replaces; one at a time per trace in this process. */
	compact(projectId: number, buildId: number): Promise<void> {
		const id = this.dir(projectId, buildId);
		let running = this.compacting.get(id);
		if (!running) {
			running = this.compactNow(projectId, buildId).finally(() => this.compacting.delete(id));
			this.compacting.set(id, running);
		}
		return running;
	}

	private compactInBackground(projectId: number, buildId: number): void {
		this.compact(projectId, buildId).catch(err => this.warn(`Compacting the trace of build ${buildId} failed; the next one tries again:`, err));
	}

	private async compactNow(projectId: number, buildId: number): Promise<void> {
		const layout = await this.layout(projectId, buildId);
		const replaced = [...layout.leftovers];
		if (layout.pieces.length > 1) {
			const last = layout.pieces[layout.pieces.length - 1];
			const base = `${this.dir(projectId, buildId)}base-${place(last.seq)}`;
			await this.objects.upload(base, Readable.from(this.piecesOf(layout.pieces)));
			const written = await this.objects.head(base);
			// An erase (or another compaction) removed pieces meanwhile: what was read is not the trace any more.
			if (written?.size !== layout.size || !(await this.objects.head(layout.pieces[0].name))) {
				if (written && written.size !== layout.size) await this.objects.delete(base);
				return;
			}
			replaced.push(...layout.pieces.map(p => p.name).filter(n => n !== base));
		}
		await this.objects.deleteMany(replaced);
	}

	/** The pieces' bytes in order (a piece gone under the copy fails it: the upload is then aborted). */
	private async *piecesOf(pieces: Piece[]): AsyncGenerator<Buffer> {
		for (const piece of pieces) {
			const got = await this.objects.get(piece.name);
			if (!got) throw new Error(`trace piece ${piece.name} is gone`);
			for await (const chunk of got.body) yield chunk as Buffer;
		}
	}
}

/** One read of a trace (or a range of it) from the pieces a listing found. */
class TraceReader implements OpenedFile {
	readonly size: number;
	private body: Readable | null = null;
	private closed = false;

	constructor(
		private readonly traces: S3Traces,
		private readonly projectId: number,
		private readonly buildId: number,
		private layout: Layout,
		private readonly range: ByteRange,
	) {
		this.size = layout.size;
	}

	async sendTo(sink: Writable): Promise<void> {
		try {
			let relists = 0;
			for (let at = this.range.start; at <= this.range.end && !this.closed;) {
				const piece = this.layout.pieces.find(p => at >= p.start && at < p.start + p.size);
				if (!piece) throw new Error(`trace ended at byte ${at} of ${this.range.end + 1}`);
				const last = Math.min(this.range.end, piece.start + piece.size - 1);
				const got = await this.traces.readPiece(piece.name, { start: at - piece.start, end: last - piece.start });
				if (!got) {
					// Compacted away under the read: the same bytes are in the pieces a new listing finds.
					if (++relists > RELISTS) throw new Error(`trace piece ${piece.name} kept going away`);
					this.layout = await this.traces.layout(this.projectId, this.buildId);
					continue;
				}
				this.body = got.body;
				await sendBody(got.body, sink, last - at + 1);
				this.body = null;
				at = last + 1;
			}
			sink.end();
			await finished(sink, { readable: false });
		} finally {
			await this.close();
		}
	}

	close(): Promise<void> {
		this.closed = true;
		this.body?.destroy();
		this.body = null;
		return Promise.resolve();
	}
}
