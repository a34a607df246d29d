/**
 * What the gateway and the builds service need of the artifact store, whichever holds the bytes:
 * files under one root (lib/builds/artifact-store.ts) or an S3-compatible bucket
 * (lib/builds/s3-artifact-store.ts), chosen by ARTIFACTS_STORE. Both name things the same way: an
 * artifacts file `<project>/<build>/artifacts-<unique>` (a new name per upload, never rewritten),
 * a trace `<project>/<build>/trace.log`. docs/architecture.md#artifacts.
 */
import crypto from "crypto";
import type { Readable } from "stream";
import type { ByteRange, OpenedFile, RandomAccessFile } from "./file-streams";

// The types of the interfaces, for those who implement or call them.
export type { ByteRange, OpenedFile, RandomAccessFile } from "./file-streams";

/** The build an upload is for. */
export interface UploadTarget {
	projectId: number;
	buildId: number;
}

/** A complete upload, not yet visible: commitUpload makes it the build's, discardUpload removes it. */
export interface PendingUpload {
	/** The store's name for it. */
	upload: string;
	size: number;
}

export interface StoredArtifact {
	/** The stored file's name, to keep in the build record. */
	file: string;
	size: number;
}

/** What a file is described as when a client is sent to fetch it from the store itself. */
export interface DirectDownload {
	contentType: string;
	contentDisposition?: string;
}

/** What the gateway needs of the store: write an upload, commit or discard it, open an object by key. */
export interface ArtifactStorage {
	/** Streams `source` into a temporary object, counted against the size limit. Nothing is visible yet. */
	writeUpload(target: UploadTarget, source: Readable, opts?: { expectedBytes?: number }): Promise<PendingUpload>;
	/** Makes a complete upload the build's new artifacts file (UploadGone when it is not there). */
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
	/**
	 * A URL the client may fetch the object from itself (a presigned one), when the operator chose
	 * that over streaming it through the gateway and the object is one the store can hand out; null otherwise.
	 */
	directDownloadUrl(key: string, described: DirectDownload): Promise<string | null>;
}

/** What the builds service needs besides: remove, append to traces, sweep what dead processes left. */
export interface BuildFileStore extends ArtifactStorage {
	removeArtifact(projectId: number, buildId: number, file: string): Promise<void>;
	/** Appends to the build's trace; returns the trace's size afterwards. TraceTooLarge past the limit. */
	appendTrace(projectId: number, buildId: number, text: string | Buffer): Promise<number>;
	/** The trace's size in bytes, 0 when there is none. */
	traceSize(projectId: number, buildId: number): Promise<number>;
	removeTrace(projectId: number, buildId: number): Promise<void>;
	/** After an erase: removes what the build's layout leaves behind (the filesystem's empty directory). */
	pruneBuildDir(projectId: number, buildId: number): Promise<void>;
	/** The build has finished: its trace will hardly grow again, and the store may put it in one piece. */
	settleTrace(projectId: number, buildId: number): Promise<void>;
	/** Removes uploads that dead processes left unfinished, idle for `idleMs`; answers how many. */
	sweepStaleUploads(idleMs: number, now?: number): Promise<number>;
	/** Checks at start-up that the store is there and does what the service relies on; throws saying what is wrong. */
	check(): Promise<void>;
}

/**
 * The most a build's trace may hold (docs/api.md#internal-builds): an append that would take it
 * past this is refused whole (TraceTooLarge, a 413). Checked before each append, so concurrent
 * appends may pass it by at most one body each.
 */
export const MAX_TRACE_BYTES = 100 * 1024 * 1024;

/** A stored artifacts file's name: made by newArtifactName, kept in the build record. */
export const STORED_NAME = /^artifacts-[a-z0-9]+-[0-9a-f]{16}$/;
export const TRACE_FILE = "trace.log";
/** Every key openObject takes: a stored artifacts file or a trace, of a project and build by number. */
const OBJECT_KEY = /^([1-9][0-9]{0,15})\/([1-9][0-9]{0,15})\/(artifacts-[a-z0-9]+-[0-9a-f]{16}|trace\.log)$/;

/** A new artifacts file name: the time (for people listing a build's files) and 64 random bits. */
export function newArtifactName(): string {
	return `artifacts-${Date.now().toString(36)}-${crypto.randomBytes(8).toString("hex")}`;
}

export function positiveId(value: number, what: string): string {
	if (!Number.isSafeInteger(value) || value <= 0) throw new TypeError(`${what} must be a positive integer, got ${value}`);
	return String(value);
}

/** `<project>/<build>/<file>`, the file name checked: it comes from the build record, and must never point anywhere else. */
export function artifactKeyOf(projectId: number, buildId: number, file: string): string {
	if (!STORED_NAME.test(file)) throw new TypeError(`not a stored artifacts name: ${JSON.stringify(file)}`);
	return `${positiveId(projectId, "project id")}/${positiveId(buildId, "build id")}/${file}`;
}

export function traceKeyOf(projectId: number, buildId: number): string {
	return `${positiveId(projectId, "project id")}/${positiveId(buildId, "build id")}/${TRACE_FILE}`;
}

/** A key openObject takes, checked: what it names, or a TypeError for any other string. */
export function parseObjectKey(key: string): { projectId: number; buildId: number; file: string | null } {
	const m = typeof key === "string" ? OBJECT_KEY.exec(key) : null;
	if (!m) throw new TypeError(`not a stored object key: ${JSON.stringify(key)}`);
	return { projectId: Number(m[1]), buildId: Number(m[2]), file: m[3] === TRACE_FILE ? null : m[3] };
}
