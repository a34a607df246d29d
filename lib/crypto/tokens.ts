/**
 * Private tokens: GitLab 8's format, looked up by their SHA-256 (the token itself is kept only
 * encrypted, lib/crypto/secrets.ts), and compared in constant time.
 */
import crypto from "crypto";

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
