/**
 * One file out of a build's artifacts archive, served by the gateway as Workhorse serves it
 * (docs/api.md#v4-job-artifacts): the builds service authorizes it and says which archive and
 * which path (lib/builds/transfer-grants.ts `EntryGrant`); the gateway reads the archive's central
 * directory from the artifact store, finds the entry and streams its bytes (inflated when
 * deflated), with the download headers of gateway/file-download.ts: Content-Length, a strong ETag
 * (the archive's and the entry's place in it), `If-None-Match` → 304, one byte range → 206, 416.
 */
import type { ServerResponse } from "http";
import path from "path";
import { pipeline } from "stream/promises";
import { notFound } from "../lib/api/errors";
import { attachmentDisposition } from "../lib/builds/build-input";
import type { EntryGrant } from "../lib/builds/transfer-grants";
import { openArchive, type OpenArchive } from "../lib/builds/zip-entries";
import { contentRange } from "./byte-ranges";
import { DOWNLOAD_OPENAPI, noneMatch, rangeNotSatisfiable, wantedRange, type FileHost, type Req } from "./file-download";
import { isHead } from "./http-server";
import type { AliasFunction } from "./routes/types";

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
		const headers: Record<string, string> = {
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
		const range = wantedRange(req, { size: entry.size, etag });
		if (range.kind === "unsatisfiable") throw rangeNotSatisfiable(entry.size);
		const [start, end] = range.kind === "partial" ? [range.start, range.end] : [0, entry.size - 1];
		if (range.kind === "partial") headers["Content-Range"] = contentRange(start, end, entry.size);
		headers["Content-Length"] = String(end - start + 1);
		res.writeHead(range.kind === "partial" ? 206 : 200, headers);
		if (entry.size === 0 || isHead(req)) {
			res.end();
			return;
		}
		await pipeline(await entry.open(range.kind === "partial" ? { start, end } : undefined), res);
	} finally {
		// The file closes once the entry's stream has ended too.
		archive.close();
	}
}
