/**
 * Build artifacts and traces as files under one root (config.artifactsDir, i.e.
 * DATA_DIR/artifacts; a shared volume when several builds replicas run):
 *
 *   <root>/<project_id>/<build_id>/artifacts-<unique>   one file per upload, named by the build record
 *   <root>/<project_id>/<build_id>/trace.log            appended to
 *   <root>/.tmp/<build_id>-<random>.part                uploads in progress
 *
 * An upload is streamed to a temporary file and renamed into place only once it is complete,
 * so a failed or interrupted upload leaves nothing behind and never touches the artifact that
 * was there before. Each upload gets a new name: the build record switches to it in one write
 * and the previous file is removed after, so the record and the file always agree.
 */
import crypto from "crypto";
import fs from "fs";
import path from "path";
import { Transform, type Readable, type TransformCallback } from "stream";
import { pipeline } from "stream/promises";

/** The upload went past the size limit; nothing was stored. */
export class ArtifactTooLarge extends Error {
	constructor(readonly limit: number) {
		super(`artifacts larger than ${limit} bytes`);
		this.name = "ArtifactTooLarge";
	}
}

/** The upload ended before the announced length arrived; nothing was stored. */
export class ArtifactIncomplete extends Error {
	constructor(
		readonly expected: number,
		readonly received: number,
	) {
		super(`artifacts upload ended after ${received} of ${expected} bytes`);
		this.name = "ArtifactIncomplete";
	}
}

/** The source failed or stopped before its end (a client that went away); nothing was stored. */
export class ArtifactInterrupted extends Error {
	constructor(readonly reason?: Error) {
		super(reason?.message ? `artifacts upload interrupted: ${reason.message}` : "artifacts upload interrupted");
		this.name = "ArtifactInterrupted";
	}
}

export interface StoredArtifact {
	/** The stored file's name, to keep in the build record. */
	file: string;
	size: number;
}

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

const STORED_NAME = /^artifacts-[a-z0-9]+-[0-9a-f]{16}$/;
const TRACE_FILE = "trace.log";
const TMP_DIR = ".tmp";

function positiveId(value: number, what: string): string {
	if (!Number.isSafeInteger(value) || value <= 0) throw new TypeError(`${what} must be a positive integer, got ${value}`);
	return String(value);
}

function isMissing(err: unknown): boolean {
	return (err as NodeJS.ErrnoException)?.code === "ENOENT";
}

async function unlinkQuietly(file: string): Promise<void> {
	await fs.promises.unlink(file).catch(err => {
		if (!isMissing(err)) throw err;
	});
}

/** Passes bytes through, counting them, and fails as soon as they exceed `limit`. */
class ByteLimit extends Transform {
	bytes = 0;
	constructor(private readonly limit: number) {
		super();
	}
	_transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
		this.bytes += chunk.length;
		if (this.bytes > this.limit) return done(new ArtifactTooLarge(this.limit));
		done(null, chunk);
	}
}

export class ArtifactStore {
	constructor(
		readonly root: string,
		readonly maxArtifactBytes: number,
	) {}

	buildDir(projectId: number, buildId: number): string {
		return path.join(this.root, positiveId(projectId, "project id"), positiveId(buildId, "build id"));
	}

	artifactPath(projectId: number, buildId: number, file: string): string {
		// The name comes from the build record; never let it point anywhere else.
		if (!STORED_NAME.test(file)) throw new TypeError(`not a stored artifacts name: ${JSON.stringify(file)}`);
		return path.join(this.buildDir(projectId, buildId), file);
	}

	tracePath(projectId: number, buildId: number): string {
		return path.join(this.buildDir(projectId, buildId), TRACE_FILE);
	}

	/**
	 * Streams `source` into a new artifacts file. Resolves once the file is complete and in
	 * place; on any failure the partial file is removed and the error rethrown: ArtifactTooLarge,
	 * ArtifactInterrupted (the source failed), ArtifactIncomplete (it ended before
	 * `expectedBytes`, a Content-Length), or the disk's own error.
	 */
	async writeArtifact(projectId: number, buildId: number, source: Readable, opts: { expectedBytes?: number } = {}): Promise<StoredArtifact> {
		const dir = this.buildDir(projectId, buildId);
		if (opts.expectedBytes !== undefined && opts.expectedBytes > this.maxArtifactBytes) {
			drain(source);
			throw new ArtifactTooLarge(this.maxArtifactBytes);
		}
		const tmpDir = path.join(this.root, TMP_DIR);
		await fs.promises.mkdir(tmpDir, { recursive: true });
		const tmp = path.join(tmpDir, `${buildId}-${crypto.randomBytes(8).toString("hex")}.part`);
		const limit = new ByteLimit(this.maxArtifactBytes);
		try {
			await pipeFrom(source, limit, fs.createWriteStream(tmp, { flags: "wx" }));
			if (opts.expectedBytes !== undefined && limit.bytes !== opts.expectedBytes) throw new ArtifactIncomplete(opts.expectedBytes, limit.bytes);
			await fsyncFile(tmp);
			const file = `artifacts-${Date.now().toString(36)}-${crypto.randomBytes(8).toString("hex")}`;
			await fs.promises.mkdir(dir, { recursive: true });
			await fs.promises.rename(tmp, path.join(dir, file));
			return { file, size: limit.bytes };
		} catch (err) {
			drain(source);
			await unlinkQuietly(tmp);
			throw err;
		}
	}

