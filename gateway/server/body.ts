/**
 * Request bodies, read by the gateway itself rather than by body-parser: body-parser reads off a
 * refused body to its very end before it answers (a client announcing 10^12 bytes was answered
 * only when it stopped sending). Here a body is refused the moment it is known to be too large,
 * and the connection is closed after the answer (see `closeAfterAnswer`).
 *
 * What is accepted, per route: JSON (at most MAX_JSON_DEPTH levels, no `__proto__` keys), forms
 * (qs, bounded) urlencoded or multipart (`curl -F`: its text fields, as GitLab's Rack takes them;
 * file parts are not read), and text/plain where a route asks for it; a body without a
 * Content-Type is a form, as Rack reads it, unless it opens with `{` or `[` (JSON:
 * docs/api.md#request-bodies); UTF-8 only; `Content-Encoding` gzip,
 * deflate or br, with the limit applied to the decoded bytes. Anything else is a 4xx in GitLab's
 * form: 400 naming what does not parse (where, for JSON), 413 past the limit, 415 for an unknown encoding or
 * charset, 408 for a body still coming after `timeoutMs` (one that trickles a byte at a time never
 * leaves its connection idle, so the idle timeout alone would let it hold the connection for the
 * whole request time).
 */
import Busboy, { type BusboyInstance } from "@fastify/busboy";
import type { IncomingMessage, ServerResponse } from "http";
import qs from "qs";
import type { Readable } from "stream";
import zlib from "zlib";
import { ApiError, requestTimeout, tooLarge } from "../../lib/api/errors";
import { jsonSyntaxError } from "../../lib/text/json-syntax-error";

/** Deeper JSON is refused before it is parsed (GitLab's bodies are a few levels deep). */
export const MAX_JSON_DEPTH = 32;

/** Query strings and forms: what qs may build (its defaults, made explicit and a little tighter). */
export const QS_OPTIONS: qs.IParseOptions = { depth: 5, parameterLimit: 1000, arrayLimit: 100, allowPrototypes: false, allowDots: false };

export interface BodyOptions {
	limit: number;
	/** The whole body within this time, from its first byte read. */
	timeoutMs: number;
	/** Also take `text/plain` (a build trace chunk). */
	text?: boolean;
}

/** A body that does not parse: 400 in GitLab's words (its `400 Bad Request`), saying why. */
export const invalidBody = (problem: string) => new ApiError(400, { message: `400 Bad Request - ${problem}` });
const unsupported = () => new ApiError(415, { message: "415 Unsupported Media Type" });

/**
 * True when `text` (JSON) opens more than `max` arrays or objects inside each other. One pass,
 * strings skipped, so it costs far less than the parse it saves.
 */
export function jsonTooDeep(text: string, max: number): boolean {
	let depth = 0;
	let inString = false;
	for (let i = 0; i < text.length; i++) {
		const c = text.charCodeAt(i);
		if (inString) {
			if (c === 92 /* \ */) i++;
			else if (c === 34 /* " */) inString = false;
		} else if (c === 34) inString = true;
		else if (c === 91 /* [ */ || c === 123 /* { */) {
			if (++depth > max) return true;
		} else if (c === 93 /* ] */ || c === 125 /* } */) depth--;
	}
	return false;
}

/**
 * Whether a parsed JSON value has an own `__proto__` key anywhere, which would become the
 * prototype of the action's parameters when they are merged. A walk with a stack of its own
 * (depth is bounded before the parse anyway). A reviver on JSON.parse did the same check at 16 to
 * 48 times the parse's cost: 1 KiB of gzip (a 1 MiB array of zeros) held the event loop 150 ms.
 */
function hasPrototypeKey(value: unknown): boolean {
	const pending: unknown[] = [value];
	while (pending.length) {
		const item = pending.pop();
		if (typeof item !== "object" || item === null) continue;
		if (Array.isArray(item)) {
			for (let i = 0; i < item.length; i++) if (typeof item[i] === "object" && item[i] !== null) pending.push(item[i]);
			continue;
		}
		if (Object.hasOwn(item, "__proto__")) return true;
		for (const key in item) {
			const child = (item as Record<string, unknown>)[key];
			if (typeof child === "object" && child !== null) pending.push(child);
		}
	}
	return false;
}

