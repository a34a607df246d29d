/**
 * Artifacts and traces, served by the gateway from the artifact store, as GitLab's Workhorse
 * serves them for Rails (docs/architecture.md#artifacts): the builds service authorizes the
 * download and says where the file is (lib/builds/transfer-grants.ts); the bytes go from the store
 * to the client here (the client's pace sets the reads, so a slow client never makes the gateway
 * buffer), and never cross the transporter.
 *
 * The answer has Content-Length, the grant's Content-Type (with `nosniff` and a sandboxing CSP)
 * and Content-Disposition, a strong ETag (If-None-Match → 304) and `Accept-Ranges: bytes`: one
 * byte range is a 206 with exactly those bytes, a range the file cannot satisfy a 416
 * (gateway/files/byte-ranges.ts, as for one file of an archive), so `curl -C -` resumes.
 * A HEAD gets the same answer without reading the file (`curl -I` for its size). Where the operator
 * chose it (an S3 store with ARTIFACTS_S3_PROXY_DOWNLOAD=false), an artifacts archive is a 302 to a
 * presigned URL of the bucket instead, as GitLab's `proxy_download: false` answers.
 */
import type { IncomingMessage, ServerResponse } from "http";
import type { Context } from "moleculer";
import { notFound } from "../../lib/api/errors";
import type { ArtifactStorage } from "../../lib/builds/artifact-storage";
import type { DownloadGrant } from "../../lib/builds/transfer-grants";
import { MAX_VALIDATOR_HEADER, rangeAnswer } from "./byte-ranges";
import { isHead } from "../server/http-server";
import { USER_CONTENT_HEADERS } from "../server/responses";
import type { AliasFunction } from "../server/routing";

export type Req = IncomingMessage & { $ctx: Context; $params: Record<string, unknown> };

/** What a file alias needs of the gateway service it runs in (`this`). */
export interface FileHost {
	artifactStore: ArtifactStorage;
}

/** Whether an If-None-Match header names `etag` (weak comparison, RFC 9110 §13.1.2), or is `*`. */
export function noneMatch(header: string | undefined, etag: string): boolean {
	if (header === undefined || header.length > MAX_VALIDATOR_HEADER) return false;
	if (header.trim() === "*") return true;
	const bare = etag.replace(/^W\//, "");
	return header.split(",").some(tag => tag.trim().replace(/^W\//, "") === bare);
}

/**
 * A moleculer-web alias function (it runs after the route's authentication and authorization)
 * serving the file that `grantAction` authorizes; its parameters are the route's.
 */
export function fileDownload(grantAction: string, opts: { timeout?: number; redirects?: boolean } = {}): AliasFunction {
	const callOpts = opts.timeout ? { timeout: opts.timeout } : {};
	const redirects = !!opts.redirects;
	// Settles once the stored file is closed: moleculer-web does not wait for it; a test can.
	const download = function download(this: FileHost, req: Req, res: ServerResponse, next: (err?: unknown) => void): Promise<void> {
		return serve(this.artifactStore, req, res, grantAction, callOpts, redirects).catch(err => {
			if (!res.headersSent) return next(err);
			// Too late for an error body: cut the response short so the client sees it is incomplete.
			res.destroy();
		});
	};
	return Object.assign(download, { openapi: redirects ? REDIRECTING_DOWNLOAD_OPENAPI : DOWNLOAD_OPENAPI, grantAction });
}

/** What the API description says of these answers (gateway/openapi/openapi.ts merges it into the operation). */
export const DOWNLOAD_OPENAPI = {
	responses: {
		"200": {
			description: "The file, with Content-Length, ETag and `Accept-Ranges: bytes`.",
			content: { "*/*": { schema: { type: "string", contentMediaType: "application/octet-stream" } } },
		},
		"206": {
			description: "One byte range of the file (`Range: bytes=first-last`, `bytes=first-`, `bytes=-suffix`), with Content-Range.",
			content: { "*/*": { schema: { type: "string", contentMediaType: "application/octet-stream" } } },
		},
		"304": { description: "`If-None-Match` names the file's ETag." },
		"416": {
			description: "The range starts past the end of the file; `Content-Range: bytes */<size>`.",
			content: { "application/json": { schema: { $ref: "#/components/schemas/Message" } } },
		},
	},
};

/** An artifacts archive's download, which the operator may send to the bucket instead (ARTIFACTS_S3_PROXY_DOWNLOAD=false). */
const REDIRECTING_DOWNLOAD_OPENAPI = {
	responses: {
		...DOWNLOAD_OPENAPI.responses,
		"302": {
			description:
				"Only where the operator has artifacts downloaded from the S3 bucket itself (ARTIFACTS_S3_PROXY_DOWNLOAD=false): " +
				"a presigned URL of the file, valid for five minutes, in Location.",
		},
	},
};

async function serve(store: ArtifactStorage, req: Req, res: ServerResponse, grantAction: string, callOpts: object, redirects: boolean): Promise<void> {
	const grant = await req.$ctx.call<DownloadGrant, Record<string, unknown>>(grantAction, { ...req.$params }, callOpts);
	// Where the operator chose it (GitLab's proxy_download: false), the client fetches the bytes from the bucket itself.
	const direct =
		redirects && grant.key !== null
			? await store.directDownloadUrl(grant.key, { contentType: grant.contentType, contentDisposition: grant.headers["Content-Disposition"] })
			: null;
	if (direct) {
		const cached = noneMatch(req.headers["if-none-match"], grant.etag);
		res.writeHead(cached ? 304 : 302, cached ? { ETag: grant.etag } : { Location: direct, "Cache-Control": "no-store" });
		res.end();
		return;
	}
	const answer = rangeAnswer(req, grant);
	const opened = grant.key === null ? null : await store.openObject(grant.key, answer.bytes ?? undefined);
	try {
		// Gone since the grant (erased, replaced), or shorter than granted: not the file that was authorized.
		if (grant.key !== null && (!opened || opened.size < grant.size)) throw notFound();
		// A browser must not render an uploaded file (HTML, SVG) as anything but its Content-Type, nor run it.
		const headers: Record<string, string> = {
			...grant.headers,
			"Content-Type": grant.contentType,
			...USER_CONTENT_HEADERS,
			ETag: grant.etag,
			"Accept-Ranges": "bytes",
		};
		if (noneMatch(req.headers["if-none-match"], grant.etag)) {
			res.writeHead(304, { ETag: grant.etag, "Accept-Ranges": "bytes" });
			res.end();
			return;
		}
		if (answer.status === 416) throw answer.refusal;
		res.writeHead(answer.status, { ...headers, ...answer.headers });
		if (!opened || !answer.bytes || isHead(req)) {
			res.end();
			return;
		}
		await opened.sendTo(res);
	} finally {
		// Every way out closes the file, a failure included (after a send it is closed already; a
		// second close does nothing).
		await opened?.close();
	}
}
