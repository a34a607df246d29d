/**
 * Artifacts and traces in an S3-compatible bucket (ARTIFACTS_STORE=s3), under the same rules as the
 * filesystem store (docs/architecture.md#s3-store):
 *
 * - an upload streams straight into the object it will be (`<project>/<build>/artifacts-<unique>`),
 *   one PUT below a part's size and a multipart upload beyond, under the size limit; S3 shows an
 *   object only once it is complete, and no build record names it before the commit, so nothing is
 *   visible before then. A marker object, `uploads/<project>/<build>/artifacts-<unique>`, written
 *   before the first byte, is the upload's name. The commit and a discard each claim it with a
 *   conditional write (`If-Match` on the pending marker), so that exactly one of them decides the
 *   object's fate, as a rename does on disk; a marker left by a process that died (an hour old)
 *   tells the sweep which object to remove; the sweep also aborts multipart uploads begun that long ago;
 * - reads are ranged GETs, streamed at the client's pace; an archive's entries are read with them;
 * - traces are appended as pieces with conditional writes (lib/builds/s3-traces.ts);
 * - the store being away is a 503 to the client, never a 500, and is logged (lib/builds/s3-objects.ts).
 */
import crypto from "crypto";
import { PassThrough, type Readable, type Writable } from "stream";
import { finished } from "stream/promises";
import type { S3Settings } from "../../config/artifacts";
import { ArtifactIncomplete, ArtifactTooLarge, UploadGone } from "./artifact-errors";
import {
	artifactKeyOf,
	newArtifactName,
	parseObjectKey,
	positiveId,
	traceKeyOf,
	type BuildFileStore,
	type ByteRange,
	type DirectDownload,
	type OpenedFile,
	type PendingUpload,
	type RandomAccessFile,
	type StoredArtifact,
	type UploadTarget,
} from "./artifact-storage";
import { ByteLimit, drain, pipeFrom } from "./file-streams";
import { isNotFound, isPreconditionFailed, S3Objects, sendBody, type ObjectBody } from "./s3-objects";
import { S3Traces } from "./s3-traces";

/** Every upload name writeUpload makes: the marker's, which also names the object. */
const UPLOAD_NAME = /^uploads\/([1-9][0-9]{0,15})\/([1-9][0-9]{0,15})\/(artifacts-[a-z0-9]+-[0-9a-f]{16})$/;
const UPLOADS = "uploads/";
/** A marker's states (its body and its `state` metadata): written pending, claimed by one commit or one discard. */
const PENDING = "pending";
const COMMITTING = "committing";
const DISCARDING = "discarding";
/** Where check() proves that the server honours conditional writes (trace appends rely on them); one per check. */
const PROBES = "probes/conditional-write-";

interface Logger {
	warn(...args: unknown[]): void;
}

export class S3ArtifactStore implements BuildFileStore {
	readonly objects: S3Objects;
	readonly traces: S3Traces;

	constructor(
		settings: S3Settings,
		readonly maxArtifactBytes: number,
		logger: Logger = { warn: () => {} },
		maxTraceBytes?: number,
		/** Streams downloads through the gateway (GitLab's proxy_download); false hands out presigned URLs. */
		private readonly proxyDownload = settings.proxyDownload,
	) {
		this.objects = new S3Objects(settings, maxArtifactBytes, message => logger.warn(message));
		this.traces = new S3Traces(this.objects, maxTraceBytes ?? Number.MAX_SAFE_INTEGER, (message, err) => logger.warn(message, err));
	}

	artifactKey(projectId: number, buildId: number, file: string): string {
		return artifactKeyOf(projectId, buildId, file);
	}

	traceKey(projectId: number, buildId: number): string {
		return traceKeyOf(projectId, buildId);
	}

	/**
	 * The bucket is there and ours, and the server honours conditional writes, which trace appends
	 * and upload claims rely on: a second create-if-absent of one object, and a replace of a version
	 * it does not have, are refused (412).
	 */
	async check(): Promise<void> {
		const where = `the artifacts bucket ${this.objects.bucket} (ARTIFACTS_S3_BUCKET)`;
		const probe = PROBES + crypto.randomBytes(8).toString("hex");
		try {
			await this.objects.checkBucket();
			await this.objects.put(probe, "1", { ifNoneMatch: true });
		} catch (err) {
			throw new Error(`${where} cannot be used: ${(err as { cause?: Error }).cause?.message ?? (err as Error).message ?? (err as Error).name}`, {
				cause: err,
			});
		}
		const refused = async (write: () => Promise<void>) => {
			try {
				await write();
				return false;
			} catch (err) {
				if (!isPreconditionFailed(err)) throw err;
				return true;
			}
		};
		try {
			const honoured =
				(await refused(() => this.objects.put(probe, "2", { ifNoneMatch: true }))) &&
				(await refused(() => this.objects.put(probe, "3", { ifMatch: '"0123456789abcdef0123456789abcdef"' })));
			if (!honoured)
				throw new Error(
					`${where}: the server ignored a conditional write (If-None-Match, If-Match), which trace appends need; use an S3 server that honours them`,
				);
		} finally {
			await this.objects.delete(probe);
		}
	}

