/**
 * `npm run recover-store -- <new dir>`: what can still be read of DATA_DIR's damaged store, and
 * its other files, written into a new directory to start the service on (lib/store/sqlite/salvage.ts,
 * docs/operations.md#damaged-store). Says what was lost, by collection and id range.
 */
import path from "path";
import { config } from "../config";
import { salvageStore } from "../lib/store/sqlite/salvage";
import { runOperatorCommand } from "./operator-command";

function main(): void {
	const [target, ...rest] = process.argv.slice(2);
	if (!target || rest.length) throw new Error("usage: npm run recover-store -- <new or empty directory>");
	const dir = path.resolve(target);
	const report = salvageStore(config.dataDir, dir);
	console.log(`Recovered what could be read of DATA_DIR=${config.dataDir} into ${dir}:`);
	for (const c of report.collections) console.log(`  ${c.name}: ${c.rows} documents${c.lost ? `; lost: ${c.lost}` : ""}`);
	if (report.unreadable.length) console.log(`  unreadable: ${report.unreadable.join(", ")}`);
	console.log(`  ${report.files} other files copied`);
	console.log(`Start the service on it: DATA_DIR=${dir} npm start (or move it in place of DATA_DIR).`);
}

if (require.main === module) runOperatorCommand("recover-store", main);
