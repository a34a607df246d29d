/**
 * What the builds endpoints accept, pure: path ids, the internal API's new-build body, artifacts
 * file names, and the keys that the builds indexes are made of. Errors are GitLab's parameter
 * errors (`{"error":"name is missing"}`, `{"error":"build_id is invalid"}`).
 */
import { missing, notFound, paramError } from "../api/errors";
import type { CommitDoc } from "../../models/build";
import { decimalUpTo, schemaPattern } from "../api/schema-pattern";
import { charCount } from "../text/chars";
import { hasControlCharacters, MULTILINE_TEXT, SINGLE_LINE_TEXT } from "../text/control-characters";
import { ISO_TIME } from "../text/formats";

const invalid = (param: string) => paramError(`${param} is invalid`);

/**
 * A path or body id: digits only (Grape's Integer coercion). Anything else → 400 `<name> is
 * invalid`; a number too large to be any id → 404, as a lookup that finds nothing.
 */
export function parseId(raw: unknown, name: string): number {
	if (typeof raw === "number" && Number.isSafeInteger(raw) && raw > 0) return raw;
	if (typeof raw !== "string" || !/^\s*\d+\s*$/.test(raw)) {
		if (raw === undefined || raw === null || raw === "") throw missing(name);
		throw invalid(name);
	}
	const n = Number(raw);
	if (!Number.isSafeInteger(n)) throw notFound();
	if (n <= 0) throw notFound();
	return n;
}

/** What parseId takes as a number, as text: 1 to 2^53 - 1, zeros before it and spaces around it allowed (a form may send them). */
const ID_TEXT = new RegExp(`^\\s*0*${decimalUpTo(Number.MAX_SAFE_INTEGER)}\\s*$`);

/** Shortest abbreviated commit id taken, as `git rev-parse` on GitLab's repository look-up would. */
const MIN_SHA_PREFIX = 7;

/**
 * The `:sha` of a commit's builds as a prefix to resolve (lower-case), or null when it is to be
 * matched as it is: a full id (40, or 64 hex characters), or anything that is not hex of
 * MIN_SHA_PREFIX characters or more (a ref name matches no build, as in GitLab 8.16).
 */
export function commitIdPrefix(sha: string): string | null {
	if (!/^[0-9a-f]+$/i.test(sha) || sha.length < MIN_SHA_PREFIX || sha.length >= 64 || sha.length === 40) return null;
	return sha.toLowerCase();
}

/**
 * Builds of a project are numbered 1…total in creation order (newest = total). Page `page` of
 * `perPage`, newest first, is the range [lo, hi] of those numbers, or null past the last page.
 */
export function seqRange(total: number, page: number, perPage: number): { lo: number; hi: number } | null {
	const hi = total - (page - 1) * perPage;
	if (hi < 1) return null;
	return { lo: Math.max(1, hi - perPage + 1), hi };
}

export interface NewBuild {
	project_id: number;
	name: string;
	stage: string;
	ref: string;
	tag: boolean;
	commit: CommitDoc;
	user_id: number | null;
}

type Body = Record<string, unknown>;

/** A commit's id, full (SHA-1 or SHA-256), and its abbreviation. */
const COMMIT_ID = /^[0-9a-f]{40}([0-9a-f]{24})?$/i;
const SHORT_ID = /^[0-9a-f]{4,64}$/i;
const EMAIL = /^[^\s@]+@[^\s@]+$/;

function text(body: Body, field: string, label = field, opts: { max?: number; optional?: boolean; multiline?: boolean } = {}): string | undefined {
	const v = body[field];
	if (v === undefined || v === null || v === "") {
		if (opts.optional) return undefined;
		throw missing(label);
	}
	if (typeof v !== "string" || charCount(v) > (opts.max ?? 255)) throw invalid(label);
	// Names, refs and e-mails are single lines without control characters; messages may span lines.
	if (hasControlCharacters(v, { multiline: opts.multiline })) throw invalid(label);
	return v;
}

