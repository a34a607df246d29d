/**
 * File downloads through the transporter with flat memory whatever the client's speed.
 *
 * A Moleculer stream has no backpressure across the transporter: the sending node pushes as fast
 * as it reads, and the gateway buffers whatever its HTTP client has not taken yet, so one slow
 * client of a 1 GiB artifact would hold up to 1 GiB in the gateway (measured: 85 → 427 MB for
 * 300 MB at 5 MB/s). Here the gateway asks for the file in windows of WINDOW_BYTES, each a
 * Moleculer stream of its own, and asks for the next window only while the client keeps up:
 * at most two windows (the one being written and the one prefetched) are ever in the gateway.
 *
 * The service provides two actions (lib/builds/file-window.ts): `<info>` (permission checks, then
 * `{size, version, contentType, headers}`) and `<range>` (`{...params, version, start, end}` →
 * a stream of those bytes, or 404 when the file is no longer that version). A file replaced or
 * erased mid-download ends the response early, which the client sees as a short body against
 * its Content-Length. In one process (no transporter) the windows are plain file streams.
 */
import type { IncomingMessage, ServerResponse } from "http";
import type { Context } from "moleculer";
import type { Readable } from "stream";
import { WINDOW_BYTES, type DownloadInfo } from "../lib/builds/file-window";

type Req = IncomingMessage & { $ctx: Context; $params: Record<string, unknown> };
export type AliasFunction = (this: any, req: Req, res: ServerResponse, next: (err?: unknown) => void) => void;

/**
 * A moleculer-web alias function (it runs after the route's authentication and authorization)
 * serving the file that `infoAction`/`rangeAction` describe.
 */
export function windowedDownload(infoAction: string, rangeAction: string, opts: { windowBytes?: number; timeout?: number } = {}): AliasFunction {
	const windowBytes = opts.windowBytes ?? WINDOW_BYTES;
	return function download(req, res, next) {
		serve(req, res, infoAction, rangeAction, windowBytes, opts.timeout).catch(err => {
			if (!res.headersSent) return next(err);
			// Too late for an error body: cut the response short so the client sees it is incomplete.
			res.destroy();
		});
	};
}

async function serve(req: Req, res: ServerResponse, infoAction: string, rangeAction: string, windowBytes: number, timeout?: number): Promise<void> {
	const ctx = req.$ctx;
	const params = { ...req.$params };
	const callOpts = timeout ? { timeout } : {};
	const info = await ctx.call<DownloadInfo, Record<string, unknown>>(infoAction, params, callOpts);
	const fetchWindow = (start: number) => {
		const end = Math.min(start + windowBytes, info.size) - 1;
		const window = ctx.call<Readable, Record<string, unknown>>(rangeAction, { ...params, version: info.version, start, end }, callOpts);
		// A prefetched window that is never awaited (client gone) must not become an unhandled rejection.
		window.catch(() => {});
		return { start, end, stream: window };
	};
	let current = info.size > 0 ? fetchWindow(0) : null;
	// Headers only once the first window is on its way: a file gone since `info` is still a clean 404.
	const first = current ? await current.stream : null;
	res.statusCode = 200;
	for (const [name, value] of Object.entries(info.headers)) res.setHeader(name, value);
	res.setHeader("Content-Type", info.contentType);
	res.setHeader("Content-Length", String(info.size));
	while (current) {
		const stream = current.start === 0 && first ? first : await current.stream;
		const nextStart = current.end + 1;
		const next = nextStart < info.size ? fetchWindow(nextStart) : null;
		try {
			const sent = await pipeWindow(stream, res);
			if (sent !== current.end - current.start + 1) throw new Error(`window ${current.start}-${current.end} came with ${sent} bytes`);
		} catch (err) {
			if (next)
				next.stream.then(
					s => s.destroy(),
					() => {},
				);
			throw err;
		}
		current = next;
	}
	res.end();
}

/** Writes one window into the response, respecting its backpressure, without ending it. */
function pipeWindow(source: Readable, res: ServerResponse): Promise<number> {
	return new Promise((resolve, reject) => {
		if (res.destroyed) {
			source.destroy();
			return reject(new Error("client went away"));
		}
		let sent = 0;
		const count = (chunk: Buffer) => {
			sent += chunk.length;
		};
		const cleanup = () => {
			source.off("data", count);
			source.off("end", onEnd);
			source.off("error", onError);
			res.off("close", onClose);
			source.unpipe(res);
		};
		const onEnd = () => {
			cleanup();
			resolve(sent);
		};
		const onError = (err: Error) => {
			cleanup();
			reject(err);
		};
		const onClose = () => {
			cleanup();
			source.destroy();
			reject(new Error("client went away"));
		};
		source.on("data", count);
		source.once("end", onEnd);
		source.once("error", onError);
		res.once("close", onClose);
		source.pipe(res, { end: false });
	});
}
