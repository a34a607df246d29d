/**
 * The file streams under the artifact store (lib/builds/artifact-store.ts): sending a stored
 * file (or a range of it) from one open handle, writing an upload with a byte limit and early
 * flushes, and keeping a failed upload's producer from blocking. I/O, no policy.
 */
import fs from "fs";
import { Transform, type Readable, type TransformCallback, type Writable } from "stream";
import { finished, pipeline } from "stream/promises";
import { ArtifactInterrupted, ArtifactTooLarge } from "./artifact-errors";

export interface OpenedFile {
	/** Size of the whole file (not of the range asked for). */
	size: number;
	/**
	 * Writes the bytes asked for to `sink` and ends it, then closes the file. Rejects when the file
	 * ends early or the sink closes first. The sink must be done with a chunk once it calls back (a
	 * socket or an HTTP response is; a transform that passes chunks on is not): the memory is reused.
	 */
	sendTo(sink: Writable): Promise<void>;
	/** Closes the file, sent or not; closing it again does nothing. */
	close(): Promise<void>;
}

export interface ByteRange {
	/** First byte, inclusive. */
	start: number;
	/** Last byte, inclusive. */
	end: number;
}

/**
 * Bytes per read of a stored file. A download reads into two buffers of this size in turn, one
 * being written while the other is read into, so one that the client stops reading holds 512 KiB
 * of the process, and a few hundred slow readers fit in the gateway's memory. Through loopback
 * 256 KiB reads serve some 85% of what 1 MiB reads do, nearly twice what 64 KiB (the default) do.
 */
const READ_CHUNK = 256 * 1024;

/** An upload in progress is flushed to disk every so many bytes (EarlyFlush). */
const FLUSH_EVERY = 32 * 1024 * 1024;

export function isMissing(err: unknown): boolean {
	return (err as NodeJS.ErrnoException)?.code === "ENOENT";
}

export async function unlinkQuietly(file: string): Promise<void> {
	await fs.promises.unlink(file).catch(err => {
		if (!isMissing(err)) throw err;
	});
}

/** Passes bytes through, counting them, and fails as soon as they exceed `limit`. */
export class ByteLimit extends Transform {
	bytes = 0;
	constructor(
		private readonly limit: number,
		private readonly onBytes: (total: number) => void = () => {},
	) {
		super();
	}
	_transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
		this.bytes += chunk.length;
		if (this.bytes > this.limit) return done(new ArtifactTooLarge(this.limit));
		this.onBytes(this.bytes);
		done(null, chunk);
	}
}

/**
 * Flushes a file being written every FLUSH_EVERY bytes, one flush at a time, so that the disk
 * writes while the upload still arrives: the flush before the commit then has little left to do,
 * and an upload costs about the longer of receiving and writing, not their sum.
 */
export class EarlyFlush {
	private pending: Promise<void> | null = null;
	private flushedAt = 0;
	constructor(private readonly handle: fs.promises.FileHandle) {}
	progress(bytes: number): void {
		if (this.pending || bytes - this.flushedAt < FLUSH_EVERY) return;
		this.flushedAt = bytes;
		// A failed early flush is the final flush's to report.
		// The handle stays open until this settles: its stream's close waits for it.
		this.pending = this.handle
			.datasync()
			.catch(() => {})
			.finally(() => (this.pending = null));
	}
}

/** A stored file open for reads, with its size; null when it is not there. */
async function openStored(file: string): Promise<{ handle: fs.promises.FileHandle; size: number } | null> {
	let handle: fs.promises.FileHandle;
	try {
		handle = await fs.promises.open(file, "r");
	} catch (err) {
		if (isMissing(err)) return null;
		throw err;
	}
	try {
		// Size and bytes from the same open file: a concurrent replace or removal cannot split them.
		return { handle, size: (await handle.stat()).size };
	} catch (err) {
		await handle.close();
		throw err;
	}
}

export async function openForRead(file: string, range?: ByteRange): Promise<OpenedFile | null> {
	const stored = await openStored(file);
	return stored && new LocalFile(stored.handle, stored.size, range ?? { start: 0, end: stored.size - 1 });
}

/** A stored file open for reads anywhere in it (a zip archive's entries: lib/builds/zip-entries.ts). */
export interface RandomAccessFile {
	size: number;
	/** Reads up to `length` bytes at `position` into `buffer` at `offset`; the bytes read (0 at the end). */
	read(buffer: Buffer, offset: number, length: number, position: number): Promise<number>;
	/** Bytes `start` (inclusive) to `end` (exclusive) as one stream, where the store reads a long run better that way (one ranged GET). */
	readStream?(start: number, end: number): Promise<Readable>;
	close(): Promise<void>;
}

