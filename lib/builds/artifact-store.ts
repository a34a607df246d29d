/**
 * Build artifacts and traces as files under one root (DATA_DIR/artifacts, the volume `api` and
 * `builds` both mount), behind ArtifactStorage so an object store can replace it. An upload is
 * moved into place under a new name only once complete, so record and file always agree; a key
 * opens only names the store makes, under its root. docs/architecture.md#artifacts.
 */
import crypto from "crypto";
import fs from "fs";
import path from "path";
import type { Readable } from "stream";
import { ArtifactIncomplete, ArtifactTooLarge, TraceTooLarge, UploadGone } from "./artifact-errors";
import {
	artifactKeyOf,
	MAX_TRACE_BYTES,
	newArtifactName,
	parseObjectKey,
	positiveId,
	traceKeyOf,
	TRACE_FILE,
	type BuildFileStore,
	type PendingUpload,
	type StoredArtifact,
	type UploadTarget,
} from "./artifact-storage";
import {
	ByteLimit,
	drain,
	EarlyFlush,
	isMissing,
	openForRandomAccess,
	openForRead,
	pipeFrom,
	unlinkQuietly,
	type ByteRange,
	type OpenedFile,
	type RandomAccessFile,
} from "./file-streams";

const TMP_DIR = ".tmp";
/** Every upload name writeUpload makes; the number is the build's. */
const UPLOAD_NAME = /^\.tmp\/([1-9][0-9]{0,15})-[0-9a-f]{16}\.part$/;

/** How much of an upload may wait while a write is in flight; what waits goes in one writev. */
const WRITE_CHUNK = 1024 * 1024;

/** Makes a rename in `dir` durable (a crash after it cannot lose the new name); a no-op where directories cannot be synced. */
async function syncDir(dir: string): Promise<void> {
	let handle: fs.promises.FileHandle;
	try {
		handle = await fs.promises.open(dir, "r");
	} catch (err) {
		if (isUnsyncable(err)) return;
		throw err;
	}
	try {
		await handle.sync();
	} catch (err) {
		if (!isUnsyncable(err)) throw err;
	} finally {
		await handle.close();
	}
}

function isUnsyncable(err: unknown): boolean {
	return ["EISDIR", "EINVAL", "EPERM", "ENOTSUP", "EBADF"].includes((err as NodeJS.ErrnoException)?.code ?? "");
}

export class ArtifactStore implements BuildFileStore {
	readonly root: string;
	constructor(
		root: string,
		readonly maxArtifactBytes: number,
		readonly maxTraceBytes = MAX_TRACE_BYTES,
	) {
		this.root = path.resolve(root);
	}

	buildDir(projectId: number, buildId: number): string {
		return path.join(this.root, positiveId(projectId, "project id"), positiveId(buildId, "build id"));
	}

	artifactPath(projectId: number, buildId: number, file: string): string {
		return this.inside(artifactKeyOf(projectId, buildId, file));
	}

	tracePath(projectId: number, buildId: number): string {
		return path.join(this.buildDir(projectId, buildId), TRACE_FILE);
	}

	artifactKey(projectId: number, buildId: number, file: string): string {
		return artifactKeyOf(projectId, buildId, file);
	}

	traceKey(projectId: number, buildId: number): string {
		return traceKeyOf(projectId, buildId);
	}

	/** The file a key names; a key that is not one the store makes, or that would leave the root, is refused. */
	objectPath(key: string): string {
		parseObjectKey(key);
		return this.inside(key);
	}

	/** Opens a stored object (or a byte range of it) by key; null when it is gone. */
	async openObject(key: string, range?: ByteRange): Promise<OpenedFile | null> {
		return openForRead(this.objectPath(key), range);
	}

	/** Opens a stored object for reads anywhere in it; null when it is gone. */
	async openRandomAccess(key: string): Promise<RandomAccessFile | null> {
		return openForRandomAccess(this.objectPath(key));
	}

	/** Files are always streamed by the gateway: there is no other place a client could fetch them from. */
	directDownloadUrl(): Promise<null> {
		return Promise.resolve(null);
	}

	/** The root can be made (an unwritable DATA_DIR stops the start here, not at the first upload). */
	async check(): Promise<void> {
		await fs.promises.mkdir(this.root, { recursive: true });
	}

	/** `relative` resolved under the root, and checked to stay there (the names are checked too: two fences). */
	private inside(relative: string): string {
		const full = path.resolve(this.root, relative);
		if (!full.startsWith(this.root + path.sep)) throw new TypeError(`outside the store: ${JSON.stringify(relative)}`);
		return full;
	}

	private uploadPath(upload: string, buildId?: number): string {
		const m = typeof upload === "string" ? UPLOAD_NAME.exec(upload) : null;
		if (!m || (buildId !== undefined && Number(m[1]) !== buildId)) throw new TypeError(`not an upload of this build: ${JSON.stringify(upload)}`);
		return this.inside(upload);
	}

