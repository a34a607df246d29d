import fs from "fs";
import os from "os";
import path from "path";
import crypto from "crypto";
import { promisify } from "util";
import { HashingBusy, PasswordHasher } from "../../../../lib/crypto/passwords";
import { decryptSecret, deriveKey, encryptSecret, isEncrypted } from "../../../../lib/crypto/secrets";
import { resolveSecretsKey } from "../../../../lib/crypto/secrets-key";
import { generateToken, hashToken, safeEqual } from "../../../../lib/crypto/tokens";

/** GitLab 8.x tokens: 20 URL-safe characters. */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{20}$/;

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

const scrypt = promisify(crypto.scrypt) as (password: string, salt: Buffer, keylen: number, opts: crypto.ScryptOptions) => Promise<Buffer>;

describe("passwords", () => {
	const hasher = new PasswordHasher(2, 8);

	it("are salted scrypt hashes", async () => {
		const a = await hasher.hash("correct horse");
		expect(a).toMatch(/^scrypt\$16384\$/);
		expect(a).not.toContain("correct horse");
		expect(a).not.toBe(await hasher.hash("correct horse"));
		expect(await hasher.verify("correct horse", a)).toBe(true);
		expect(await hasher.verify("wrong horse", a)).toBe(false);
		expect(await hasher.verify("x", "garbage")).toBe(false);
		expect(await hasher.verify("x", "scrypt$99999999$c2FsdA==$aGFzaGhhc2hoYXNoaGFzaA==")).toBe(false);
	});

	it("answer false for an account that does not exist, after the same work", async () => {
		expect(await hasher.verify("anything", null)).toBe(false);
		expect(await hasher.verify("", null)).toBe(false);
	});

	it("ask the same scrypt work of an unknown login as of a wrong password (its time tells no usernames)", async () => {
		const asked: { keylen: number; N?: number; salt: number }[] = [];
		const watched = new PasswordHasher(2, 8, (password, salt, keylen, opts) => {
			asked.push({ keylen, N: opts.N, salt: salt.length });
			return scrypt(password, salt, keylen, opts);
		});
		const stored = await watched.hash("right password");
		asked.length = 0;
		expect(await watched.verify("a guess", stored)).toBe(false);
		expect(await watched.verify("a guess", null)).toBe(false);
		expect(asked).toEqual([
			{ keylen: 32, N: 16384, salt: 16 },
			{ keylen: 32, N: 16384, salt: 16 },
		]);
	});

	it("hash off the event loop: a timer fires while a hash runs", async () => {
		const events: string[] = [];
		const hash = hasher.hash("some password").then(() => events.push("hashed"));
		setTimeout(() => events.push("timer"), 0);
		await hash;
		expect(events).toEqual(["timer", "hashed"]);
	});

	it("run `concurrency` at a time, queue `queue` more, and refuse the rest at once", async () => {
		const small = new PasswordHasher(1, 2);
		const results = await Promise.allSettled([1, 2, 3, 4, 5].map(i => small.hash(`password ${i}`)));
		expect(results.map(r => r.status)).toEqual(["fulfilled", "fulfilled", "fulfilled", "rejected", "rejected"]);
		expect((results[3] as PromiseRejectedResult).reason).toBeInstanceOf(HashingBusy);
		// Once the queue drains, hashing works again.
		expect(await small.verify("password 1", (results[0] as PromiseFulfilledResult<string>).value)).toBe(true);
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
