import fs from "fs";
import os from "os";
import path from "path";
import {
	decryptSecret,
	deriveKey,
	encryptSecret,
	generateToken,
	hashPassword,
	hashToken,
	isEncrypted,
	resolveSecretsKey,
	safeEqual,
	TOKEN_PATTERN,
	verifyPassword,
} from "../../lib/crypto";

describe("tokens", () => {
	it("are 20 characters of [A-Za-z0-9_-] and differ every time", () => {
		const tokens = new Set(Array.from({ length: 200 }, generateToken));
		expect(tokens.size).toBe(200);
		for (const t of tokens) expect(t).toMatch(TOKEN_PATTERN);
	});
	it("are looked up by a stable SHA-256", () => {
		expect(hashToken("abcdefghij1234567890")).toBe(hashToken("abcdefghij1234567890"));
		expect(hashToken("abcdefghij1234567890")).toMatch(/^[0-9a-f]{64}$/);
	});
	it("compare safely at any length", () => {
		expect(safeEqual("secret", "secret")).toBe(true);
		expect(safeEqual("secret", "secreT")).toBe(false);
		expect(safeEqual("secret", "secret-longer")).toBe(false);
	});
});

describe("passwords", () => {
	it("are salted scrypt hashes", () => {
		const a = hashPassword("correct horse");
		expect(a).not.toContain("correct horse");
		expect(a).not.toBe(hashPassword("correct horse"));
		expect(verifyPassword("correct horse", a)).toBe(true);
		expect(verifyPassword("wrong horse", a)).toBe(false);
		expect(verifyPassword("x", "garbage")).toBe(false);
	});
});

describe("secrets at rest", () => {
	const key = deriveKey("a test key of some length");
	it("round-trip through AES-256-GCM and hide the plain text", () => {
		const sealed = encryptSecret("hunter2", key);
		expect(sealed).not.toContain("hunter2");
		expect(isEncrypted(sealed)).toBe(true);
		expect(decryptSecret(sealed, key)).toBe("hunter2");
	});
	it("refuse a wrong key or a tampered value", () => {
		const sealed = encryptSecret("hunter2", key);
		expect(() => decryptSecret(sealed, deriveKey("another key entirely"))).toThrow();
		const parts = sealed.split(":");
		parts[3] = Buffer.from("tampered").toString("base64");
		expect(() => decryptSecret(parts.join(":"), key)).toThrow();
	});
	it("generate a key once in DATA_DIR when SECRETS_KEY is unset, and keep it", () => {
		const dir = fs.mkdtempSync(path.join(os.tmpdir(), "glv3-key-"));
		const first = resolveSecretsKey("", dir);
		const second = resolveSecretsKey("", dir);
		expect(first.generated).toBe(true);
		expect(first.key.equals(second.key)).toBe(true);
		expect(resolveSecretsKey("explicit-key-123456", fs.mkdtempSync(path.join(os.tmpdir(), "glv3-key-"))).key.equals(first.key)).toBe(false);
		expect(fs.statSync(path.join(dir, ".secrets-key")).mode & 0o777).toBe(0o600);
	});
});