export function parseJson(text: string): unknown {
	if (!text.trim()) return {};
	if (jsonTooDeep(text, MAX_JSON_DEPTH)) throw invalidBody(`the JSON body nests arrays and objects more than ${MAX_JSON_DEPTH} deep`);
	let value: unknown;
	try {
		value = JSON.parse(text);
	} catch {
		const at = jsonSyntaxError(text);
		throw invalidBody(`the body is not valid JSON${at ? `: ${at.problem} (line ${at.line}, column ${at.column})` : ""}`);
	}
	// The key can only be there spelled out or with an escape in it.
	if ((text.includes("__proto__") || text.includes("\\u")) && hasPrototypeKey(value)) throw invalidBody("the JSON body has a __proto__ key");
	// Parameters are an object's fields: an array, a string, a number or null names none, and the
	// request goes on without them, as Grape merges only a Hash body into params (docs/api.md#request-bodies).
	if (value === null || typeof value !== "object" || Array.isArray(value)) return {};
	return value;
}

export function parseForm(text: string): Record<string, unknown> {
	return qs.parse(text, QS_OPTIONS);
}

/** Of a part's headers, at most this much is read (busboy 1's bound; @fastify/busboy's default is 80 KiB). */
const MAX_PART_HEADER = 16 * 1024;

/**
 * A multipart/form-data body's text fields, named and nested as in a urlencoded form (the same qs
 * bounds); file parts are skipped unread. No boundary, or parts that do not parse: 400. Parsed by
 * @fastify/busboy, the maintained fork of busboy (docs/api.md#request-bodies); names and values
 * are UTF-8 unless a part says otherwise.
 */
export function parseMultipart(body: Buffer, contentType: string): Promise<Record<string, unknown>> {
	return new Promise((resolve, reject) => {
		let parser: BusboyInstance;
		try {
			const limit = QS_OPTIONS.parameterLimit!;
			const limits = { fields: limit, parts: 2 * limit, files: 0, fieldSize: body.length, headerSize: MAX_PART_HEADER };
			parser = Busboy({ headers: { "content-type": contentType }, limits });
		} catch {
			return reject(invalidBody("a multipart body needs a boundary in its Content-Type"));
		}
		const fields = new URLSearchParams();
		parser.on("field", (name, value) => fields.append(name, value));
		parser.on("error", () => reject(invalidBody("the multipart body does not parse")));
		parser.on("finish", () => resolve(parseForm(fields.toString())));
		parser.end(body);
	});
}

/** "untyped": no Content-Type, read as its first character says (see the file's header). */
type BodyKind = "json" | "form" | "multipart" | "text" | "untyped";

function kindOf(contentType: string, opts: BodyOptions): BodyKind | null {
	const type = contentType.split(";")[0].trim().toLowerCase();
	if (type === "") return "untyped";
	if (type === "application/json" || /^application\/[\w.+-]+\+json$/.test(type)) return "json";
	if (type === "application/x-www-form-urlencoded") return "form";
	if (type === "multipart/form-data") return "multipart";
	if (opts.text && type === "text/plain") return "text";
	return null;
}

function charsetOf(contentType: string): string | null {
	const m = /;\s*charset\s*=\s*"?([\w-]+)"?/i.exec(contentType);
	return m ? m[1].toLowerCase() : null;
}

function decoded(req: IncomingMessage): Readable {
	const encoding = String(req.headers["content-encoding"] ?? "identity")
		.trim()
		.toLowerCase();
	switch (encoding) {
		case "identity":
		case "":
			return req;
		case "gzip":
		case "x-gzip":
			return req.pipe(zlib.createGunzip());
		case "deflate":
			return req.pipe(zlib.createInflate());
		case "br":
			return req.pipe(zlib.createBrotliDecompress());
		default:
			throw unsupported();
	}
}

