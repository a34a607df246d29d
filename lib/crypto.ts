/**
 * Tokens, passwords and secrets at rest. Private tokens are looked up by their SHA-256 and
 * kept otherwise only encrypted (AES-256-GCM with SECRETS_KEY); passwords are scrypt hashes.
 */
import crypto from "crypto";
import fs from "fs";
import path from "path";
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

export function hashPassword(password: string): string {
	const salt = crypto.randomBytes(16);
	const hash = crypto.scryptSync(password, salt, 32, { N: SCRYPT_N });
	return `scrypt$${SCRYPT_N}$${salt.toString("base64")}$${hash.toString("base64")}`;
}

export function verifyPassword(password: string, stored: string): boolean {
	const [scheme, n, salt, hash] = String(stored).split("$");
	if (scheme !== "scrypt" || !salt || !hash) return false;
	const expected = Buffer.from(hash, "base64");
	const actual = crypto.scryptSync(password, Buffer.from(salt, "base64"), expected.length, { N: Number(n) });
	return crypto.timingSafeEqual(actual, expected);
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
