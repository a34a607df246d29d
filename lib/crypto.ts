/**
 * Tokens, passwords and secrets at rest. Private tokens are looked up by their SHA-256 and
 * kept otherwise only encrypted (AES-256-GCM with SECRETS_KEY); passwords are scrypt hashes.
 */
import crypto from "crypto";
import fs from "fs";
import path from "path";
import { promisify } from "util";
import { verifySecretsKey } from "./secrets-key-check";

/** GitLab 8 private token: 20 characters of [A-Za-z0-9_-]. */
export function generateToken(): string {
	return crypto.randomBytes(15).toString("base64url");
}

export const TOKEN_PATTERN = /^[A-Za-z0-9_-]{20}$/;

export function hashToken(token: string): string {
	return crypto.createHash("sha256").update(token, "utf8").digest("hex");
}

/** Constant-time comparison of two strings of any length. */
export function safeEqual(a: string, b: string): boolean {
	const ha = crypto.createHash("sha256").update(a).digest();
	const hb = crypto.createHash("sha256").update(b).digest();
	return crypto.timingSafeEqual(ha, hb);
}

const SCRYPT_N = 16384;
const SCRYPT_KEYLEN = 32;
const scrypt = promisify(crypto.scrypt) as (password: string, salt: Buffer, keylen: number, opts: crypto.ScryptOptions) => Promise<Buffer>;

/**
 * What an unknown login is compared against: the same scrypt work as a real account's hash, so
 * that the time of an answer does not tell which usernames exist. No password matches it.
 */
const DUMMY_HASH = `scrypt$${SCRYPT_N}$${Buffer.alloc(16, 7).toString("base64")}$${Buffer.alloc(SCRYPT_KEYLEN).toString("base64")}`;

/** Too many password hashes are running and waiting already: the caller should come back later. */
export class HashingBusy extends Error {
	constructor() {
		super("too many password checks in progress");
		this.name = "HashingBusy";
	}
}

/**
 * Password hashing (scrypt) off the event loop, on the libuv thread pool, at most `concurrency`
 * at a time with at most `queueSize` waiting; past that, HashingBusy at once. A flood of logins
 * then costs a bounded share of the CPU and never stalls other requests or the thread pool that
 * file and DNS work share.
 */
export class PasswordHasher {
	private running = 0;
	private readonly waiting: (() => void)[] = [];

	constructor(
		private readonly concurrency: number,
		private readonly queueSize: number,
	) {}

	async hash(password: string): Promise<string> {
		const salt = crypto.randomBytes(16);
		const hash = await this.run(() => scrypt(password, salt, SCRYPT_KEYLEN, { N: SCRYPT_N }));
		return `scrypt$${SCRYPT_N}$${salt.toString("base64")}$${hash.toString("base64")}`;
	}

	/** Compares in constant time; `stored` null (no such account) costs the same and answers false. */
	async verify(password: string, stored: string | null): Promise<boolean> {
		const real = stored !== null;
		const [scheme, n, salt, hash] = String(stored ?? DUMMY_HASH).split("$");
		const cost = Number(n);
		if (scheme !== "scrypt" || !salt || !hash || !Number.isSafeInteger(cost) || cost < 2 || cost > 1 << 16) return false;
		const expected = Buffer.from(hash, "base64");
		if (expected.length < 16 || expected.length > 64) return false;
		const actual = await this.run(() => scrypt(password, Buffer.from(salt, "base64"), expected.length, { N: cost, maxmem: 256 * cost * 8 + 1024 * 1024 }));
		return crypto.timingSafeEqual(actual, expected) && real;
	}

	private async run<T>(work: () => Promise<T>): Promise<T> {
		if (this.running >= this.concurrency) {
			if (this.waiting.length >= this.queueSize) throw new HashingBusy();
			await new Promise<void>(resolve => this.waiting.push(resolve));
		} else this.running++;
		try {
			return await work();
		} finally {
			// Hand the slot straight to the next waiter, or free it.
			const next = this.waiting.shift();
			if (next) next();
			else this.running--;
		}
	}
}

/** A 32-byte key from any SECRETS_KEY text. */
export function deriveKey(secret: string | Buffer): Buffer {
	return crypto.createHash("sha256").update(secret).digest();
}

/**
 * The key for secrets at rest: SECRETS_KEY when set; otherwise one generated once and kept in
 * DATA_DIR (fine for one machine; a cluster must share SECRETS_KEY). Throws when it is not the key
 * the data in DATA_DIR was written with (lib/secrets-key-check.ts).
 */
export function resolveSecretsKey(secretsKey: string, dataDir: string): { key: Buffer; generated: boolean } {
	if (secretsKey) {
		const key = deriveKey(secretsKey);
		verifySecretsKey(key, dataDir, "SECRETS_KEY");
		return { key, generated: false };
	}
	const key = deriveKey(generatedSecretsKey(dataDir));
	verifySecretsKey(key, dataDir, "generated");
	return { key, generated: true };
}

/** The text of DATA_DIR/.secrets-key, generated on first use; as SECRETS_KEY it gives the same key. */
export function generatedSecretsKey(dataDir: string): string {
	const file = path.join(dataDir, ".secrets-key");
	fs.mkdirSync(dataDir, { recursive: true });
	try {
		fs.writeFileSync(file, crypto.randomBytes(32).toString("base64"), { flag: "wx", mode: 0o600 });
	} catch (err) {
		if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
	}
	return fs.readFileSync(file, "utf8").trim();
}

/** `v1:<iv>:<tag>:<ciphertext>`, all base64. */
export function encryptSecret(plain: string, key: Buffer): string {
	const iv = crypto.randomBytes(12);
	const cipher = crypto.createCipheriv("aes-256-gcm", key, iv);
	const data = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
	return ["v1", iv.toString("base64"), cipher.getAuthTag().toString("base64"), data.toString("base64")].join(":");
}

export function decryptSecret(sealed: string, key: Buffer): string {
	const [version, iv, tag, data] = String(sealed).split(":");
	if (version !== "v1" || !iv || !tag || data === undefined) throw new Error("not an encrypted secret");
	const decipher = crypto.createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64"));
	decipher.setAuthTag(Buffer.from(tag, "base64"));
	return Buffer.concat([decipher.update(Buffer.from(data, "base64")), decipher.final()]).toString("utf8");
}

export function isEncrypted(value: unknown): boolean {
	return typeof value === "string" && /^v1:[^:]+:[^:]+:[^:]*$/.test(value);
}