function bool(raw: unknown, label: string): boolean {
	if (raw === undefined || raw === null || raw === "") return false;
	if (raw === true || raw === "true" || raw === "1" || raw === 1) return true;
	if (raw === false || raw === "false" || raw === "0" || raw === 0) return false;
	throw invalid(label);
}

function timestamp(raw: unknown, label: string): string {
	if (raw === undefined || raw === null || raw === "") throw missing(label);
	if (typeof raw !== "string" || raw.length > 64) throw invalid(label);
	if (!ISO_TIME.test(raw) || Number.isNaN(Date.parse(raw))) throw invalid(label);
	return raw.replace(/([+-]\d{2})(\d{2})$/, "$1:$2");
}

/**
 * The body of `POST /internal/builds` (docs/api.md#internal-builds): `project_id, name, stage, ref, tag,
 * commit{id, short_id?, title, message, author_name, author_email, committer_name?,
 * committer_email?, created_at}, user_id?`. `stage` defaults to "test" and `tag` to false, as
 * GitLab's; a missing commit title is the message's first line, a missing short_id the hash's
 * first 8 characters, and a missing committer the author (who commits their own work).
 */
export function parseNewBuild(body: Body): NewBuild {
	const project_id = parseIdParam(body.project_id, "project_id");
	const name = text(body, "name")!;
	const stage = text(body, "stage", "stage", { optional: true }) ?? "test";
	const ref = text(body, "ref")!;
	const tag = bool(body.tag, "tag");
	const raw = body.commit;
	if (raw === undefined || raw === null) throw missing("commit");
	if (typeof raw !== "object" || Array.isArray(raw)) throw invalid("commit");
	const c = raw as Body;
	const id = text(c, "id", "commit[id]")!;
	if (!COMMIT_ID.test(id)) throw invalid("commit[id]");
	const short_id = text(c, "short_id", "commit[short_id]", { optional: true }) ?? id.slice(0, 8);
	if (!SHORT_ID.test(short_id) || !id.toLowerCase().startsWith(short_id.toLowerCase())) throw invalid("commit[short_id]");
	const message = text(c, "message", "commit[message]", { max: 65536, multiline: true })!;
	const title = text(c, "title", "commit[title]", { max: 1024, optional: true }) ?? message.split("\n")[0].slice(0, 1024);
	const author_name = text(c, "author_name", "commit[author_name]")!;
	const author_email = text(c, "author_email", "commit[author_email]")!;
	if (!EMAIL.test(author_email)) throw invalid("commit[author_email]");
	const committer_name = text(c, "committer_name", "commit[committer_name]", { optional: true }) ?? author_name;
	const committer_email = text(c, "committer_email", "commit[committer_email]", { optional: true }) ?? author_email;
	if (!EMAIL.test(committer_email)) throw invalid("commit[committer_email]");
	const created_at = timestamp(c.created_at, "commit[created_at]");
	const user_id = body.user_id === undefined || body.user_id === null || body.user_id === "" ? null : parseIdParam(body.user_id, "user_id");
	return {
		project_id,
		name,
		stage,
		ref,
		tag,
		commit: {
			id: id.toLowerCase(),
			short_id: short_id.toLowerCase(),
			title,
			message,
			author_name,
			author_email,
			committer_name,
			committer_email,
			created_at,
		},
		user_id,
	};
}

