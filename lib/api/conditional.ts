/**
 * API v4's conditional DELETE (GitLab's `destroy_conditionally!`, docs/api.md#v4-conditional-delete):
 * with `If-Unmodified-Since`, a record changed after that time is not deleted, `412 Precondition
 * Failed`. HTTP dates have whole seconds, so the record's time is compared at that resolution; a
 * header that is not a date is ignored, as GitLab ignores it.
 */
import { ApiError } from "./errors";

/** Longer headers are not parsed (an HTTP date is 29 characters). */
const MAX_DATE_HEADER = 64;

export const preconditionFailed = () => new ApiError(412, { message: "412 Precondition Failed" });

/** The time an `If-Unmodified-Since` header names, in ms; null when it names none. */
export function unmodifiedSince(header: string | undefined): number | null {
	if (header === undefined || header.length > MAX_DATE_HEADER) return null;
	const at = Date.parse(header);
	return Number.isFinite(at) ? at : null;
}

/** Throws the 412 when the request's `If-Unmodified-Since` is older than `lastModified` (ISO 8601). */
export function checkUnmodifiedSince(meta: { ifUnmodifiedSince?: string }, lastModified: string | null | undefined): void {
	const since = unmodifiedSince(meta.ifUnmodifiedSince);
	if (since === null || !lastModified) return;
	const modified = Date.parse(lastModified);
	if (Number.isFinite(modified) && Math.floor(modified / 1000) * 1000 > since) throw preconditionFailed();
}
