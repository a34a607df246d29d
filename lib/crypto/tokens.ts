/**
 * Private tokens: GitLab 8's format, looked up by their SHA-256 (the token itself is kept only
 * encrypted, lib/crypto/secrets.ts), and compared in constant time.
 */
import crypto from "crypto";

/** GitLab 8 private token: 20 characters of [A-Za-z0-9_-]. */
export function generateToken(): string {
	return crypto.randomBytes(15).toString("base64url");
}

// crypto.hash: the one-shot digest, without a Hash object per call (every request hashes its token).
export function hashToken(token: string): string {
	return crypto.hash("sha256", token, "hex");
}

/** Constant-time comparison of two strings of any length. */
export function safeEqual(a: string, b: string): boolean {
	return crypto.timingSafeEqual(crypto.hash("sha256", a, "buffer"), crypto.hash("sha256", b, "buffer"));
}