/** The bytes of `source`, failing as soon as they pass `limit` or `timeoutMs`; a stream error is a 400 saying `broken`. */
function readAll(source: Readable, limit: number, timeoutMs: number, broken: string): Promise<Buffer> {
	return new Promise((resolve, reject) => {
		const chunks: Buffer[] = [];
		let size = 0;
		const deadline = setTimeout(() => fail(requestTimeout()), timeoutMs);
		const fail = (err: Error) => {
			cleanup();
			reject(err);
		};
		const onData = (chunk: Buffer) => {
			size += chunk.length;
			if (size > limit) return fail(tooLarge());
			chunks.push(chunk);
		};
		const onEnd = () => {
			cleanup();
			resolve(Buffer.concat(chunks, size));
		};
		const onError = () => fail(invalidBody(broken));
		const onClose = () => fail(invalidBody(broken));
		const cleanup = () => {
			clearTimeout(deadline);
			source.off("data", onData);
			source.off("end", onEnd);
			source.off("error", onError);
			source.off("close", onClose);
			source.pause();
		};
		source.on("data", onData);
		source.once("end", onEnd);
		source.once("error", onError);
		source.once("close", onClose);
	});
}

/** True when the request carries a body (a length above 0, or chunks). */
function hasBody(req: IncomingMessage): boolean {
	const length = req.headers["content-length"];
	return (length !== undefined && length !== "0") || req.headers["transfer-encoding"] !== undefined;
}

/** An announced length past `limit` (or one that is not a length at all) is refused before a byte is read. */
export function checkAnnouncedLength(req: IncomingMessage, limit: number): void {
	const length = req.headers["content-length"];
	if (length === undefined) return;
	if (!/^\d+$/.test(length)) throw invalidBody("Content-Length is not a number");
	if (Number(length) > limit) throw tooLarge();
}

/**
 * A connect-style middleware for a moleculer-web route (`use: [bodyReader(...)]`, with
 * `bodyParsers: false`): sets `req.body` to the parsed body, or leaves it undefined for a body
 * of a type the route does not take.
 */
export function bodyReader(opts: BodyOptions) {
	return function readBody(req: IncomingMessage & { body?: unknown }, res: ServerResponse, next: (err?: unknown) => void): void {
		if (!hasBody(req)) return next();
		const contentType = String(req.headers["content-type"] ?? "");
		const kind = kindOf(contentType, opts);
		let source: Readable;
		try {
			checkAnnouncedLength(req, opts.limit);
			if (!kind) {
				// A body of a type this route does not take is not read: no reading it off afterwards either.
				closeAfterAnswer(req, res);
				return next();
			}
			const charset = charsetOf(contentType);
			if (charset && charset !== "utf-8" && charset !== "utf8" && charset !== "us-ascii") throw unsupported();
			source = decoded(req);
		} catch (err) {
			return next(err);
		}
		const broken = source === req ? "the body ended early" : `the body does not decode as ${String(req.headers["content-encoding"]).trim()}`;
		readAll(source, opts.limit, opts.timeoutMs, broken)
			.finally(() => {
				if (source !== req) source.destroy();
			})
			.then(async buffer => {
				if (kind === "multipart") return parseMultipart(buffer, contentType);
				const text = buffer.toString("utf8");
				if (kind === "untyped") return /^\s*[[{]/.test(text) ? parseJson(text) : parseForm(text);
				return kind === "json" ? parseJson(text) : kind === "form" ? parseForm(text) : text;
			})
			.then(
				body => {
					req.body = body;
					next();
				},
				err => next(err),
			);
	};
}

/** How long a refused body may keep coming after the answer, so the client can still read the answer. */
const LINGER_MS = 5000;

/**
 * After an answer sent before the request's body was read to its end (a refusal), the rest of the
 * body is read off and thrown away for LINGER_MS at most, then the connection is closed. Closing at
 * once would reset the connection under a client still sending, which then never sees the answer
 * (nginx's lingering close does the same); reading without end would let it send forever.
 */
export function closeAfterAnswer(req: IncomingMessage, res: ServerResponse): void {
	// Once per request (the body reader and the error handler may both ask).
	if (req.complete || lingering.has(req)) return;
	lingering.add(req);
	res.once("finish", () => {
		if (req.complete) return;
		const socket = req.socket;
		const stop = () => {
			clearTimeout(timer);
			// Nothing left on a kept-alive socket that serves the next requests.
			socket?.off("close", stop);
		};
		const timer = setTimeout(() => socket?.destroy(), LINGER_MS);
		timer.unref();
		// The client finished sending in time: the connection may serve its next request.
		req.once("end", stop);
		socket?.once("close", stop);
	});
}

const lingering = new WeakSet<IncomingMessage>();
