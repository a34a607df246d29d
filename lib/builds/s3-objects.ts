/**
 * One bucket (and key prefix) of an S3-compatible object store, through the AWS SDK for
 * JavaScript v3 (@aws-sdk/client-s3, with @aws-sdk/lib-storage for streamed uploads: one PUT below a
 * part's size, multipart beyond it). I/O and the meaning of S3's answers only: which object is
 * missing, which write lost a race, and which failure means the store is unavailable (a 503, as a
 * data store that cannot be reached answers). The artifact store's rules are
 * lib/builds/s3-artifact-store.ts and lib/builds/s3-traces.ts. Why this client: docs/architecture.md#s3-client.
 */
import {
	AbortMultipartUploadCommand,
	DeleteObjectCommand,
	DeleteObjectsCommand,
	GetObjectCommand,
	HeadBucketCommand,
	HeadObjectCommand,
	ListMultipartUploadsCommand,
	ListObjectsV2Command,
	PutObjectCommand,
	S3Client,
	type GetObjectCommandOutput,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { Readable, type Writable } from "stream";
import { pipeline } from "stream/promises";
import type { S3Settings } from "../../config/artifacts";
import { unavailable } from "../api/errors";
import type { ByteRange } from "./file-streams";

/** Bytes per part of a multipart upload (S3 takes 5 MiB to 5 GiB): a streamed upload holds UPLOAD_QUEUE + 1 of them at most. */
export const PART_BYTES = 8 * 1024 * 1024;
/** Parts sent at once by one upload. */
const UPLOAD_QUEUE = 2;
/** S3's most parts per upload: a part size that keeps MAX_ARTIFACT_BYTES within them. */
const MAX_PARTS = 10_000;
/** How long a presigned download URL stays valid. */
const PRESIGNED_SECONDS = 5 * 60;
/** A connection to the store must be made within this; a socket with nothing moving for SOCKET_IDLE_MS is dropped. */
const CONNECT_MS = 5000;
/** Above the gateway's own idle timeout for clients (a download waits on its client's pace). */
const SOCKET_IDLE_MS = 60_000;
/** At most one warning per this while the store stays unavailable. */
const WARN_EVERY_MS = 10_000;

const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN", "ECONNABORTED"]);

interface S3Error {
	name?: string;
	code?: string;
	Code?: string;
	$metadata?: { httpStatusCode?: number };
}

/** S3 says the object (or upload) is not there. */
export function isNotFound(err: unknown): boolean {
	const e = err as S3Error;
	return ["NoSuchKey", "NotFound", "NoSuchUpload"].includes(e?.name ?? "") || (e?.$metadata?.httpStatusCode === 404 && e?.name !== "NoSuchBucket");
}

/** A conditional write (If-None-Match, If-Match) that lost: the object is not what the writer saw. */
export function isPreconditionFailed(err: unknown): boolean {
	const e = err as S3Error;
	return e?.name === "PreconditionFailed" || e?.$metadata?.httpStatusCode === 412;
}

/** The store could not be reached or failed on its side: worth trying again later. */
function isUnavailable(err: unknown): boolean {
	const e = err as S3Error;
	const status = e?.$metadata?.httpStatusCode;
	// The code, or its name in the message where a wrapper kept only that (the SDK wraps what it does not take for an Error).
	const network = NETWORK_CODES.has(e?.code ?? "") || [...NETWORK_CODES].some(code => (err as Error)?.message?.includes(code));
	return (
		network ||
		["TimeoutError", "RequestTimeout", "SlowDown", "ServiceUnavailable", "InternalError"].includes(e?.name ?? "") ||
		(typeof status === "number" && status >= 500)
	);
}

/** An object listed under a prefix. */
export interface ListedObject {
	/** Its key without the store's prefix. */
	name: string;
	size: number;
	etag: string;
	lastModified: number;
}

/** An object's bytes as GetObject answers them: the whole object's size, the ETag, and the body to read (or destroy). */
export interface ObjectBody {
	size: number;
	etag: string;
	body: Readable;
}

export class S3Objects {
	readonly client: S3Client;
	/** Signs URLs for clients: the public endpoint's host, else the same as `client` (no request is ever sent through it). */
	private readonly signer: S3Client;
	private readonly partBytes: number;
	private unavailableSince = 0;
	private warnedAt = 0;

	constructor(
		private readonly settings: S3Settings,
		maxObjectBytes: number,
		private readonly warn: (message: string) => void = () => {},
	) {
		this.client = s3Client(settings, settings.endpoint);
		this.signer = settings.publicEndpoint ? s3Client(settings, settings.publicEndpoint) : this.client;
		this.partBytes = Math.max(PART_BYTES, Math.ceil(maxObjectBytes / MAX_PARTS));
	}

	get bucket(): string {
		return this.settings.bucket;
	}

	/** The full key of a name (the store's prefix first). */
	key(name: string): string {
		return this.settings.prefix + name;
	}

	/** Runs one request, telling a missing object (null with `missing`), a store that is away (503), and anything else apart. */
	async send<T>(work: () => Promise<T>): Promise<T> {
		try {
			const result = await work();
			this.recovered();
			return result;
		} catch (err) {
			throw this.classify(err);
		}
	}

	/** `err` as the store's caller should see it: a 503 when the store is away (warned about, at most every 10 s), else itself. */
	classify(err: unknown): unknown {
		if (!isUnavailable(err)) return err;
		const now = Date.now();
		if (!this.unavailableSince) this.unavailableSince = now;
		if (now - this.warnedAt >= WARN_EVERY_MS) {
			this.warnedAt = now;
			this.warn(`The artifacts bucket ${this.bucket} is unavailable: ${(err as Error).message || (err as S3Error).name} (answering 503 meanwhile)`);
		}
		return Object.assign(unavailable(), { cause: err });
	}

	private recovered(): void {
		if (!this.unavailableSince) return;
		this.warn(`The artifacts bucket ${this.bucket} answers again, after ${Math.round((Date.now() - this.unavailableSince) / 1000)} s.`);
		this.unavailableSince = 0;
		this.warnedAt = 0;
	}

	async checkBucket(): Promise<void> {
		await this.send(() => this.client.send(new HeadBucketCommand({ Bucket: this.bucket })));
	}

	/** Size and ETag of an object; null when it is not there. */
	async head(name: string): Promise<{ size: number; etag: string; metadata: Record<string, string> } | null> {
		try {
			const out = await this.send(() => this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.key(name) })));
			return { size: out.ContentLength ?? 0, etag: out.ETag ?? "", metadata: out.Metadata ?? {} };
		} catch (err) {
			if (isNotFound(err)) return null;
			throw err;
		}
	}

	/**
	 * An object's bytes, or a range of them (with `ifMatch`, only if it is still that version); null
	 * when it is not there. A range that starts past its end answers the object's size and no body.
	 */
	async get(name: string, range?: ByteRange, ifMatch?: string): Promise<ObjectBody | null> {
		let out: GetObjectCommandOutput;
		try {
			out = await this.send(() =>
				this.client.send(
					new GetObjectCommand({ Bucket: this.bucket, Key: this.key(name), Range: range && `bytes=${range.start}-${range.end}`, IfMatch: ifMatch }),
				),
			);
		} catch (err) {
			if (isNotFound(err) || isPreconditionFailed(err)) return null;
			if ((err as S3Error).$metadata?.httpStatusCode === 416) {
				const head = await this.head(name);
				return head && { size: head.size, etag: head.etag, body: emptyBody() };
			}
			throw err;
		}
		const total = /\/(\d+)$/.exec(out.ContentRange ?? "")?.[1];
		return { size: total === undefined ? (out.ContentLength ?? 0) : Number(total), etag: out.ETag ?? "", body: out.Body as Readable };
	}

	/**
	 * Writes a small object whole. Conditional writes (a PreconditionFailed when they do not hold):
	 * `ifNoneMatch` creates it only when there is none, `ifMatch` replaces only that version of it.
	 */
	async put(name: string, body: Buffer | string, opts: { ifNoneMatch?: boolean; ifMatch?: string; metadata?: Record<string, string> } = {}): Promise<void> {
		await this.send(() =>
			this.client.send(
				new PutObjectCommand({
					Bucket: this.bucket,
					Key: this.key(name),
					Body: body,
					IfNoneMatch: opts.ifNoneMatch ? "*" : undefined,
					IfMatch: opts.ifMatch,
					Metadata: opts.metadata,
				}),
			),
		);
	}

	/**
	 * Streams `body` into an object: one PUT when it fits in a part, a multipart upload beyond. The
	 * object appears only once complete; a failed upload is aborted (its parts removed). Settles once
	 * the upload has, and only then.
	 */
	async upload(name: string, body: Readable): Promise<void> {
		const upload = new Upload({
			client: this.client,
			params: { Bucket: this.bucket, Key: this.key(name), Body: body },
			partSize: this.partBytes,
			queueSize: UPLOAD_QUEUE,
		});
		await this.send(() => upload.done());
	}

	/** Removes an object (none there: nothing to do). */
	async delete(name: string): Promise<void> {
		await this.send(() => this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.key(name) })));
	}

	/** Removes objects, a thousand per request (S3's most). */
	async deleteMany(names: string[]): Promise<void> {
		for (let i = 0; i < names.length; i += 1000) {
			const batch = names.slice(i, i + 1000);
			const out = await this.send(() =>
				this.client.send(new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: batch.map(n => ({ Key: this.key(n) })), Quiet: true } })),
			);
			const failed = (out.Errors ?? []).filter(e => e.Code !== "NoSuchKey");
			if (failed.length)
				throw new Error(
					`could not remove ${failed.length} object(s) of the artifacts bucket, ${failed[0].Key}: ${failed[0].Code} ${failed[0].Message}`,
				);
		}
	}

	/** Every object whose name starts with `prefix`, in key order. */
	async *list(prefix: string): AsyncGenerator<ListedObject> {
		let token: string | undefined;
		do {
			const page = await this.send(() =>
				this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.key(prefix), ContinuationToken: token })),
			);
			for (const o of page.Contents ?? [])
				if (o.Key?.startsWith(this.settings.prefix))
					yield {
						name: o.Key.slice(this.settings.prefix.length),
						size: o.Size ?? 0,
						etag: o.ETag ?? "",
						lastModified: o.LastModified?.getTime() ?? 0,
					};
			token = page.IsTruncated ? page.NextContinuationToken : undefined;
		} while (token);
	}

	/** Multipart uploads begun under the store's prefix and neither completed nor aborted. */
	async *listUploads(): AsyncGenerator<{ name: string; uploadId: string; initiated: number }> {
		let keyMarker: string | undefined;
		let uploadIdMarker: string | undefined;
		for (;;) {
			const page = await this.send(() =>
				this.client.send(
					new ListMultipartUploadsCommand({
						Bucket: this.bucket,
						Prefix: this.settings.prefix || undefined,
						KeyMarker: keyMarker,
						UploadIdMarker: uploadIdMarker,
					}),
				),
			);
			for (const u of page.Uploads ?? [])
				if (u.Key && u.UploadId) yield { name: u.Key.slice(this.settings.prefix.length), uploadId: u.UploadId, initiated: u.Initiated?.getTime() ?? 0 };
			if (!page.IsTruncated) return;
			keyMarker = page.NextKeyMarker;
			uploadIdMarker = page.NextUploadIdMarker;
		}
	}

	async abortUpload(name: string, uploadId: string): Promise<void> {
		try {
			await this.send(() => this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: this.key(name), UploadId: uploadId })));
		} catch (err) {
			if (!isNotFound(err)) throw err;
		}
	}

	/** A URL a client may GET the object with for a few minutes, answered with these headers. */
	async presignedGet(name: string, described: { contentType: string; contentDisposition?: string }): Promise<string> {
		const command = new GetObjectCommand({
			Bucket: this.bucket,
			Key: this.key(name),
			ResponseContentType: described.contentType,
			ResponseContentDisposition: described.contentDisposition,
		});
		return getSignedUrl(this.signer, command, { expiresIn: PRESIGNED_SECONDS });
	}

	destroy(): void {
		this.client.destroy();
		if (this.signer !== this.client) this.signer.destroy();
	}
}

