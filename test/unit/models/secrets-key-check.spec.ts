/** A data directory remembers its secrets key: another key is refused before anything is read with it. */
import fs from "fs";
import os from "os";
import path from "path";
import { deriveKey } from "../../../lib/crypto/secrets";
import { resolveSecretsKey } from "../../../lib/crypto/secrets-key";
import { KEY_CHECK_FILE, SecretsKeyMismatchError, verifySecretsKey } from "../../../lib/crypto/secrets-key";

const dirs: string[] = [];
const tempDir = () => {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "glv3-keycheck-"));
	dirs.push(dir);
	return dir;
};
afterAll(() => dirs.forEach(d => fs.rmSync(d, { recursive: true, force: true })));

describe("the secrets key check", () => {
	it("is written on the first start, encrypted (no key material in it), owner-only, and passes with the same key", () => {
		const dir = tempDir();
		const first = resolveSecretsKey("the-first-key-0123456789", dir);
		const file = path.join(dir, KEY_CHECK_FILE);
		const text = fs.readFileSync(file, "utf8");
		expect(text).toMatch(/^v1:[^:]+:[^:]+:[^:]+\n$/);
		expect(text).not.toContain("the-first-key");
		expect(fs.statSync(file).mode & 0o777).toBe(0o600);
		expect(resolveSecretsKey("the-first-key-0123456789", dir).key.equals(first.key)).toBe(true);
		// Nothing else was left behind (the temporary file is linked into place, then removed).
		expect(fs.readdirSync(dir)).toEqual([KEY_CHECK_FILE]);
	});

	it("refuses another SECRETS_KEY, naming SECRETS_KEY, DATA_DIR and DATA_DIR/.secrets-key", () => {
		const dir = tempDir();
		resolveSecretsKey("the-first-key-0123456789", dir);
		let error: unknown;
		try {
			resolveSecretsKey("another-key-0123456789", dir);
		} catch (err) {
			error = err;
		}
		expect(error).toBeInstanceOf(SecretsKeyMismatchError);
		const message = (error as Error).message;
		expect(message).toContain("SECRETS_KEY is set to a different key");
		expect(message).toContain(`DATA_DIR=${dir}`);
		expect(message).toContain("DATA_DIR/.secrets-key");
		expect(message).not.toContain("another-key");
	});

	it("refuses the generated key on data written with SECRETS_KEY, and the reverse", () => {
		const withKey = tempDir();
		resolveSecretsKey("the-first-key-0123456789", withKey);
		expect(() => resolveSecretsKey("", withKey)).toThrow(`SECRETS_KEY is not set, so the key generated in ${path.join(withKey, ".secrets-key")} was used`);

		const generated = tempDir();
		resolveSecretsKey("", generated);
		expect(() => resolveSecretsKey("the-first-key-0123456789", generated)).toThrow(SecretsKeyMismatchError);
		expect(resolveSecretsKey("", generated).generated).toBe(true);
	});

	it("treats a damaged check value as a mismatch rather than trusting the key", () => {
		const dir = tempDir();
		const key = deriveKey("the-first-key-0123456789");
		verifySecretsKey(key, dir, "SECRETS_KEY");
		fs.writeFileSync(path.join(dir, KEY_CHECK_FILE), "garbage\n");
		expect(() => verifySecretsKey(key, dir, "SECRETS_KEY")).toThrow(SecretsKeyMismatchError);
	});
});
