/**
 * One file out of a build's artifacts archive (a zip), as GitLab's Workhorse sends one
 * (docs/api.md#v4-job-artifacts): the central directory is read from the stored archive, the
 * entry found by its exact path, and its bytes streamed (inflated when deflated), a byte range of
 * them too. Reads go through a RandomAccessFile of the artifact store, never the whole archive
 * into memory; yauzl reads the zip format (zip64 included) and checks each entry's size as it streams.
 */
import { PassThrough, Readable, Transform, type TransformCallback } from "stream";
import { pipeline } from "stream/promises";
import yauzl, { type Entry, type ZipFile } from "yauzl";
import type { RandomAccessFile } from "./file-streams";

/** The small reads of the central directory are served from blocks of this size. */
const BLOCK = 64 * 1024;
/** Longest entry path taken (GitLab's paths are file system paths). */
const MAX_ENTRY_PATH = 4096;

/**
 * A path inside an archive as a request gives it (GitLab's `Artifacts::Path#valid?`): text
 * without NUL, of a sane length; leading slashes are not part of an entry's name. Null: a 400.
 */
export function entryPath(raw: unknown): string | null {
	if (typeof raw !== "string") return null;
	const path = raw.replace(/^\/+/, "");
	if (!path || path.length > MAX_ENTRY_PATH || path.includes("\0")) return null;
	return path;
}

/** yauzl's reader over the store's file, with the last block read kept for the central directory's many small reads. */
class StoredFileReader extends yauzl.RandomAccessReader {
	private block: { at: number; bytes: Buffer } | null = null;

	constructor(private readonly file: RandomAccessFile) {
		super();
	}

	read(buffer: Buffer, offset: number, length: number, position: number, callback: (err: Error | null) => void): void {
		this.readInto(buffer, offset, length, position).then(() => callback(null), callback);
	}

	private async readInto(buffer: Buffer, offset: number, length: number, position: number): Promise<void> {
		if (length > BLOCK) return this.readFully(buffer, offset, length, position);
		let block = this.block;
		if (!block || position < block.at || position + length > block.at + block.bytes.length) {
			const bytes = Buffer.allocUnsafe(Math.min(BLOCK, this.file.size - position));
			await this.readFully(bytes, 0, bytes.length, position);
			this.block = block = { at: position, bytes };
		}
		block.bytes.copy(buffer, offset, position - block.at, position - block.at + length);
	}

	private async readFully(buffer: Buffer, offset: number, length: number, position: number): Promise<void> {
		for (let done = 0; done < length;) {
			const n = await this.file.read(buffer, offset + done, length - done, position + done);
			if (n === 0) throw new Error(`archive ended at byte ${position + done}`);
			done += n;
		}
	}

	_readStreamForRange(start: number, end: number): Readable {
		const file = this.file;
		if (file.readStream) {
			// One stream for the whole range (an object store's ranged GET), handed over once it answers.
			const out = new PassThrough();
			file.readStream(start, end).then(
				body => pipeline(body, out).catch(() => {}),
				(err: Error) => out.destroy(err),
			);
			return out;
		}
		return Readable.from(
			(async function* () {
				for (let at = start; at < end;) {
					const chunk = Buffer.allocUnsafe(Math.min(BLOCK * 4, end - at));
					const n = await file.read(chunk, 0, chunk.length, at);
					if (n === 0) throw new Error(`archive ended at byte ${at}`);
					at += n;
					yield chunk.subarray(0, n);
				}
			})(),
			{ objectMode: false },
		);
	}

	close(callback: (err: Error | null) => void): void {
		this.file.close().then(() => callback(null), callback);
	}
}

/** Drops the first `skip` bytes that pass and ends after `keep` more (a range of an inflated entry). */
class Slice extends Transform {
	constructor(
		private skip: number,
		private keep: number,
	) {
		super();
	}

	_transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
		let part = chunk;
		if (this.skip) {
			const dropped = Math.min(this.skip, part.length);
			this.skip -= dropped;
			part = part.subarray(dropped);
		}
		if (this.keep > 0 && part.length) {
			const kept = part.subarray(0, this.keep);
			this.keep -= kept.length;
			this.push(kept);
		}
		done();
	}
}

/** An entry found in an open archive. */
interface ArchiveEntry {
	/** Its uncompressed size. */
	size: number;
	/** Where its record starts in the archive: with the archive's identity, it identifies the entry's bytes. */
	offset: number;
	/** Its bytes, `start` to `end` inclusive (the whole entry by default). */
	open(range?: { start: number; end: number }): Promise<Readable>;
}

/** An archive opened for one of its entries; close it when done (its streams keep the file open until they end). */
export interface OpenArchive {
	/** The entry at this exact path (a directory is none), reading the central directory once: one look-up per archive opened. */
	find(path: string): Promise<ArchiveEntry | null>;
	close(): void;
}

/** Opens the archive's central directory; a file that is not a zip rejects (yauzl's error). */
export async function openArchive(file: RandomAccessFile): Promise<OpenArchive> {
	let zip: ZipFile;
	try {
		zip = await yauzl.fromRandomAccessReaderPromise(new StoredFileReader(file), file.size, {
			autoClose: false,
			strictFileNames: false,
			validateEntrySizes: true,
		});
	} catch (err) {
		await file.close();
		throw err;
	}
	return {
		async find(path: string): Promise<ArchiveEntry | null> {
			for await (const entry of zip.eachEntry()) if (entry.fileName === path && !path.endsWith("/")) return archiveEntry(zip, entry);
			return null;
		},
		close: () => zip.close(),
	};
}

function archiveEntry(zip: ZipFile, entry: Entry): ArchiveEntry {
	return {
		size: entry.uncompressedSize,
		offset: entry.relativeOffsetOfLocalHeader,
		async open(range) {
			const stored = entry.compressionMethod === 0 && !entry.isEncrypted();
			// A stored entry's range is read as it lies in the archive; a deflated one is inflated and cut.
			if (!range) return zip.openReadStreamPromise(entry);
			if (stored) return zip.openReadStreamPromise(entry, { decodeFileData: false, start: range.start, end: range.end + 1 });
			return (await zip.openReadStreamPromise(entry)).pipe(new Slice(range.start, range.end - range.start + 1));
		},
	};
}
