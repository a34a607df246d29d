/**
 * Build artifacts and traces as files under one root (config.artifactsDir, i.e.
 * DATA_DIR/artifacts: the volume that `api` and `builds` both mount), behind one small interface
 * (ArtifactStorage) so that an object store can replace the shared volume later
 * (docs/architecture.md#artifacts):
 *
 *   <root>/<project_id>/<build_id>/artifacts-<unique>   one file per upload, named by the build record
 *   <root>/<project_id>/<build_id>/trace.log            appended to
 *   <root>/.tmp/<build_id>-<random>.part                uploads in progress
 *
 * An upload is streamed to a temporary file (by the gateway: writeUpload) and moved into place
 * only once it is complete and the builds service commits it (commitUpload), so a failed or
 * interrupted upload leaves nothing behind and never touches the artifact that was there before.
 * Each upload gets a new name: the build record switches to it in one write and the previous file
 * is removed after, so the record and the file always agree.
 *
 * Readers name what they want by key (`<project>/<build>/<file>`, from the builds service's grant);
 * a key is checked against the names the store itself makes, and its path against the root, so
 * nothing outside the root can be opened whatever a key says.
 */
import crypto from "crypto";
import fs from "fs";
import path from "path";
import type { Readable } from "stream";
import { ArtifactIncomplete, ArtifactTooLarge, TraceTooLarge, UploadGone } from "./artifact-errors";
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

// The types of the ArtifactStorage interface, for those who implement or call it.
export type { ByteRange, OpenedFile, RandomAccessFile } from "./file-streams";

/** A complete upload, not yet visible: commitUpload moves it into place, discardUpload removes it. */
export interface PendingUpload {
	/** The store's name for it (`.tmp/<build>-<random>.part`). */
	upload: string;
	size: number;
}

export interface StoredArtifact {
	/** The stored file's name, to keep in the build record. */
	file: string;
	size: number;
}

/**
 * What the gateway and the builds service need of the store. The shared volume (ArtifactStore)
 * implements it; an S3-compatible object store would too (a temporary object, then a copy or a
 * completed multipart upload as the commit; ranged GETs as reads).
 */
export interface ArtifactStorage {
	/** Streams `source` into a temporary object, counted against the size limit. Nothing is visible yet. */
	writeUpload(buildId: number, source: Readable, opts?: { expectedBytes?: number }): Promise<PendingUpload>;
	/** Moves a complete upload into place as the build's new artifacts file (UploadGone when it is not there). */
	commitUpload(projectId: number, buildId: number, upload: string): Promise<StoredArtifact>;
	/** Removes an upload that will not be committed (idempotent); with `buildId`, only one of that build. */
	discardUpload(upload: string, buildId?: number): Promise<void>;
	/** The key of a stored artifacts file, or of a build's trace, for openObject. */
	artifactKey(projectId: number, buildId: number, file: string): string;
	traceKey(projectId: number, buildId: number): string;
	/** Opens a stored object (or a byte range of it) by key; null when it is gone. */
	openObject(key: string, range?: ByteRange): Promise<OpenedFile | null>;
	/** Opens a stored object for reads anywhere in it (one entry of an artifacts archive); null when it is gone. */
	openRandomAccess(key: string): Promise<RandomAccessFile | null>;
}

const STORED_NAME = /^artifacts-[a-z0-9]+-[0-9a-f]{16}$/;
const TRACE_FILE = "trace.log";
const TMP_DIR = ".tmp";
/** Every key openObject takes: a stored artifacts file or a trace, of a project and build by number. */
const OBJECT_KEY = /^[1-9][0-9]{0,15}\/[1-9][0-9]{0,15}\/(?:artifacts-[a-z0-9]+-[0-9a-f]{16}|trace\.log)$/;
/** Every upload name writeUpload makes; the number is the build's. */
const UPLOAD_NAME = /^\.tmp\/([1-9][0-9]{0,15})-[0-9a-f]{16}\.part$/;

/**
 * The most a build's trace may hold (docs/api.md#internal-builds): an append that would take it
 * past this is refused whole (TraceTooLarge, a 413). Checked before each append, so concurrent
 * appends may pass it by at most one body each.
 */
export const MAX_TRACE_BYTES = 100 * 1024 * 1024;

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

function positiveId(value: number, what: string): string {
	if (!Number.isSafeInteger(value) || value <= 0) throw new TypeError(`${what} must be a positive integer, got ${value}`);
	return String(value);
}

export class ArtifactStore implements ArtifactStorage {
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
		// The name comes from the build record; never let it point anywhere else.
		if (!STORED_NAME.test(file)) throw new TypeError(`not a stored artifacts name: ${JSON.stringify(file)}`);
		return path.join(this.buildDir(projectId, buildId), file);
	}

	tracePath(projectId: number, buildId: number): string {
		return path.join(this.buildDir(projectId, buildId), TRACE_FILE);
	}

	artifactKey(projectId: number, buildId: number, file: string): string {
		return path
			.relative(this.root, this.artifactPath(projectId, buildId, file))
			.split(path.sep)
			.join("/");
	}

	traceKey(projectId: number, buildId: number): string {
		return `${positiveId(projectId, "project id")}/${positiveId(buildId, "build id")}/${TRACE_FILE}`;
	}

	/** The file a key names; a key that is not one the store makes, or that would leave the root, is refused. */
	objectPath(key: string): string {
		if (typeof key !== "string" || !OBJECT_KEY.test(key)) throw new TypeError(`not a stored object key: ${JSON.stringify(key)}`);
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
	async writeUpload(buildId: number, source: Readable, opts: { expectedBytes?: number } = {}): Promise<PendingUpload> {
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
		const file = `artifacts-${Date.now().toString(36)}-${crypto.randomBytes(8).toString("hex")}`;
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
		positiveId(projectId, "project id");
		const pending = await this.writeUpload(buildId, source, opts);
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
