/**
 * SSH public keys as GitLab 8.x's Key model takes them, pure. The key text is normalised the
 * way late 8.x does (CR/LF removed, surrounding whitespace stripped), then the base64 body is
 * decoded strictly and its wire-format blob checked against the stated type, so that only a
 * key `ssh-keygen -l` would accept gets a fingerprint (MD5 of the blob, colon-separated hex).
 */
import crypto from "crypto";
import { schemaPattern } from "../api/schema-pattern";

const SSH_KEY_TYPES = ["ssh-rsa", "ssh-dss", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521", "ssh-ed25519"] as const;
type SshKeyType = (typeof SSH_KEY_TYPES)[number];

/** GitLab 8 Key model limits (characters). */
export const MAX_KEY_LENGTH = 5000;
export const MAX_TITLE_LENGTH = 255;

export interface SshPublicKey {
	type: SshKeyType;
	/** The decoded wire-format blob. */
	blob: Buffer;
	/** Everything after the base64 body, trimmed ("" when absent). */
	comment: string;
	/** Key size as `ssh-keygen -l` prints it. */
	bits: number;
	/** MD5 of the blob as 16 lowercase colon-separated hex pairs. */
	fingerprint: string;
}

export class SshKeyError extends Error {
	constructor(reason: string) {
		super(reason);
		this.name = "SshKeyError";
	}
}

/** Late GitLab 8: `value.delete("\n\r")` then `strip`. */
export function normalizeKeyText(value: string): string {
	return value.replace(/[\r\n]/g, "").trim();
}

export function md5Fingerprint(blob: Buffer): string {
	return crypto.createHash("md5").update(blob).digest("hex").match(/../g)!.join(":");
}

/** SHA-256 of the blob as `ssh-keygen -l` prints it: `SHA256:` and unpadded base64 (v4's `fingerprint_sha256`). */
function sha256Fingerprint(blob: Buffer): string {
	return `SHA256:${crypto.createHash("sha256").update(blob).digest("base64").replace(/=+$/, "")}`;
}

/** The SHA-256 fingerprint of a stored key's text (checked when it was stored), or null for one that does not parse. */
export function sha256FingerprintOf(keyText: string): string | null {
	const parsed = tryParsePublicKey(keyText);
	return parsed ? sha256Fingerprint(parsed.blob) : null;
}

/** Strict base64: only the alphabet, padding optional (ssh-keygen accepts both) but canonical. */
function decodeBase64(body: string): Buffer {
	if (!/^[A-Za-z0-9+/]+={0,2}$/.test(body)) throw new SshKeyError("body is not base64");
	const unpadded = body.replace(/=+$/, "");
	if (unpadded.length % 4 === 1) throw new SshKeyError("body is truncated");
	if (body.length !== unpadded.length && body.length % 4 !== 0) throw new SshKeyError("bad base64 padding");
	const blob = Buffer.from(unpadded, "base64");
	// Re-encoding catches non-zero pad bits, i.e. a body that was cut or altered.
	if (blob.toString("base64").replace(/=+$/, "") !== unpadded) throw new SshKeyError("body is not canonical base64");
	return blob;
}

/** Reads the SSH wire format: uint32-length-prefixed strings and mpints. */
class WireReader {
	private pos = 0;
	constructor(private readonly buf: Buffer) {}

	string(): Buffer {
		if (this.pos + 4 > this.buf.length) throw new SshKeyError("blob is truncated");
		const len = this.buf.readUInt32BE(this.pos);
		const start = this.pos + 4;
		if (len > this.buf.length - start) throw new SshKeyError("blob is truncated");
		this.pos = start + len;
		return this.buf.subarray(start, start + len);
	}

	text(): string {
		return this.string().toString("latin1");
	}

	/** A positive mpint, returned as its magnitude without leading zero bytes. */
	positiveMpint(): Buffer {
		const raw = this.string();
		if (raw.length === 0) throw new SshKeyError("mpint is zero");
		if (raw[0] & 0x80) throw new SshKeyError("mpint is negative");
		let i = 0;
		while (i < raw.length && raw[i] === 0) i++;
		if (i === raw.length) throw new SshKeyError("mpint is zero");
		return raw.subarray(i);
	}

	end(): void {
		if (this.pos !== this.buf.length) throw new SshKeyError("trailing data after the key");
	}
}

function bitLength(magnitude: Buffer): number {
	return (magnitude.length - 1) * 8 + (32 - Math.clz32(magnitude[0]));
}

function compare(a: Buffer, b: Buffer): number {
	return a.length !== b.length ? a.length - b.length : Buffer.compare(a, b);
}

const isOdd = (m: Buffer) => (m[m.length - 1] & 1) === 1;
const isOne = (m: Buffer) => m.length === 1 && m[0] === 1;

function checkRsa(r: WireReader): number {
	const e = r.positiveMpint();
	const n = r.positiveMpint();
	const bits = bitLength(n);
	// OpenSSH refuses moduli under 1024 bits and over 16384 (SSH_RSA_MINIMUM/MAXIMUM_MODULUS_SIZE).
	if (bits < 1024 || bits > 16384) throw new SshKeyError("RSA modulus size out of range");
	if (!isOdd(n) || !isOdd(e) || isOne(e) || compare(e, n) >= 0) throw new SshKeyError("RSA exponent or modulus malformed");
	return bits;
}

function checkDss(r: WireReader): number {
	const p = r.positiveMpint();
	const q = r.positiveMpint();
	const g = r.positiveMpint();
	const y = r.positiveMpint();
	const bits = bitLength(p);
	if (bits < 1024 || bits > 10000) throw new SshKeyError("DSA modulus size out of range");
	if (![160, 224, 256].includes(bitLength(q))) throw new SshKeyError("DSA subgroup size out of range");
	if (!isOdd(p) || compare(q, p) >= 0 || isOne(g) || compare(g, p) >= 0 || isOne(y) || compare(y, p) >= 0) throw new SshKeyError("DSA parameters malformed");
	return bits;
}

const CURVES: Record<string, { openssl: string; bits: number; pointLength: number }> = {
	nistp256: { openssl: "prime256v1", bits: 256, pointLength: 65 },
	nistp384: { openssl: "secp384r1", bits: 384, pointLength: 97 },
	nistp521: { openssl: "secp521r1", bits: 521, pointLength: 133 },
};

function checkEcdsa(r: WireReader, type: string): number {
	const curveName = type.slice("ecdsa-sha2-".length);
	if (r.text() !== curveName) throw new SshKeyError("ECDSA curve does not match the key type");
	const curve = CURVES[curveName];
	const point = r.string();
	if (point.length !== curve.pointLength || point[0] !== 0x04) throw new SshKeyError("ECDSA point malformed");
	try {
		// OpenSSL refuses a point that is not on the curve.
		crypto.ECDH.convertKey(point, curve.openssl, undefined, undefined, "uncompressed");
	} catch {
		throw new SshKeyError("ECDSA point is not on the curve");
	}
	return curve.bits;
}

function checkEd25519(r: WireReader): number {
	if (r.string().length !== 32) throw new SshKeyError("Ed25519 key must be 32 bytes");
	return 256;
}

function isKeyType(value: string): value is SshKeyType {
	return (SSH_KEY_TYPES as readonly string[]).includes(value);
}

/** Parses `type base64 [comment]`; throws SshKeyError saying why a key is refused. */
export function parsePublicKey(text: string): SshPublicKey {
	// `s`: the comment runs to the end whatever it holds. Without it `.` stops at U+2028, `$` fails,
	// and the spaces before the comment are split every way: a 1 MiB body held the loop for minutes.
	const m = /^(\S+)[ \t]+(\S+)(?:[ \t]+(.*))?$/s.exec(normalizeKeyText(text));
	if (!m) throw new SshKeyError("not a public key line");
	const [, type, body, comment = ""] = m;
	if (!isKeyType(type)) throw new SshKeyError(`unsupported key type ${type}`);
	const blob = decodeBase64(body);
	const r = new WireReader(blob);
	if (r.text() !== type) throw new SshKeyError("key body is of another type");
	let bits: number;
	if (type === "ssh-rsa") bits = checkRsa(r);
	else if (type === "ssh-dss") bits = checkDss(r);
	else if (type === "ssh-ed25519") bits = checkEd25519(r);
	else bits = checkEcdsa(r, type);
	r.end();
	return { type, blob, comment: comment.trim(), bits, fingerprint: md5Fingerprint(blob) };
}

export function tryParsePublicKey(text: string): SshPublicKey | null {
	try {
		return parsePublicKey(text);
	} catch (err) {
		if (err instanceof SshKeyError) return null;
		throw err;
	}
}

export type ValidationErrors = Record<string, string[]>;

export interface ValidDeployKey {
	title: string;
	/** The normalised key text, as stored and shown. */
	key: string;
	fingerprint: string;
	parsed: SshPublicKey;
}

export type DeployKeyValidation = { ok: true; value: ValidDeployKey } | { ok: false; errors: ValidationErrors };

/** Whether `s` has more than `max` characters (code points), without listing them for a long string. */
function longerThan(s: string, max: number): boolean {
	if (s.length <= max) return false;
	// A code point is one or two UTF-16 units.
	if (s.length > 2 * max) return true;
	return [...s].length > max;
}
const isBlank = (s: string) => s.trim() === "";

/**
 * A request value as Rails would see it: strings as they are, numbers and booleans as text,
 * null/undefined as nil; anything else (arrays, objects) is not a usable value.
 */
function asText(value: unknown): string | null | undefined {
	if (value === undefined || value === null) return null;
	if (typeof value === "string") return value;
	if (typeof value === "number" || typeof value === "boolean") return String(value);
	return undefined;
}

/**
 * Rails' presence + `length: { maximum: max }`, as GitLab 8.16's Key model declares them: nil or
 * blank is only blank (a maximum lets nil through, so no "is too short"); longer is too long.
 */
function presenceAndLength(value: string | null, max: number): string[] {
	if (value === null) return ["can't be blank"];
	const errors: string[] = [];
	if (isBlank(value)) errors.push("can't be blank");
	if (longerThan(value, max)) errors.push(`is too long (maximum is ${max} characters)`);
	return errors;
}

/**
 * GitLab 8.16 Key model validation of a new deploy key, with its exact messages:
 * title (presence, ≤255), key (presence, ≤5000, `^(ssh|ecdsa)-`), fingerprint (present: it
 * cannot be generated from a missing key or one that does not parse, GitLab's
 * `presence: { message: 'cannot be generated' }`). Uniqueness is the store's business.
 */
export function validateDeployKey(input: { title?: unknown; key?: unknown }): DeployKeyValidation {
	const errors: ValidationErrors = {};
	const title = asText(input.title);
	const rawKey = asText(input.key);
	const key = typeof rawKey === "string" && !isBlank(rawKey) ? normalizeKeyText(rawKey) : rawKey;

	const titleErrors = title === undefined ? ["is invalid"] : presenceAndLength(title, MAX_TITLE_LENGTH);
	if (titleErrors.length) errors.title = titleErrors;

	const keyErrors = key === undefined ? [] : presenceAndLength(key, MAX_KEY_LENGTH);
	if (key === undefined || !/^(ssh|ecdsa)-/.test(key ?? "")) keyErrors.push("is invalid");
	if (keyErrors.length) errors.key = keyErrors;

	const parsed = typeof key === "string" ? tryParsePublicKey(key) : null;
	if (!parsed) errors.fingerprint = ["cannot be generated"];

	if (Object.keys(errors).length || !parsed || typeof title !== "string" || typeof key !== "string") return { ok: false, errors };
	return { ok: true, value: { title, key, fingerprint: parsed.fingerprint, parsed } };
}

/** The uniqueness error of a key already in a project the caller cannot access. */
export const FINGERPRINT_TAKEN: ValidationErrors = { fingerprint: ["has already been taken"] };

/**
 * A new key's fields as the API description states them (`openapi` of its parameters): the title
 * as Rails takes it (text, or a number or boolean as text), the key an OpenSSH public key line.
 */
export const DEPLOY_KEY_DOC = {
	title: { anyOf: [{ type: "string", maxLength: MAX_TITLE_LENGTH, pattern: schemaPattern(/\S/) }, { type: ["number", "boolean"] }] },
	key: {
		type: "string",
		maxLength: MAX_KEY_LENGTH,
		pattern: schemaPattern(/^\s*(ssh|ecdsa)-/),
		description: "An OpenSSH public key: `ssh-ed25519 AAAA… comment` (ssh-rsa, ecdsa-sha2-nistp256/384/521, ssh-ed25519).",
	},
	/** What an edit takes: text only. */
	newTitle: { type: "string", maxLength: MAX_TITLE_LENGTH, pattern: schemaPattern(/\S/) },
} as const;

/** A new key's parameters as both versions declare them (validateDeployKey reads them), both needed. */
export const NEW_KEY_PARAMS = {
	title: { type: "any", optional: true, openapi: DEPLOY_KEY_DOC.title },
	key: { type: "any", optional: true, openapi: DEPLOY_KEY_DOC.key },
} as const;
export const NEW_KEY_GROUPS = [{ jointly: ["title", "key"], schema: { required: ["title", "key"] } }] as const;
