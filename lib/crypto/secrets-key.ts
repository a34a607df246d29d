/**
 * The secrets key: SECRETS_KEY, or one generated once into DATA_DIR. It must be the one the data was written with: with another key every encrypted
 * value (private tokens, integration secrets) fails to decrypt, and every token look-up is a 500.
 * So the first start leaves a known value, encrypted with its key, beside the data, and every later
 * start decrypts it first: a different key stops start-up with a message saying what to fix. Beside
 * the data means in DATA_DIR for one process, and in the store of each service that encrypts
 * (accounts, integrations) wherever that is, MongoDB included (verifySecretsKeyInStore).
 */
import crypto from "crypto";
import fs from "fs";
import path from "path";
import { decryptSecret, deriveKey, encryptSecret } from "./secrets";

export const KEY_CHECK_FILE = ".secrets-key-check";
const KNOWN_VALUE = "gitlab-v3-service: the secrets key of this data directory";

/** The check value for `key`: the known value encrypted with it. */
const checkValueFor = (key: Buffer) => encryptSecret(KNOWN_VALUE, key);

/** Whether `stored` is a check value written with `key` (a wrong key fails GCM authentication). */
function isCheckValueOf(stored: unknown, key: Buffer): boolean {
	try {
		return typeof stored === "string" && decryptSecret(stored.trim(), key) === KNOWN_VALUE;
	} catch {
		return false;
	}
}

export class SecretsKeyMismatchError extends Error {
	constructor(dataDir: string, keySource: "SECRETS_KEY" | "generated") {
		const used =
			keySource === "SECRETS_KEY"
				? "SECRETS_KEY is set to a different key"
				: `SECRETS_KEY is not set, so the key generated in ${path.join(dataDir, ".secrets-key")} was used`;
		super(
			`The secrets key does not match the data in DATA_DIR=${dataDir}: ${used}, but the data was written with another one ` +
				`(checked against ${path.join(dataDir, KEY_CHECK_FILE)}). Start with the key the data was written with: the same SECRETS_KEY, ` +
				`or, if it was never set, no SECRETS_KEY and the original DATA_DIR/.secrets-key. For a fresh start, point DATA_DIR at an empty directory.`,
		);
		this.name = "SecretsKeyMismatchError";
	}
}

/**
 * Verifies `key` against the check value in `dataDir`, writing the value on the first start. The
 * write is atomic (a complete file is linked into place), so processes sharing the directory never
 * read half a file.
 */
export function verifySecretsKey(key: Buffer, dataDir: string, keySource: "SECRETS_KEY" | "generated"): void {
	const file = path.join(dataDir, KEY_CHECK_FILE);
	if (!fs.existsSync(file)) {
		fs.mkdirSync(dataDir, { recursive: true });
		const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString("hex")}`;
		fs.writeFileSync(tmp, `${checkValueFor(key)}\n`, { mode: 0o600 });
		try {
			fs.linkSync(tmp, file);
		} catch (err) {
			// Another process wrote it first: verify against that one below.
			if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
		} finally {
			fs.rmSync(tmp, { force: true });
		}
	}
	if (!isCheckValueOf(fs.readFileSync(file, "utf8"), key)) throw new SecretsKeyMismatchError(dataDir, keySource);
}

/** What verifySecretsKeyInStore needs of a service's collection (lib/store/collection.ts). */
export interface KeyCheckStore {
	findOne(query: { name: string }): Promise<{ value?: unknown } | null>;
	insert(doc: { name: string; value: string }): Promise<unknown>;
}

const STORED_CHECK = "secrets-key";

export class StoredSecretsKeyMismatchError extends Error {
	constructor(service: string, where: string) {
		super(
			`The secrets key does not match the data of ${service} in ${where}: SECRETS_KEY is not the key that data was written with ` +
				`(checked against its ${service}_secrets_key collection). Start every node with the SECRETS_KEY the data was written with.`,
		);
		this.name = "StoredSecretsKeyMismatchError";
	}
}

/**
 * The same check as verifySecretsKey, in the service's own store: where the data is in MongoDB,
 * DATA_DIR is a pod's scratch space and remembers nothing, so only the store can say which key
 * its data was written with. The first start writes the check value; a race of two first starts
 * writes one (unique name) and both verify against it.
 */
export async function verifySecretsKeyInStore(store: KeyCheckStore, key: Buffer, service: string, where: string): Promise<void> {
	let doc = await store.findOne({ name: STORED_CHECK });
	if (!doc) {
		try {
			await store.insert({ name: STORED_CHECK, value: checkValueFor(key) });
		} catch (err) {
			// Another node wrote it first (unique name): verify against that one.
			if (!(await store.findOne({ name: STORED_CHECK }))) throw err;
		}
		doc = await store.findOne({ name: STORED_CHECK });
	}
	if (!isCheckValueOf(doc?.value, key)) throw new StoredSecretsKeyMismatchError(service, where);
}

/**
 * The key for secrets at rest: SECRETS_KEY when set; otherwise one generated once and kept in
 * DATA_DIR (fine for one machine; a cluster must share SECRETS_KEY). Throws when it is not the key
 * the data in DATA_DIR was written with (verifySecretsKey).
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
