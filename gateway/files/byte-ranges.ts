/**
 * The `Range` request header (RFC 9110 §14) of every download the gateway serves, read by
 * range-parser (the parser of Express's `send`) inside the gateway's bounds, and the one answer
 * it gets: 200, 206 with Content-Range, or 416 (docs/api.md#byte-ranges).
 */
import type { IncomingMessage } from "http";
import rangeParser from "range-parser";
import { ApiError } from "../../lib/api/errors";
import type { ByteRange } from "../../lib/builds/artifact-storage";

/**
 * Longer Range headers are ignored before they are parsed, and so is a header of several ranges
 * (no client of artifacts or traces asks for multipart/byteranges): thousands of small ranges
 * cost one look at the header (docs/configuration.md#limits).
 */
export const MAX_RANGE_HEADER = 200;

/** Longer If-Range (here) and If-None-Match (gateway/files/file-download.ts) headers are not read: an ETag here is a few dozen characters. */
export const MAX_VALIDATOR_HEADER = 1024;

type RangeRequest =
	/** No Range, or one that is ignored: serve the whole file. */
	| { kind: "whole" }
	/** Serve bytes `start` to `end`, both inclusive, within the file. */
	| { kind: "partial"; start: number; end: number }
	/** A valid single range that the file cannot satisfy: 416 with `Content-Range: bytes *\/size`. */
	| { kind: "unsatisfiable" };

const WHOLE: RangeRequest = { kind: "whole" };
const UNSATISFIABLE: RangeRequest = { kind: "unsatisfiable" };
/** The `bytes` unit (any case), then visible ASCII only: range-parser takes any unit and trims any Unicode space. */
const BYTES = /^bytes[ \t]*=[\t\x20-\x7e]*$/i;
/** A suffix range of a length above zero (`bytes=-N`). */
const SUFFIX = /=[ \t]*-[ \t]*0*[1-9]/;

/** What `header` asks of a file of `size` bytes. */
export function parseRange(header: string | string[] | undefined, size: number): RangeRequest {
	if (typeof header !== "string" || header.length > MAX_RANGE_HEADER || header.includes(",") || !BYTES.test(header)) return WHOLE;
	const ranges = rangeParser(size, header);
	if (ranges === -2) return WHOLE;
	if (ranges !== -1) return { kind: "partial", start: ranges[0].start, end: ranges[0].end };
	// -1 (no byte of the file asked for) also stands for two asks RFC 9110 §14.1.2 answers otherwise:
	// a last position before the first is invalid, so ignored (against a file without end, it is
	// the only -1 left); a suffix longer than the file asks for all of it (range-parser 1.3.0
	// refuses it: jshttp/range-parser#66).
	if (rangeParser(Infinity, header) === -1) return WHOLE;
	if (size > 0 && SUFFIX.test(header)) return { kind: "partial", start: 0, end: size - 1 };
	return UNSATISFIABLE;
}

/** `Content-Range` of a 206 answer. */
export const contentRange = (start: number, end: number, size: number) => `bytes ${start}-${end}/${size}`;

/** `Content-Range` of a 416 answer. */
export const unsatisfiedRange = (size: number) => `bytes */${size}`;

type RangeAnswer =
	/** The whole file: `bytes` 0 to size - 1 (null when it is empty). */
	| { status: 200; bytes: ByteRange | null; headers: Record<string, string> }
	/** One range of the file, with Content-Range. */
	| { status: 206; bytes: ByteRange; headers: Record<string, string> }
	/** A range the file cannot satisfy: the error to throw once a 404 and a 304 are ruled out. */
	| { status: 416; bytes: null; refusal: ApiError };

/**
 * What a download of `file` answers to the request's Range: its status, the bytes it sends (both
 * ends inclusive) and the headers that say so (Content-Range on a 206, Content-Length). If-Range
 * (strong comparison) drops the Range when the file is no longer the one the client has.
 */
export function rangeAnswer(req: Pick<IncomingMessage, "headers">, file: { size: number; etag: string }): RangeAnswer {
	const range = ifRangeHolds(req, file.etag) ? parseRange(req.headers.range, file.size) : WHOLE;
	if (range.kind === "unsatisfiable") {
		const headers = { "Content-Range": unsatisfiedRange(file.size), "Accept-Ranges": "bytes" };
		return { status: 416, bytes: null, refusal: new ApiError(416, { message: "416 Requested Range Not Satisfiable" }, headers) };
	}
	if (range.kind === "partial") {
		const headers = { "Content-Range": contentRange(range.start, range.end, file.size), "Content-Length": String(range.end - range.start + 1) };
		return { status: 206, bytes: { start: range.start, end: range.end }, headers };
	}
	return { status: 200, bytes: file.size > 0 ? { start: 0, end: file.size - 1 } : null, headers: { "Content-Length": String(file.size) } };
}

/** Whether If-Range, when sent, names the file's strong ETag. */
function ifRangeHolds(req: Pick<IncomingMessage, "headers">, etag: string): boolean {
	const ifRange = req.headers["if-range"];
	return typeof ifRange !== "string" || (ifRange.length <= MAX_VALIDATOR_HEADER && ifRange.trim() === etag && !etag.startsWith("W/"));
}
