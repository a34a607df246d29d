/**
 * `this.secretsKey`: the key for secrets at rest (lib/crypto/secrets-key.ts), resolved and checked
 * against DATA_DIR once per process, whichever services of it need it.
 */
import type { ServiceSchema } from "moleculer";
import { config } from "../config";
import { resolveSecretsKey } from "../lib/crypto/secrets-key";

export interface SecretsVars {
	secretsKey: Buffer;
}

let resolved: Buffer | null = null;

export function processSecretsKey(): Buffer {
	return (resolved ??= resolveSecretsKey(config.secretsKey, config.dataDir).key);
}

export function SecretsMixin(): Partial<ServiceSchema> {
	return {
		created() {
			this.secretsKey = processSecretsKey();
		},
	};
}
