/**
 * A store that refuses to lie about its files (lib/store/sqlite/store-files.ts, writer-start.ts,
 * docs/operations.md#damaged-store). Each fault is made on a crash image: the directory's files
 * copied while the store has them open, as a kill -9 or a power loss leaves them. A lost or
 * damaged write-ahead log, a database file gone or emptied beside the marker, and a restore
 * under way each stop the start with a message naming the file, what is wrong and how to
 * recover; following that advice starts the store with every write the database file holds.
 * While running, the log is checkpointed into the database file, so the file alone holds every
 * write but those of about the last second.
 */
import fs from "fs";
import os from "os";
import path from "path";
import { ServiceBroker } from "moleculer";
import { Collection, type Doc } from "../../../../lib/store/collection";
import { DATABASE_FILE, MARKER_FILE, RESTORING_FILE, SHM_FILE, WAL_FILE } from "../../../../lib/store/sqlite/store-files";
import { waitFor } from "../../../support/http";
import { crashImage, databaseFileAlone } from "../../../support/store";

const broker = new ServiceBroker({ logger: false });
afterAll(() => broker.stop());

const fresh = () => fs.mkdtempSync(path.join(os.tmpdir(), "glv3-store-files-"));
const open = async (dataDir: string) => {
	const c = new Collection("things", {}, { dataDir, mongoUri: "" });
	await c.connect(broker);
	return c;
};
const titles = (docs: Doc[]) => docs.map(d => d.title as string).sort();

/** A running store with `count` things written and checkpointed, then `more` written after; and its crash image. */
async function crashed(count: number, more = 0): Promise<{ image: string; checkpointed: string[]; written: string[] }> {
	const dir = fresh();
	const c = await open(dir);
	const checkpointed: string[] = [];
	for (let i = 0; i < count; i++) checkpointed.push((await c.insert({ title: `t${i}` })).title as string);
	// Checkpointed within about a second: the database file alone holds them.
	await waitFor("the checkpoint", () => databaseFileAlone(dir, "things").length === count, 15000);
	const written = [...checkpointed];
	for (let i = 0; i < more; i++) written.push((await c.insert({ title: `m${i}` })).title as string);
	const image = crashImage(dir);
	await c.disconnect();
	return { image, checkpointed, written };
}

it("while running, checkpoints the log into the database file: the file alone holds every answered write but the last moment's", async () => {
	const dir = fresh();
	const c = await open(dir);
	const answered = await Promise.all(Array.from({ length: 50 }, (_, i) => c.insert({ title: `t${i}` })));
	const alone = await waitFor(
		"the database file alone to hold every write",
		() => {
			const docs = databaseFileAlone(dir, "things");
			return docs.length === answered.length && docs;
		},
		15000,
	);
	expect(titles(alone)).toEqual(titles(answered));
	// The log is still there, in use: this was a checkpoint while running, not a close.
	expect(fs.existsSync(path.join(dir, WAL_FILE))).toBe(true);
	await c.disconnect();
});

it("a log lost after a crash: the start stops naming it, and goes on with the database file once its index is deleted as told", async () => {
	const { image, checkpointed } = await crashed(30, 10);
	fs.rmSync(path.join(image, WAL_FILE));
	await expect(open(image)).rejects.toThrow(
		`${path.join(image, WAL_FILE)} is missing while ${SHM_FILE} shows the store was not closed cleanly: the writes since its last checkpoint ` +
			`(at most about a second of them) were in that file. Put it back if a copy exists; otherwise restore the last backup ` +
			`(npm run restore -- <backup dir>), or, to go on with what ${DATABASE_FILE} holds, delete ${SHM_FILE} and start again ` +
			"(docs/operations.md#damaged-store)",
	);
	// Nothing was changed by the refusal: the same start refuses again.
	await expect(open(image)).rejects.toThrow("is missing while");
	fs.rmSync(path.join(image, SHM_FILE));
	const c = await open(image);
	expect(titles(await c.find({}))).toEqual(expect.arrayContaining(checkpointed));
	await c.disconnect();
});

