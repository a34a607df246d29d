/**
 * The launcher's environment, filled in before anything loads config/ (which parses the
 * environment once, at import, and refuses TRANSPORTER without SECRETS_KEY): the local defaults,
 * and SECRETS_KEY from DATA_DIR/.secrets-key, the key `npm start` generates, so that either
 * command opens the same data. scripts/start-cluster.ts imports this module first.
 */
import { dataDirOf } from "../config/data-dir";
import { generatedSecretsKey } from "../lib/crypto/secrets-key";
import { prepareDataDir } from "../lib/store/sqlite/data-dir";

type Env = Record<string, string | undefined>;

const LOCAL_DEFAULTS = { TRANSPORTER: "nats://127.0.0.1:4222", CACHER: "redis://127.0.0.1:6379", NAMESPACE: "local", LOG_FORMAT: "text" } as const;

/** `env` with the local defaults and the data directory's key where it sets none (a copy). */
export function withLocalDefaults(callerEnv: Env): Record<string, string> {
	const env: Record<string, string> = {};
	for (const [k, v] of Object.entries(callerEnv)) if (v !== undefined) env[k] = v;
	for (const [k, v] of Object.entries(LOCAL_DEFAULTS)) if (!env[k]) env[k] = v;
	// A cluster needs one key on every node; locally that is the key `npm start` generated in DATA_DIR.
	// DATA_DIR is checked first, as npm start checks it: a fault of it is the store's one line.
	if (!env.SECRETS_KEY) {
		const dataDir = dataDirOf(env);
		prepareDataDir(dataDir);
		env.SECRETS_KEY = generatedSecretsKey(dataDir);
	}
	return env;
}

try {
	Object.assign(process.env, withLocalDefaults(process.env));
} catch (err) {
	// Before anything builds or starts, in the words start-cluster's own failures use.
	console.error(`start:cluster failed: ${(err as Error).message}`);
	process.exit(1);
}
