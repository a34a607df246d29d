/**
 * What the embedded store's checks cost at size, measured on this machine (not a test):
 *
 *   npx tsx test/perf/store-check-costs.ts [--builds 1000000] [--dir DIR]
 *
 * Seeds DIR (a scratch directory by default) with that many builds of one project through the
 * builds service's own store (scripts/seed-store.ts) unless it holds them already, then times the
 * writer's whole start (./lib/store/sqlite/writer-start.ts: the file checks, the bounded integrity
 * check, the start's synced write), SQLite's full `quick_check` (what the start runs below
 * FULL_CHECK_PAGES) and a backup's `VACUUM INTO`. Figures in docs/operations.md#damaged-store.
 */
import crypto from "crypto";
import fs from "fs";
import os from "os";
import path from "path";
import { performance } from "perf_hooks";
import { DatabaseSync } from "node:sqlite";
import { FULL_CHECK_PAGES, quickCheck } from "../../lib/store/sqlite/integrity";
import { DATABASE_FILE } from "../../lib/store/sqlite/store-files";
import { openForWriting } from "../../lib/store/sqlite/writer-start";
import { seedIntoStore } from "../../scripts/seed-store";

const args = process.argv.slice(2);
const arg = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const builds = Number(arg("--builds") ?? 1000000);
const dir = arg("--dir") ?? fs.mkdtempSync(path.join(os.tmpdir(), "glv3-check-costs-"));

function timed<T>(what: string, run: () => T): T {
	const started = performance.now();
	const value = run();
	console.log(`${what}: ${Math.round(performance.now() - started)} ms`);
	return value;
}

async function main(): Promise<void> {
	const file = path.join(dir, DATABASE_FILE);
	const held = () => {
		if (!fs.existsSync(file)) return 0;
		const db = new DatabaseSync(file, { readOnly: true });
		try {
			return db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'builds'").get()
				? (db.prepare("SELECT count(*) AS n FROM builds").get() as { n: number }).n
				: 0;
		} finally {
			db.close();
		}
	};
	const have = held();
	if (have < builds) {
		console.log(`seeding ${builds - have} builds into ${dir}…`);
		const commit = (i: number) => ({
			id: crypto.createHash("sha1").update(String(i)).digest("hex"),
			title: `c${i}`,
			message: `c${i}`,
			author_name: "Ada",
			author_email: "ada@example.com",
			created_at: "2026-01-01T00:00:00.000Z",
		});
		await seedIntoStore(
			dir,
			1,
			builds - have,
			i => ({ body: { name: ["rspec", "rubocop", "deploy"][i % 3], stage: "test", ref: "master", tag: false, commit: commit(i) }, status: "success" }),
			() => undefined,
		);
	}
	const db = new DatabaseSync(file, { readOnly: true });
	const pages = (db.prepare("PRAGMA page_count").get() as { page_count: number }).page_count;
	console.log(`${held()} builds, ${(fs.statSync(file).size / 2 ** 20).toFixed(0)} MiB, ${pages} pages (the start's full check stops at ${FULL_CHECK_PAGES})`);
	db.close();
	timed("the writer's start (file checks, bounded integrity check, a synced write)", () => openForWriting(dir).close());
	const check = new DatabaseSync(file, { readOnly: true });
	timed("SQLite's full quick_check", () => quickCheck(check));
	check.close();
	const backup = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "glv3-check-costs-backup-")), DATABASE_FILE);
	const source = new DatabaseSync(file);
	timed("a backup's VACUUM INTO", () => source.prepare("VACUUM INTO ?").run(backup));
	source.close();
	fs.rmSync(path.dirname(backup), { recursive: true, force: true });
}

void main();
