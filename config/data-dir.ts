/**
 * Where the data lives: DATA_DIR, `./data` by default. Its own module so that a launcher can find
 * the directory (and the secrets key generated there) before it loads config/ (scripts/cluster-env.ts).
 */
import path from "path";

export const dataDirOf = (env: Record<string, string | undefined>): string => path.resolve(env.DATA_DIR || "./data");
