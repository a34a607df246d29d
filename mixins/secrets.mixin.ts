/**
 * `this.secretsKey`: the key for secrets at rest (lib/crypto/secrets-key.ts), resolved and checked
 * against DATA_DIR once per process, whichever services of it need it, once DATA_DIR itself
 * passed the store's check (lib/store/sqlite/data-dir.ts).
 */
import type { ServiceSchema } from "moleculer";
import { config } from "../config";
import { resolveSecretsKey, verifySecretsKeyInStore, type KeyCheckStore } from "../lib/crypto/secrets-key";
import { prepareDataDir } from "../lib/store/sqlite/data-dir";

export interface SecretsVars {
	secretsKey: Buffer;
}

let resolved: Buffer | null = null;

/** DATA_DIR is checked first: a fault of it is the store's one-line message, not the key file's stack trace. */
function processSecretsKey(): Buffer {
	if (resolved) return resolved;
	prepareDataDir(config.dataDir);
	return (resolved = resolveSecretsKey(config.secretsKey, config.dataDir).key);
}

export function SecretsMixin(): Partial<ServiceSchema> {
	return {
		created() {
			this.secretsKey = processSecretsKey();
		},
	};
}

/**
 * Checks the key against the service's own store, its `<name>_secrets_key` collection (declared in
 * its DbMixin with models/secrets-key-check.ts): called from the service's own `started`, once
 * its collections are connected. A different key stops start-up (lib/crypto/secrets-key.ts).
 */
export function checkSecretsKeyInStore(service: { name: string; secretsKey: Buffer; db: Record<string, unknown> }): Promise<void> {
	const store = service.db[`${service.name}_secrets_key`] as KeyCheckStore;
	const where = config.mongoUri ? "MongoDB (MONGO_URI)" : `DATA_DIR=${config.dataDir}`;
	return verifySecretsKeyInStore(store, service.secretsKey, service.name, where);
}
