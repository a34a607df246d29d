/**
 * The integrity check at start (lib/store/sqlite/integrity.ts): a damaged table page, a file cut
 * short and a file that is not a database each stop the start with a message naming
 * store.sqlite, what is wrong and how to recover, instead of a service that answers 503 for
 * ever. Past FULL_CHECK_PAGES the check is bounded: it still finds a file cut short and a damaged
 * first or last page of a table, not a damaged page in the middle, which the full check finds.
 */
import fs from "fs";
import os from "os";
import path from "path";
import { DatabaseSync } from "node:sqlite";
import { ServiceBroker } from "moleculer";
import { Collection } from "../../../../lib/store/collection";
import { checkIntegrity, cutShort, quickCheck } from "../../../../lib/store/sqlite/integrity";
import { DATABASE_FILE } from "../../../../lib/store/sqlite/store-files";

const broker = new ServiceBroker({ logger: false });
afterAll(() => broker.stop());

const open = async (dataDir: string) => {
	const c = new Collection("things", {}, { dataDir, mongoUri: "" });
	await c.connect(broker);
	return c;
};
/** Why the store refused to start, or that it started. */
const refusal = (dataDir: string): Promise<string> =>
	open(dataDir).then(
		async c => {
			await c.disconnect();
			return "it started";
		},
		(err: Error) => err.message,
	);

/** A store closed cleanly with 400 things of 1 KB: every page in the database file. */
async function closedStore(): Promise<{ dir: string; file: string }> {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "glv3-integrity-"));
	const c = await open(dir);
	await Promise.all(Array.from({ length: 400 }, (_, i) => c.insert({ title: `t${i}`, pad: "x".repeat(1000) })));
	await c.disconnect();
	return { dir, file: path.join(dir, DATABASE_FILE) };
}

/** The table's leaf pages, in key order (SQLite's dbstat). */
function leafPages(file: string): { pages: number[]; pageSize: number } {
	const db = new DatabaseSync(file, { readOnly: true });
	try {
		const pageSize = (db.prepare("PRAGMA page_size").get() as { page_size: number }).page_size;
		const rows = db.prepare("SELECT pageno FROM dbstat WHERE name = 'things' AND pagetype = 'leaf' ORDER BY path").all() as { pageno: number }[];
		return { pages: rows.map(r => r.pageno), pageSize };
	} finally {
		db.close();
	}
}

/** Overwrites a page's b-tree header (its type and cell count) with garbage, as a bad disk sector would. */
function damagePage(file: string, page: number, pageSize: number): void {
	const fd = fs.openSync(file, "r+");
	fs.writeSync(fd, Buffer.alloc(8, 0x5a), 0, 8, (page - 1) * pageSize);
	fs.closeSync(fd);
}

const damaged = (file: string, what: string) =>
	`${file} is damaged (${what}): the service will not serve from it. To recover, restore the last backup (npm run restore -- <backup dir>), ` +
	`or recover what SQLite can still read of it into a new directory (npm run recover-store -- <new dir>; docs/operations.md#damaged-store)`;

it("a damaged table page stops the start, naming store.sqlite and how to recover", async () => {
	const { dir, file } = await closedStore();
	const { pages, pageSize } = leafPages(file);
	expect(pages.length).toBeGreaterThan(20);
	damagePage(file, pages[Math.floor(pages.length / 2)], pageSize);
	const err = await refusal(dir);
	const found = /^\S+ is damaged \(SQLite's integrity check: (.*)\): the service/.exec(err)?.[1];
	expect(found).toMatch(/Tree|page|malformed/i);
	expect(err).toBe(damaged(file, `SQLite's integrity check: ${found}`));
});

it("a file cut short, and a file that is not a database, stop the start", async () => {
	const { dir, file } = await closedStore();
	const size = fs.statSync(file).size;
	fs.truncateSync(file, Math.floor(size / 2 / 4096) * 4096);
	const message = await refusal(dir);
	expect(message).toMatch(/^\S+ is damaged \(the file is \d+ bytes, its header says \d+ pages of 4096 \(\d+ bytes\): it was cut short\): /);
	expect(message).toBe(damaged(file, /\((the file is .* cut short)\): the service/.exec(message)![1]));

	const other = fs.mkdtempSync(path.join(os.tmpdir(), "glv3-integrity-"));
	fs.writeFileSync(path.join(other, DATABASE_FILE), Buffer.alloc(8192, 0x42));
	await expect(open(other)).rejects.toThrow(damaged(path.join(other, DATABASE_FILE), "file is not a database"));
});

it("past its page bound the check reads only the edges: a damaged edge page or a cut file found, a middle page left to the full check", async () => {
	const { file } = await closedStore();
	const { pages, pageSize } = leafPages(file);
	const bounded = (db: DatabaseSync) => checkIntegrity(db, 1);
	const withDb = <T>(run: (db: DatabaseSync) => T): T => {
		const db = new DatabaseSync(file);
		try {
			return run(db);
		} finally {
			db.close();
		}
	};
	expect(withDb(bounded)).toEqual([]);

	damagePage(file, pages[Math.floor(pages.length / 2)], pageSize);
	expect(withDb(bounded)).toEqual([]);
	expect(withDb(quickCheck).length).toBeGreaterThan(0);

	damagePage(file, pages[pages.length - 1], pageSize);
	expect(() => withDb(bounded)).toThrow(/malformed/);
	const cut = fs.statSync(file).size;
	fs.truncateSync(file, cut - pageSize);
	expect(cutShort(file)).toMatch(/it was cut short$/);
});
