/**
 * The contract between a service that owns files and the gateway's windowed download
 * (gateway/windowed-download.ts): an `info` action describes the file, a `range` action streams
 * one window of it. Windows keep every process's memory flat whatever the client's speed.
 */

/** Bytes per window: the gateway holds at most two (the one being sent, the next one). */
export const WINDOW_BYTES = 4 * 1024 * 1024;

/** What an `info` action answers, after its permission checks. */
export interface DownloadInfo {
	size: number;
	/** Identifies the file's content; passed back with every range (a replaced file is a 404). */
	version: string;
	contentType: string;
	/** Extra response headers (Content-Disposition…); Content-Type and Content-Length are set from the above. */
	headers: Record<string, string>;
}

/** What a `range` action gets on top of the request's own params. */
export interface RangeParams {
	version: string;
	start: number;
	/** Inclusive. */
	end: number;
}