	// ── uploads ──

	/**
	 * Streams `source` into the object the upload will be, under the size limit; resolves once it is
	 * complete in the bucket. On any failure nothing is left (a multipart upload is aborted, a
	 * complete object removed) and the error rethrown: ArtifactTooLarge, ArtifactInterrupted,
	 * ArtifactIncomplete, or the store's own (a 503 when it is away).
	 */
	async writeUpload({ projectId, buildId }: UploadTarget, source: Readable, opts: { expectedBytes?: number } = {}): Promise<PendingUpload> {
		const file = newArtifactName();
		const key = artifactKeyOf(projectId, buildId, file);
		const upload = UPLOADS + key;
		if (opts.expectedBytes !== undefined && opts.expectedBytes > this.maxArtifactBytes) {
			drain(source);
			throw new ArtifactTooLarge(this.maxArtifactBytes);
		}
		try {
			await this.objects.put(upload, PENDING, { ifNoneMatch: true, metadata: { state: PENDING } });
		} catch (err) {
			drain(source);
			throw err;
		}
		const limit = new ByteLimit(this.maxArtifactBytes);
		const body = new PassThrough({ highWaterMark: 1024 * 1024 });
		// The bucket's failure stops the copy too (the upload would stop reading and leave it waiting).
		const stored = this.objects.upload(key, body).catch((err: Error) => {
			body.destroy(err);
			throw err;
		});
		const [copied, written] = await Promise.allSettled([pipeFrom(source, limit, body), stored]);
		try {
			// What the client did wrong first (too large, gone away); else the bucket's own failure.
			if (copied.status === "rejected") throw copied.reason;
			if (written.status === "rejected") throw written.reason;
			if (opts.expectedBytes !== undefined && limit.bytes !== opts.expectedBytes) throw new ArtifactIncomplete(opts.expectedBytes, limit.bytes);
			return { upload, size: limit.bytes };
		} catch (err) {
			drain(source);
			// The object exists only when the upload completed; its marker always does.
			if (written.status === "fulfilled") await this.objects.delete(key).catch(() => {});
			await this.objects.delete(upload).catch(() => {});
			throw err;
		}
	}

	/**
	 * The object an upload wrote becomes the build's: the commit claims the pending marker, then
	 * removes it. UploadGone when a discard or the sweep had it first, or the object is not there;
	 * a commit that fails once it has claimed the upload removes the object and the marker itself.
	 */
	async commitUpload(projectId: number, buildId: number, upload: string): Promise<StoredArtifact> {
		const { key, file } = this.uploadOf(upload, buildId);
		if (key !== artifactKeyOf(projectId, buildId, file)) throw new TypeError(`not an upload of this build: ${JSON.stringify(upload)}`);
		if (!(await this.claim(upload, COMMITTING))) throw new UploadGone(upload);
		try {
			const stored = await this.objects.head(key);
			if (!stored) throw new UploadGone(upload);
			await this.objects.delete(upload);
			return { file, size: stored.size };
		} catch (err) {
			await this.objects.delete(key).catch(() => {});
			await this.objects.delete(upload).catch(() => {});
			throw err;
		}
	}

	/** Removes an upload nobody commits: only when this discard claims it first (a commit that won keeps its object). */
	async discardUpload(upload: string, buildId?: number): Promise<void> {
		const { key } = this.uploadOf(upload, buildId);
		if (!(await this.claim(upload, DISCARDING))) return;
		await this.objects.delete(key);
		await this.objects.delete(upload);
	}

	/**
	 * Moves a pending marker to `state` with a conditional write on the version read: true for the
	 * one caller that did it, false when the marker is gone or another caller moved it first.
	 */
	private async claim(upload: string, state: string): Promise<boolean> {
		const marker = await this.objects.head(upload);
		if (!marker || marker.metadata.state !== PENDING) return false;
		try {
			await this.objects.put(upload, state, { ifMatch: marker.etag, metadata: { state } });
			return true;
		} catch (err) {
			if (isPreconditionFailed(err) || isNotFound(err)) return false;
			throw err;
		}
	}

	private uploadOf(upload: string, buildId?: number): { key: string; file: string } {
		const m = typeof upload === "string" ? UPLOAD_NAME.exec(upload) : null;
		if (!m || (buildId !== undefined && Number(m[2]) !== buildId)) throw new TypeError(`not an upload of this build: ${JSON.stringify(upload)}`);
		return { key: upload.slice(UPLOADS.length), file: m[3] };
	}

