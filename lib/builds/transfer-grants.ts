/**
 * What the builds service answers when it authorizes a download (docs/architecture.md#artifacts):
 * where the file is in the artifact store and how to describe it. The gateway streams the bytes
 * from the store itself (gateway/files/file-download.ts), as GitLab's Workhorse does for Rails; the
 * bytes never cross the transporter. Pure: no I/O here.
 */
import type { ArtifactsDoc } from "../../models/build";
import { attachmentDisposition } from "./build-input";

export interface DownloadGrant {
	/** The object's key in the artifact store (never a client's input), or null for an empty file nobody wrote. */
	key: string | null;
	/** Bytes to serve: the whole file when it was granted (a trace may grow after; its first `size` bytes never change). */
	size: number;
	/** A strong validator of those bytes, quoted (RFC 9110 §8.8.3). */
	etag: string;
	contentType: string;
	/** Further response headers (Content-Disposition…); Content-Type and Content-Length come from the above. */
	headers: Record<string, string>;
}

/**
 * A build's artifacts. Each upload is stored under a new name and never changed after, so that
 * name identifies the bytes (no checksum of the whole file is needed to validate a cached copy).
 */
export function artifactsGrant(key: string, artifacts: ArtifactsDoc): DownloadGrant {
	return {
		key,
		size: artifacts.size,
		etag: `"${artifacts.file.replace(/^artifacts-/, "")}"`,
		contentType: "application/octet-stream",
		headers: { "Content-Disposition": attachmentDisposition(artifacts.filename), "Content-Transfer-Encoding": "binary" },
	};
}

/**
 * A build's trace, `size` bytes of it (0: none yet, or erased). A trace is only appended to, and an
 * erased build takes no more, so its length identifies its bytes.
 */
export function traceGrant(key: string | null, buildId: number, size: number): DownloadGrant {
	return {
		key: size > 0 ? key : null,
		size,
		etag: `"trace-${buildId}-${size}"`,
		contentType: "text/plain",
		headers: { "Content-Disposition": `infile; filename="${buildId}.log"` },
	};
}

/** One file of a build's artifacts archive (v4): the archive's grant and the entry's path inside it. */
export interface EntryGrant extends DownloadGrant {
	entry: string;
}

export function artifactEntryGrant(key: string, artifacts: ArtifactsDoc, entry: string): EntryGrant {
	return { ...artifactsGrant(key, artifacts), entry };
}