	/** Opens a stored artifacts file (or a byte range of it) for reading; null when it is gone. */
	async openArtifact(projectId: number, buildId: number, file: string, range?: ByteRange): Promise<OpenedFile | null> {
		return openForRead(this.artifactPath(projectId, buildId, file), range);
	}

	/** A stored artifacts file's size, or null when it is gone. */
	async artifactSize(projectId: number, buildId: number, file: string): Promise<number | null> {
		try {
			return (await fs.promises.stat(this.artifactPath(projectId, buildId, file))).size;
		} catch (err) {
			if (isMissing(err)) return null;
			throw err;
		}
	}

	async removeArtifact(projectId: number, buildId: number, file: string): Promise<void> {
		await unlinkQuietly(this.artifactPath(projectId, buildId, file));
	}

	/** Appends to the build's trace; returns the trace's size afterwards. */
	async appendTrace(projectId: number, buildId: number, text: string | Buffer): Promise<number> {
		const file = this.tracePath(projectId, buildId);
		await fs.promises.mkdir(path.dirname(file), { recursive: true });
		// O_APPEND: concurrent appenders (several replicas on a shared volume) never overwrite each other.
		await fs.promises.appendFile(file, text);
		return (await fs.promises.stat(file)).size;
	}

	/** The trace's size in bytes, 0 when there is none. */
	async traceSize(projectId: number, buildId: number): Promise<number> {
		try {
			return (await fs.promises.stat(this.tracePath(projectId, buildId))).size;
		} catch (err) {
			if (isMissing(err)) return 0;
			throw err;
		}
	}

	/** Opens the trace (or a byte range of it) for reading; null when the build has none. */
	async openTrace(projectId: number, buildId: number, range?: ByteRange): Promise<OpenedFile | null> {
		return openForRead(this.tracePath(projectId, buildId), range);
	}

	/** Removes the build's directory once nothing is left in it (after an erase). */
	async pruneBuildDir(projectId: number, buildId: number): Promise<void> {
		await fs.promises.rmdir(this.buildDir(projectId, buildId)).catch(err => {
			if (!isMissing(err) && err.code !== "ENOTEMPTY" && err.code !== "EEXIST") throw err;
		});
	}

	async removeTrace(projectId: number, buildId: number): Promise<void> {
		await unlinkQuietly(this.tracePath(projectId, buildId));
	}

	/**
	 * Removes uploads in progress that have not been written to for `idleMs` (left by a process
	 * that died mid-upload). Live uploads keep their file's mtime fresh, so replicas sharing the
	 * volume do not remove each other's.
	 */
	async sweepStaleUploads(idleMs: number, now = Date.now()): Promise<number> {
		const tmpDir = path.join(this.root, TMP_DIR);
		let names: string[];
		try {
			names = await fs.promises.readdir(tmpDir);
		} catch (err) {
			if (isMissing(err)) return 0;
			throw err;
		}
		let removed = 0;
		for (const name of names) {
			if (!name.endsWith(".part")) continue;
			const file = path.join(tmpDir, name);
			const stat = await fs.promises.stat(file).catch(() => null);
			if (stat && now - stat.mtimeMs > idleMs) {
				await unlinkQuietly(file);
				removed++;
			}
		}
		return removed;
	}
}

async function openForRead(file: string, range?: ByteRange): Promise<OpenedFile | null> {
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
		const stream = handle.createReadStream(range ? { start: range.start, end: range.end } : {});
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
async function pipeFrom(source: Readable, limit: ByteLimit, sink: fs.WriteStream): Promise<void> {
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

async function fsyncFile(file: string): Promise<void> {
	const handle = await fs.promises.open(file, "r+");
	try {
		await handle.sync();
	} finally {
		await handle.close();
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