	/**
	 * Streams `source` into a new temporary file, counted against the size limit. Resolves once
	 * the file is complete and on disk; on any failure the partial file is removed and the error
	 * rethrown: ArtifactTooLarge, ArtifactInterrupted (the source failed or closed early),
	 * ArtifactIncomplete (it ended before `expectedBytes`, a Content-Length), or the disk's own error.
	 */
	async writeUpload({ projectId, buildId }: UploadTarget, source: Readable, opts: { expectedBytes?: number } = {}): Promise<PendingUpload> {
		positiveId(projectId, "project id");
		positiveId(buildId, "build id");
		if (opts.expectedBytes !== undefined && opts.expectedBytes > this.maxArtifactBytes) {
			drain(source);
			throw new ArtifactTooLarge(this.maxArtifactBytes);
		}
		await fs.promises.mkdir(path.join(this.root, TMP_DIR), { recursive: true });
		const upload = `${TMP_DIR}/${buildId}-${crypto.randomBytes(8).toString("hex")}.part`;
		const tmp = this.uploadPath(upload, buildId);
		let handle: fs.promises.FileHandle;
		try {
			handle = await fs.promises.open(tmp, "wx");
		} catch (err) {
			drain(source);
			throw err;
		}
		const flush = new EarlyFlush(handle);
		const limit = new ByteLimit(this.maxArtifactBytes, bytes => flush.progress(bytes));
		try {
			// `flush`: the stream fsyncs the file before it closes it (and the handle), so a complete upload is on disk.
			await pipeFrom(source, limit, handle.createWriteStream({ highWaterMark: WRITE_CHUNK, flush: true }));
			if (opts.expectedBytes !== undefined && limit.bytes !== opts.expectedBytes) throw new ArtifactIncomplete(opts.expectedBytes, limit.bytes);
			return { upload, size: limit.bytes };
		} catch (err) {
			drain(source);
			await unlinkQuietly(tmp);
			throw err;
		} finally {
			// Closed by its stream already; this covers a stream that never got to.
			await handle.close().catch(() => {});
		}
	}

	/** Moves a complete upload into place under a new name; the caller points the build record at it. */
	async commitUpload(projectId: number, buildId: number, upload: string): Promise<StoredArtifact> {
		const tmp = this.uploadPath(upload, buildId);
		const dir = this.buildDir(projectId, buildId);
		const file = newArtifactName();
		await fs.promises.mkdir(dir, { recursive: true });
		const target = path.join(dir, file);
		try {
			await fs.promises.rename(tmp, target);
		} catch (err) {
			// The build's directory can go too (an erase prunes it): the caller tells that apart.
			if (isMissing(err)) throw new UploadGone(upload);
			throw err;
		}
		try {
			await syncDir(dir);
			return { file, size: (await fs.promises.stat(target)).size };
		} catch (err) {
			// Not committed after all: no record will name this file, so it goes now.
			await unlinkQuietly(target);
			throw err;
		}
	}

	/** Removes an upload that will not be committed (idempotent); with `buildId`, only one of that build. */
	async discardUpload(upload: string, buildId?: number): Promise<void> {
		await unlinkQuietly(this.uploadPath(upload, buildId));
	}

	/** writeUpload then commitUpload, for a caller that stores and commits in one place. */
	async writeArtifact(projectId: number, buildId: number, source: Readable, opts: { expectedBytes?: number } = {}): Promise<StoredArtifact> {
		const pending = await this.writeUpload({ projectId, buildId }, source, opts);
		try {
			return await this.commitUpload(projectId, buildId, pending.upload);
		} catch (err) {
			await this.discardUpload(pending.upload);
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

	/** Appends to the build's trace; returns the trace's size afterwards. TraceTooLarge past maxTraceBytes. */
	async appendTrace(projectId: number, buildId: number, text: string | Buffer): Promise<number> {
		const file = this.tracePath(projectId, buildId);
		const adding = typeof text === "string" ? Buffer.byteLength(text) : text.length;
		if ((await this.traceSize(projectId, buildId)) + adding > this.maxTraceBytes) throw new TraceTooLarge(this.maxTraceBytes);
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
		await fs.promises.rmdir(this.buildDir(projectId, buildId)).catch((err: NodeJS.ErrnoException) => {
			if (!isMissing(err) && err.code !== "ENOTEMPTY" && err.code !== "EEXIST") throw err;
		});
	}

	async removeTrace(projectId: number, buildId: number): Promise<void> {
		await unlinkQuietly(this.tracePath(projectId, buildId));
	}

	/** A trace file is one piece already. */
	async settleTrace(): Promise<void> {}

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