export async function openForRandomAccess(file: string): Promise<RandomAccessFile | null> {
	const stored = await openStored(file);
	if (!stored) return null;
	const { handle, size } = stored;
	let closed: Promise<void> | null = null;
	return {
		size,
		read: async (buffer, offset, length, position) => (await handle.read(buffer, offset, length, position)).bytesRead,
		// Closing twice closes once.
		close: () => (closed ??= handle.close()),
	};
}

/** A file of the shared volume, open for one send. */
class LocalFile implements OpenedFile {
	constructor(
		private readonly handle: fs.promises.FileHandle,
		readonly size: number,
		private readonly range: ByteRange,
	) {}

	async sendTo(sink: Writable): Promise<void> {
		try {
			await sendRange(this.handle, this.range.start, this.range.end + 1, sink);
		} finally {
			await this.close();
		}
	}

	close(): Promise<void> {
		return this.handle.close();
	}
}

const ignore = () => {};

/**
 * Bytes `from` (inclusive) to `to` (exclusive) of an open file into `sink`, which it ends. Reads go
 * into two buffers in turn, and a buffer is read into again only once the sink has called back for
 * what it held: a download allocates nothing per chunk, where a file stream makes a new buffer for
 * each, and collecting those took much of a busy gateway's time (docs/architecture.md#artifacts).
 * The sink's pace sets the reads, so a slow client never makes the process buffer.
 */
async function sendRange(handle: fs.promises.FileHandle, from: number, to: number, sink: Writable): Promise<void> {
	// The sink's failure (closed or failed before it finished) ends the wait for a write at once:
	// a write may never call back then. One handler for the whole send: a Promise.race per chunk
	// would leave a reaction on `done` for every chunk until the send ends.
	let failure: Error | null = null;
	let interrupt: ((err: Error) => void) | null = null;
	const done = finished(sink, { readable: false });
	done.catch((err: Error) => {
		failure = err;
		interrupt?.(err);
	});
	const untilWritten = (written: Promise<void>) =>
		new Promise<void>((resolve, reject) => {
			if (failure) return reject(failure);
			interrupt = reject;
			written.then(resolve, reject);
		});
	const write = (chunk: Buffer) => {
		const written = new Promise<void>((resolve, reject) => sink.write(chunk, err => (err ? reject(err) : resolve())));
		written.catch(ignore); // a failed write is seen through `done`, or when its buffer's turn comes
		return written;
	};
	const buffers = [Buffer.allocUnsafeSlow(Math.min(READ_CHUNK, to - from)), Buffer.allocUnsafeSlow(Math.min(READ_CHUNK, to - from))];
	const written: (Promise<void> | undefined)[] = [undefined, undefined];
	for (let at = from, turn = 0; at < to; turn ^= 1) {
		const previous = written[turn];
		if (previous) await untilWritten(previous);
		const { bytesRead } = await handle.read(buffers[turn], 0, Math.min(buffers[turn].length, to - at), at);
		if (bytesRead === 0) throw new Error(`file ended at byte ${at} of ${to}`);
		at += bytesRead;
		written[turn] = write(buffers[turn].subarray(0, bytesRead));
	}
	sink.end();
	await done;
}

/**
 * `source → limit → sink`, resolving when the sink has everything. Unlike `pipeline` it does not
 * destroy the source on failure (a local HTTP request would lose its socket and the chance of a
 * 413 answer); a source that errors or closes before its end fails the write as interrupted.
 */
export async function pipeFrom(source: Readable, limit: ByteLimit, sink: Writable): Promise<void> {
	// Gone already (a client that left while the upload was authorized): its close has been
	// emitted and its end never will be, so piping it would wait forever.
	if (source.readableAborted) {
		sink.destroy();
		throw new ArtifactInterrupted(source.errored ?? undefined);
	}
	const done = pipeline(limit, sink);
	const onError = (err: Error) => limit.destroy(new ArtifactInterrupted(err));
	const onClose = () => {
		if (!source.readableEnded) limit.destroy(new ArtifactInterrupted());
	};
	source.on("error", onError);
	source.on("close", onClose);
	source.pipe(limit);
	try {
		await done;
	} finally {
		source.off("error", onError);
		source.off("close", onClose);
		source.unpipe(limit);
	}
}

/**
 * After a failed write, keeps reading the source and throws the bytes away, so that its
 * producer (a socket, or chunks still arriving over the transporter) is never left blocked,
 * and a late error on it does not go unhandled.
 */
export function drain(source: Readable): void {
	source.on("error", () => {});
	if (!source.destroyed) source.resume();
}
