/**
 * The `Range` request header (RFC 9110 §14), for files the gateway serves. Pure and bounded.
 *
 * One range is served as asked (206). A header the gateway does not take is ignored and the whole
 * file served (200), as the RFC lets a server do: a unit other than bytes, a malformed header, a
 * header longer than MAX_RANGE_HEADER, and several ranges (no client of artifacts or traces asks for
 * multipart/byteranges; refusing them up front also closes the many-small-ranges amplification).
 */

/** Longer Range headers are ignored before they are parsed. */
export const MAX_RANGE_HEADER = 200;

export type RangeRequest =
	/** No Range, or one that is ignored: serve the whole file. */
	| { kind: "whole" }
	/** Serve bytes `start` to `end`, both inclusive, within the file. */
	| { kind: "partial"; start: number; end: number }
	/** A valid single range that the file cannot satisfy: 416 with `Content-Range: bytes *\/size`. */
	| { kind: "unsatisfiable" };

const WHOLE: RangeRequest = { kind: "whole" };
const UNSATISFIABLE: RangeRequest = { kind: "unsatisfiable" };
const SPEC = /^bytes[ \t]*=[ \t]*(\d*)[ \t]*-[ \t]*(\d*)[ \t]*$/i;

/** What `header` asks of a file of `size` bytes. */
export function parseRange(header: string | string[] | undefined, size: number): RangeRequest {
	if (typeof header !== "string" || header.length > MAX_RANGE_HEADER || header.includes(",")) return WHOLE;
	const m = SPEC.exec(header);
	if (!m || (m[1] === "" && m[2] === "")) return WHOLE;
	if (m[1] === "") {
		// bytes=-N: the last N bytes.
		const suffix = Number(m[2]);
		if (suffix === 0 || size === 0) return UNSATISFIABLE;
		return { kind: "partial", start: Math.max(0, size - suffix), end: size - 1 };
	}
	const start = Number(m[1]);
	const end = m[2] === "" ? Infinity : Number(m[2]);
	if (end < start) return WHOLE;
	if (start >= size) return UNSATISFIABLE;
	return { kind: "partial", start, end: Math.min(end, size - 1) };
}

/** `Content-Range` of a 206 answer. */
export const contentRange = (start: number, end: number, size: number) => `bytes ${start}-${end}/${size}`;

/** `Content-Range` of a 416 answer. */
export const unsatisfiedRange = (size: number) => `bytes */${size}`;