	/**
	 * What processes that died mid-upload left, idle for `idleMs`: each marker's object and the
	 * marker, then every multipart upload begun that long ago (an upload's request lasts minutes
	 * at most, a trace's compaction seconds).
	 */
	async sweepStaleUploads(idleMs: number, now = Date.now()): Promise<number> {
		let removed = 0;
		const stale: string[] = [];
		for await (const marker of this.objects.list(UPLOADS)) if (now - marker.lastModified > idleMs && UPLOAD_NAME.test(marker.name)) stale.push(marker.name);
		// An hour old, pending or claimed by a commit that never finished: no record names the object
		// (a commit removes the marker before the record is written).
		for (const upload of stale) {
			await this.objects.delete(upload.slice(UPLOADS.length));
			await this.objects.delete(upload);
			removed++;
		}
		const abandoned: { name: string; uploadId: string }[] = [];
		for await (const u of this.objects.listUploads()) if (now - u.initiated > idleMs) abandoned.push(u);
		for (const u of abandoned) {
			await this.objects.abortUpload(u.name, u.uploadId);
			// One marker's object and its multipart upload are the same upload: counted once.
			if (!stale.includes(UPLOADS + u.name)) removed++;
		}
		return removed;
	}

	/**
	 * An artifacts file of the filesystem store (`npm run artifacts:to-s3`) under the same key:
	 * "present" when the bucket has it whole already (a run that was interrupted, run again).
	 */
	async importArtifact(projectId: number, buildId: number, file: string, size: number, open: () => Readable): Promise<"copied" | "present"> {
		const key = artifactKeyOf(projectId, buildId, file);
		if ((await this.objects.head(key))?.size === size) return "present";
		await this.objects.upload(key, open());
		const copied = await this.objects.head(key);
		if (copied?.size !== size) throw new Error(`the copy of ${key} has ${copied?.size ?? 0} bytes, not ${size}`);
		return "copied";
	}

	// ── reads ──

	async openObject(key: string, range?: ByteRange): Promise<OpenedFile | null> {
		const { projectId, buildId, file } = parseObjectKey(key);
		if (file === null) return this.traces.open(projectId, buildId, range);
		const got = await this.objects.get(key, range);
		return got && new StoredObject(got, range);
	}

	/** Reads anywhere in an artifacts archive, each a ranged GET of the version first seen (If-Match: a replaced object reads as gone). */
	async openRandomAccess(key: string): Promise<RandomAccessFile | null> {
		const { file } = parseObjectKey(key);
		if (file === null) throw new TypeError(`a trace is not read at random: ${key}`);
		const head = await this.objects.head(key);
		if (!head) return null;
		const objects = this.objects;
		const ranged = async (start: number, end: number): Promise<Readable> => {
			const got = await objects.get(key, { start, end }, head.etag);
			if (!got) throw new Error(`artifacts object ${key} is gone`);
			return got.body;
		};
		return {
			size: head.size,
			async read(buffer, offset, length, position) {
				const end = Math.min(position + length, head.size) - 1;
				if (end < position) return 0;
				let at = offset;
				for await (const chunk of await ranged(position, end)) at += (chunk as Buffer).copy(buffer, at);
				return at - offset;
			},
			readStream: (start, end) => ranged(start, end - 1),
			close: async () => {},
		};
	}

	/** A presigned GET of an artifacts file when downloads are not proxied; traces (pieces) are always streamed. */
	async directDownloadUrl(key: string, described: DirectDownload): Promise<string | null> {
		if (this.proxyDownload || parseObjectKey(key).file === null) return null;
		return this.objects.presignedGet(key, described);
	}

	// ── the builds service's ──

	async removeArtifact(projectId: number, buildId: number, file: string): Promise<void> {
		await this.objects.delete(artifactKeyOf(projectId, buildId, file));
	}

	appendTrace(projectId: number, buildId: number, text: string | Buffer): Promise<number> {
		return this.traces.append(projectId, buildId, text);
	}

	traceSize(projectId: number, buildId: number): Promise<number> {
		return this.traces.size(projectId, buildId);
	}

	removeTrace(projectId: number, buildId: number): Promise<void> {
		return this.traces.remove(projectId, buildId);
	}

	/** A bucket has no directories to prune. */
	pruneBuildDir(projectId: number, buildId: number): Promise<void> {
		positiveId(projectId, "project id");
		positiveId(buildId, "build id");
		return Promise.resolve();
	}

	settleTrace(projectId: number, buildId: number): Promise<void> {
		return this.traces.compact(projectId, buildId);
	}

	destroy(): void {
		this.objects.destroy();
	}
}

/** One GetObject answer, sent once. */
class StoredObject implements OpenedFile {
	readonly size: number;

	constructor(
		private readonly got: ObjectBody,
		private readonly range: ByteRange | undefined,
	) {
		this.size = got.size;
	}

	async sendTo(sink: Writable): Promise<void> {
		try {
			const bytes = this.range ? this.range.end - this.range.start + 1 : this.size;
			await sendBody(this.got.body, sink, bytes);
			sink.end();
			await finished(sink, { readable: false });
		} finally {
			await this.close();
		}
	}

	close(): Promise<void> {
		this.got.body.destroy();
		return Promise.resolve();
	}
}
