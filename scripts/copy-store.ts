/**
 * `npm run copy-store -- --to <mongodb://…/db> [--force]`: the embedded store under DATA_DIR copied
 * whole into MongoDB; `--from <mongodb://…/db>` copies a MongoDB database into the embedded store
 * under DATA_DIR. Refused while a service uses DATA_DIR, and into a target that holds data unless
 * --force; run again after an interruption, it goes on where it stopped; it ends with a
 * record-by-record comparison and exits 1 if anything differs (lib/store/copy/,
 * docs/operations.md#from-one-machine-to-a-cluster).
 */
import fs from "fs";
import path from "path";
import { config } from "../config";
import { copyStore, type StoreSide } from "../lib/store/copy/copy-store";
import { mongoSide } from "../lib/store/copy/mongo-side";
import { sqliteSide } from "../lib/store/copy/sqlite-side";
import { runOperatorCommand } from "./operator-command";

const USAGE = "usage: npm run copy-store -- --to <mongodb://host/db> | --from <mongodb://host/db> [--force]";

async function main(): Promise<number> {
	const args = process.argv.slice(2);
	const force = args.includes("--force");
	const rest = args.filter(a => a !== "--force");
	if (rest.length !== 2 || !["--to", "--from"].includes(rest[0]) || !/^mongodb(\+srv)?:\/\//.test(rest[1])) throw new Error(USAGE);
	const toMongo = rest[0] === "--to";
	const purpose = toMongo ? "copying it into MongoDB" : "copying MongoDB into it";
	let source: StoreSide | undefined;
	let target: StoreSide | undefined;
	try {
		const embedded = sqliteSide(config.dataDir, purpose, toMongo ? "source" : "target");
		const mongo = await mongoSide(rest[1]).catch(async (err: unknown) => {
			await embedded.close();
			throw err;
		});
		[source, target] = toMongo ? [embedded, mongo] : [mongo, embedded];
		console.log(`Copying ${source.where} into ${target.where}:`);
		const report = await copyStore(source, target, { force, progress: line => console.log(`  ${line}`) });
		const documents = report.collections.reduce((a, c) => a + c.documents, 0);
		const equal = report.collections.reduce((a, c) => a + c.equal, 0);
		if (report.differences.length) {
			console.error(`The copy differs from its source in ${report.differences.length} places (first ones):`);
			for (const d of report.differences) console.error(`  ${d}`);
			console.error("Run the copy again with --force, with no service writing to the source.");
			return 1;
		}
		const [collections, counters] = [report.collections.length, Object.keys(report.counters).length];
		console.log(
			`Compared: ${equal} of ${documents} documents equal in ${collections} collections; the id counters of ${counters} collections carried over.`,
		);
		const key = path.join(config.dataDir, ".secrets-key");
		if (toMongo)
			console.log(
				config.secretsKey
					? "Secrets are encrypted with SECRETS_KEY: give every node of the cluster the same SECRETS_KEY."
					: fs.existsSync(key)
						? `Secrets are encrypted with the key generated in ${key}: give every node of the cluster SECRETS_KEY set to its contents.`
						: "No secrets key was found in DATA_DIR.",
			);
		const files = toMongo
			? `copy ${path.join(config.dataDir, "artifacts")} to the cluster's artifacts volume`
			: "copy the cluster's artifacts volume into DATA_DIR/artifacts";
		console.log(`Artifacts and traces stay files: ${files} (docs/operations.md#from-one-machine-to-a-cluster).`);
		return 0;
	} finally {
		await source?.close();
		await target?.close();
	}
}

if (require.main === module) runOperatorCommand("copy-store", main);
