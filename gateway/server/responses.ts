/**
 * How the gateway writes what it answers itself (errors, and the JSON type of every answer).
 */
import type { ServerResponse } from "http";

/**
 * GitLab (Grape) sends JSON as exactly `application/json`, and some v3 clients parse nothing
 * else (the gitlab npm package reads `application/json; charset=utf-8` as text).
 */
export const JSON_TYPE = "application/json";

/**
 * On every answer that carries what a user stored (a snippet's raw content, a build's trace, an
 * artifacts file): a browser opening it must not run it or read it as anything but its type.
 */
export const USER_CONTENT_HEADERS = {
	"Content-Security-Policy": "default-src 'none'; sandbox",
	"X-Content-Type-Options": "nosniff",
} as const;

/** What moleculer-web would JSON-encode (not bytes, streams, or text with its own type). */
export function isJsonBody(data: unknown): boolean {
	if (data === null || data === undefined || Buffer.isBuffer(data)) return false;
	const obj = data as { pipe?: unknown; type?: unknown };
	return typeof obj.pipe !== "function" && obj.type !== "Buffer";
}

/** An error's name and message for a log line, whatever was thrown. */
export function describeError(err: unknown): string {
	const e = err as { name?: unknown; message?: unknown } | null;
	return e && typeof e === "object" ? `${String(e.name)} ${String(e.message)}` : String(err);
}

/** A JSON answer written by the gateway itself (an error, before or instead of an action). */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
	// An answer already under way cannot become an error: the connection is cut, so the client sees it incomplete.
	if (res.writableEnded) return;
	if (res.headersSent) return res.destroy();
	const payload = JSON.stringify(body);
	res.writeHead(status, { ...headers, "Content-Type": JSON_TYPE, "Content-Length": Buffer.byteLength(payload) });
	res.end(payload);
}
