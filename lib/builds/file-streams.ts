/**
 * The file streams under the artifact store (lib/builds/artifact-store.ts): reading a stored
 * file (or a range of it) from one open handle, writing an upload with a byte limit and early
 * flushes, and keeping a failed upload's producer from blocking. I/O, no policy.
 */
import fs from "fs";
import { Transform, type Readable, type TransformCallback, type Writable } from "stream";
import { pipeline } from "stream/promises";
import { ArtifactInterrupted, ArtifactTooLarge } from "./artifact-errors";

export interface OpenedFile {
	stream: Readable;
	/** Size of the whole file (not of the range asked for). */
	size: number;
}

export interface ByteRange {
	/** First byte, inclusive. */
	start: number;
	/** Last byte, inclusive. */
	end: number;
}

/**
 * Bytes per read of a stored file, and the most its stream reads ahead. A download that the client
 * stops reading holds at most two chunks in the process (one read ahead, one in the response's
 * buffer): 512 KiB, so a few hundred slow readers fit in the gateway's memory. Through loopback
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

export async function openForRead(file: string, range?: ByteRange): Promise<OpenedFile | null> {
	let handle: fs.promises.FileHandle;
	try {
		handle = await fs.promises.open(file, "r");
	} catch (err) {
		if (isMissing(err)) return null;
		throw err;
	}
	try {
		// Size and stream from the same open file: a concurrent replace or removal cannot split them.
		const { size } = await handle.stat();
		const stream = handle.createReadStream({ ...(range ? { start: range.start, end: range.end } : {}), highWaterMark: READ_CHUNK });
		return { stream, size };
	} catch (err) {
		await handle.close();
		throw err;
	}
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
