/** Secrets at rest (private tokens, integration secrets): AES-256-GCM with the secrets key. */
import crypto from "crypto";

/** A 32-byte key from any SECRETS_KEY text. */
export function deriveKey(secret: string | Buffer): Buffer {
	return crypto.createHash("sha256").update(secret).digest();
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
