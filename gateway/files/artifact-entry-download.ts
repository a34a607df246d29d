/**
 * One file out of a build's artifacts archive, served by the gateway as Workhorse serves it
 * (docs/api.md#v4-job-artifacts): the builds service authorizes it and says which archive and
 * which path (lib/builds/transfer-grants.ts `EntryGrant`); the gateway reads the archive's central
 * directory from the artifact store, finds the entry and streams its bytes (inflated when
 * deflated), with the download headers of gateway/files/file-download.ts: Content-Length, a strong ETag
 * (the archive's and the entry's place in it), `If-None-Match` → 304, and gateway/files/byte-ranges.ts's
 * answer to a Range (206, 416), as for a whole file.
 */
import type { ServerResponse } from "http";
import path from "path";
import { pipeline } from "stream/promises";
import { notFound } from "../../lib/api/errors";
import { attachmentDisposition } from "../../lib/builds/build-input";
import type { EntryGrant } from "../../lib/builds/transfer-grants";
import { openArchive, type OpenArchive } from "../../lib/builds/zip-entries";
import { rangeAnswer } from "./byte-ranges";
import { DOWNLOAD_OPENAPI, noneMatch, type FileHost, type Req } from "./file-download";
import { isHead } from "../server/http-server";
import type { AliasFunction } from "../server/routing";

/** A moleculer-web alias function serving the archive entry that `grantAction` authorizes. */
export function entryDownload(grantAction: string, opts: { timeout?: number } = {}): AliasFunction {
	const callOpts = opts.timeout ? { timeout: opts.timeout } : {};
	const download = function download(this: FileHost, req: Req, res: ServerResponse, next: (err?: unknown) => void): Promise<void> {
		return serve(this, req, res, grantAction, callOpts).catch(err => {
			if (!res.headersSent) return next(err);
			// Too late for an error body: cut the response short so the client sees it is incomplete.
			res.destroy();
		});
	};
	return Object.assign(download, { openapi: DOWNLOAD_OPENAPI, grantAction });
}

async function serve(host: FileHost, req: Req, res: ServerResponse, grantAction: string, callOpts: object): Promise<void> {
	const grant = await req.$ctx.call<EntryGrant, Record<string, unknown>>(grantAction, { ...req.$params }, callOpts);
	const file = grant.key === null ? null : await host.artifactStore.openRandomAccess(grant.key);
	// Gone since the grant (erased, replaced), or shorter than granted: not the archive that was authorized.
	if (!file || file.size < grant.size) {
		await file?.close();
		throw notFound();
	}
	let archive: OpenArchive;
	try {
		archive = await openArchive(file);
	} catch {
		// Not a zip archive: it has no files to serve.
		throw notFound();
	}
	try {
		const entry = await archive.find(grant.entry);
		if (!entry) throw notFound();
		const etag = `"${grant.etag.replace(/"/g, "")}-${entry.offset}"`;
		const headers = {
			"Content-Type": "application/octet-stream",
			"Content-Disposition": attachmentDisposition(path.posix.basename(grant.entry)),
			"X-Content-Type-Options": "nosniff",
			ETag: etag,
			"Accept-Ranges": "bytes",
		};
		if (noneMatch(req.headers["if-none-match"], etag)) {
			res.writeHead(304, { ETag: etag, "Accept-Ranges": "bytes" });
			res.end();
			return;
		}
		const answer = rangeAnswer(req, { size: entry.size, etag });
		if (answer.status === 416) throw answer.refusal;
		res.writeHead(answer.status, { ...headers, ...answer.headers });
		if (!answer.bytes || isHead(req)) {
			res.end();
			return;
		}
		// The whole entry is read as a stream of its own, not as a range of it.
		await pipeline(await entry.open(answer.status === 206 ? answer.bytes : undefined), res);
	} finally {
		// The file closes once the entry's stream has ended too.
		archive.close();
	}
}
