/**
 * A service's secrets-key check, kept in its own store beside the data it encrypted
 * (lib/crypto/secrets-key.ts): one document, a known value encrypted with the key of the data.
 * Each service that encrypts keeps its own collection (accounts_secrets_key,
 * integrations_secrets_key), so that services sharing one DATA_DIR never share a file.
 * Its one document: `name` "secrets-key" (unique, so two first starts racing write one) and
 * `value`, the known value encrypted with the key the data is written with.
 */
export const secretsKeyCheckCollection = {
	indexes: [{ fields: { name: 1 }, unique: true }],
} as const;
