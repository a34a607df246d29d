/**
 * `npm run restore -- <backup dir> [--force]`: DATA_DIR made what the backup holds
 * (lib/store/backup/restore.ts, docs/operations.md#restore). Refused while a service uses
 * DATA_DIR, and into a directory that holds anything unless --force (which moves it aside, into
 * DATA_DIR/replaced-<time>/). Exits 1 with one line saying why when it cannot.
 */
import path from "path";
import { config } from "../config";
import { restoreDataDir } from "../lib/store/backup/restore";
import { runOperatorCommand } from "./operator-command";

function main(): void {
	const args = process.argv.slice(2);
	const force = args.includes("--force");
	const rest = args.filter(a => a !== "--force");
	if (rest.length !== 1 || rest[0].startsWith("--")) throw new Error("usage: npm run restore -- <backup directory> [--force]");
	const from = path.resolve(rest[0]);
	const { manifest, replaced } = restoreDataDir(from, config.dataDir, { force });
	const documents = Object.values(manifest.store.collections).reduce((a, b) => a + b, 0);
	if (replaced) console.log(`What DATA_DIR held is now in ${replaced} (nothing was deleted).`);
	console.log(
		`Restored ${from} into DATA_DIR=${config.dataDir}: the store as of ${manifest.snapshotAt} (${documents} documents), ` +
			`${manifest.files.length} other files.`,
	);
	console.log(`The secrets key: ${manifest.secretsKey}. Start the service as before (npm start).`);
}

if (require.main === module) runOperatorCommand("restore", main);