/** What parseNewBuild takes, for the API description (the `openapi` of its parameters). */
const line = (max: number) => ({ type: "string", minLength: 1, maxLength: max, pattern: schemaPattern(SINGLE_LINE_TEXT) });
const optionalLine = (max: number) => ({ type: ["string", "null"], maxLength: max, pattern: schemaPattern(SINGLE_LINE_TEXT) });
const email = { ...line(255), allOf: [{ pattern: schemaPattern(EMAIL) }] };
/** A body id: a positive number, or its digits (with spaces around them, as a form may send it). */
const BODY_ID_SCHEMA = {
	anyOf: [
		{ type: "integer", minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
		{ type: "string", pattern: schemaPattern(ID_TEXT) },
	],
};
/** The body of `POST /internal/builds` as parseNewBuild reads it, for the API description. */
export const NEW_BUILD_SCHEMA = {
	type: "object",
	properties: {
		project_id: BODY_ID_SCHEMA,
		name: line(255),
		stage: optionalLine(255),
		ref: line(255),
		tag: { enum: [true, false, "true", "false", "1", "0", 1, 0, "", null] },
		commit: {
			type: "object",
			properties: {
				id: { type: "string", pattern: schemaPattern(COMMIT_ID) },
				short_id: { type: ["string", "null"], pattern: schemaPattern(/^(|[0-9a-f]{4,64})$/i), description: "The id's first characters." },
				title: optionalLine(1024),
				message: { type: "string", minLength: 1, maxLength: 65536, pattern: schemaPattern(MULTILINE_TEXT) },
				author_name: line(255),
				author_email: email,
				committer_name: optionalLine(255),
				committer_email: { anyOf: [email, { enum: ["", null] }] },
				created_at: { type: "string", maxLength: 64, pattern: schemaPattern(ISO_TIME) },
			},
			required: ["id", "message", "author_name", "author_email", "created_at"],
			additionalProperties: false,
		},
		user_id: { anyOf: [BODY_ID_SCHEMA, { enum: ["", null] }] },
	},
	required: ["project_id", "name", "ref", "commit"],
	additionalProperties: false,
};

/** An id in a body: out of range is invalid (not a 404: nothing is being looked up by it yet). */
function parseIdParam(raw: unknown, name: string): number {
	try {
		return parseId(raw, name);
	} catch (err) {
		if ((err as { code?: number }).code === 404) throw invalid(name);
		throw err;
	}
}

/**
 * The `filename` of an artifacts upload: shown in `artifacts_file` and sent back in
 * Content-Disposition, so one path segment of printable characters, at most 255 bytes.
 */
export function parseArtifactsFilename(raw: unknown): string {
	if (raw === undefined || raw === null || raw === "") throw missing("filename");
	if (typeof raw !== "string" || charCount(raw) > 255 || !FILENAME.test(raw)) throw invalid("filename");
	return raw;
}

/** One path segment of printable characters, not `.` or `..`. */
// eslint-disable-next-line no-control-regex -- control characters are what it refuses
const FILENAME = /^(?!\.\.?$)[^\x00-\x1f\x7f/\\]+$/;

/** A trace's chunk (`PATCH /internal/builds/:build_id/trace`): text/plain, or JSON's `text`; for the API description. */
export const TRACE_CHUNK_SCHEMA = { type: "object", properties: { text: { type: "string" } }, required: ["text"], additionalProperties: false };

/** The query of an artifacts upload, for the API description. */
export const ARTIFACTS_UPLOAD_SCHEMA = {
	type: "object",
	properties: { filename: { type: "string", maxLength: 255, pattern: schemaPattern(FILENAME) } },
	required: ["filename"],
};

/**
 * `attachment; filename=<name>` as GitLab 8.x sends it (unquoted) when the name is a plain
 * token; otherwise a quoted ASCII fallback plus the RFC 5987 UTF-8 form, so that any name is a
 * valid header and clients that split on `filename=` still get a name.
 */
export function attachmentDisposition(filename: string): string {
	if (/^[A-Za-z0-9!#$&+.^_`|~-]+$/.test(filename)) return `attachment; filename=${filename}`;
	const fallback = filename.replace(/[^\x20-\x7e]/g, "_").replace(/["\\]/g, "_");
	const encoded = encodeURIComponent(filename).replace(/['()*]/g, c => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
	return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}
