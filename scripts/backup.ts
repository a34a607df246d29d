/**
 * `npm run backup -- <dir>`: a backup of DATA_DIR into a new or empty directory, taken while the
 * service runs and writes (lib/store/backup/backup.ts, docs/operations.md#backup). Prints what it
 * holds; exits 1 with one line saying why when it cannot.
 */
import path from "path";
import { config } from "../config";
import { backupDataDir } from "../lib/store/backup/backup";
import { runOperatorCommand } from "./operator-command";

function main(): void {
	const [target, ...rest] = process.argv.slice(2);
	if (!target || rest.length) throw new Error("usage: npm run backup -- <new or empty directory>");
	const dir = path.resolve(target);
	const inBucket = config.artifactStore === "s3";
	const m = backupDataDir(config.dataDir, dir, {
		secretsKeyFromEnv: !!config.secretsKey,
		artifactsBucket: inBucket ? `${config.s3.bucket}/${config.s3.prefix}` : undefined,
	});
	const documents = Object.values(m.store.collections).reduce((a, b) => a + b, 0);
	const bytes = m.files.reduce((a, f) => a + f.bytes, m.store.bytes);
	console.log(`Backed up DATA_DIR=${config.dataDir} into ${dir}:`);
	const collections = Object.keys(m.store.collections).length;
	console.log(`  the store as of ${m.snapshotAt}: ${documents} documents in ${collections} collections (${m.store.file}, sha256 ${m.store.sha256})`);
	console.log(`  ${m.files.length} other files (artifacts, traces, keys), ${bytes} bytes in all`);
	console.log(`  the secrets key: ${m.secretsKey}`);
	if (m.artifactsBucket) console.log(`  artifacts and traces: in the bucket ${m.artifactsBucket}, not in this backup (back the bucket up on the S3 side)`);
	if (m.missingArtifacts.length)
		console.log(
			`  ${m.missingArtifacts.length} artifacts files named by builds were erased or replaced while the backup ran: ` +
				m.missingArtifacts.slice(0, 5).join(", "),
		);
	console.log(`Restore it with: npm run restore -- ${dir}`);
}

if (require.main === module) runOperatorCommand("backup", main);