function s3Client(settings: S3Settings, endpoint: string): S3Client {
	return new S3Client({
		region: settings.region,
		...(endpoint ? { endpoint } : {}),
		forcePathStyle: settings.forcePathStyle,
		...(settings.accessKeyId ? { credentials: { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey } } : {}),
		// Checksums only where S3 requires them: servers other than AWS (Ceph, older MinIO) refuse the SDK's newer defaults.
		requestChecksumCalculation: "WHEN_REQUIRED",
		responseChecksumValidation: "WHEN_REQUIRED",
		requestHandler: {
			connectionTimeout: CONNECT_MS,
			socketTimeout: SOCKET_IDLE_MS,
			httpAgent: { keepAlive: true, maxSockets: 256 },
			httpsAgent: { keepAlive: true, maxSockets: 256 },
		},
	});
}

/**
 * Writes a GetObject body into `sink` (leaving it open), at the sink's pace: rejects when the sink
 * closes first, or when the body ends before `bytes` (a store that went away mid-answer).
 */
export async function sendBody(body: Readable, sink: Writable, bytes: number): Promise<void> {
	let sent = 0;
	body.on("data", (chunk: Buffer) => (sent += chunk.length));
	await pipeline(body, sink, { end: false });
	if (sent !== bytes) throw new Error(`the artifacts bucket answered ${sent} of ${bytes} bytes`);
}

function emptyBody(): Readable {
	return Readable.from([]);
}