it("a damaged log header: the start stops naming it, and goes on with the database file once the log is moved out", async () => {
	const { image, checkpointed, written } = await crashed(30, 10);
	const wal = path.join(image, WAL_FILE);
	const bytes = fs.readFileSync(wal);
	bytes[17] ^= 0xff;
	fs.writeFileSync(wal, bytes);
	await expect(open(image)).rejects.toThrow(
		`${wal} is damaged (its header is not a write-ahead log's): SQLite would ignore it, and the writes since the last checkpoint with it. ` +
			`To recover, restore the last backup (npm run restore -- <backup dir>); or, to go on with what ${DATABASE_FILE} holds (every write up to ` +
			`its last checkpoint), move ${WAL_FILE} and ${SHM_FILE} out of DATA_DIR and start again (docs/operations.md#damaged-store)`,
	);
	// Put back whole, the log is read again: every write is there.
	bytes[17] ^= 0xff;
	fs.writeFileSync(wal, bytes);
	const whole = await open(image);
	expect(titles(await whole.find({}))).toEqual([...written].sort());
	await whole.disconnect();

	const again = await crashed(20, 5);
	fs.writeFileSync(path.join(again.image, WAL_FILE), Buffer.alloc(32, 7));
	await expect(open(again.image)).rejects.toThrow("is damaged (its header is not a write-ahead log's)");
	for (const f of [WAL_FILE, SHM_FILE]) fs.renameSync(path.join(again.image, f), path.join(again.image, "..", `${path.basename(again.image)}-${f}`));
	const c = await open(again.image);
	expect(titles(await c.find({}))).toEqual(expect.arrayContaining(again.checkpointed));
	await c.disconnect();
	expect(checkpointed.length).toBe(30);
});

it("a database file gone or emptied beside the marker: the start stops rather than starting an empty store", async () => {
	const dir = fresh();
	const c = await open(dir);
	await c.insert({ title: "kept" });
	await c.disconnect();
	const marker = JSON.parse(fs.readFileSync(path.join(dir, MARKER_FILE), "utf8")) as { created: string };
	const gone = (what: string) =>
		`${path.join(dir, DATABASE_FILE)} ${what}, but ${MARKER_FILE} beside it says a store was created there on ${marker.created}: its data is gone ` +
		`(a lost or replaced file), and an empty store would start with a new root. To recover, restore the last backup (npm run restore -- <backup dir>); ` +
		`to start an empty store there on purpose, delete ${MARKER_FILE} (docs/operations.md#damaged-store)`;

	const database = path.join(dir, DATABASE_FILE);
	fs.renameSync(database, `${database}.moved`);
	await expect(open(dir)).rejects.toThrow(gone("is missing"));
	expect(fs.existsSync(database)).toBe(false);
	// An empty file in its place (a log lost before any checkpoint leaves the file without a table).
	fs.writeFileSync(database, "");
	await expect(open(dir)).rejects.toThrow(gone("holds no store"));
	fs.rmSync(database);
	fs.renameSync(`${database}.moved`, database);
	const back = await open(dir);
	expect(titles(await back.find({}))).toEqual(["kept"]);
	await back.disconnect();

	// Told to start empty: the marker deleted.
	fs.rmSync(database);
	fs.rmSync(path.join(dir, MARKER_FILE));
	const empty = await open(dir);
	expect(await empty.find({})).toEqual([]);
	await empty.disconnect();
	expect(fs.existsSync(path.join(dir, MARKER_FILE))).toBe(true);
});

it("a restore under way or cut short: the start stops naming it", async () => {
	const dir = fresh();
	const c = await open(dir);
	await c.disconnect();
	fs.writeFileSync(path.join(dir, RESTORING_FILE), "");
	await expect(open(dir)).rejects.toThrow(
		`DATA_DIR=${dir} is being restored (${RESTORING_FILE} is there): a restore is under way or was cut short; ` +
			`let it finish, or run npm run restore -- <backup dir> again (docs/operations.md#restore)`,
	);
});
