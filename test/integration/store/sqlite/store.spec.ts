/**
 * Opening the embedded store (lib/store/sqlite/store.ts): one store per DATA_DIR and process,
 * shared by the collections of every service and closed after the last one; a DATA_DIR that is
 * missing is made; one that is read-only, or cannot be made, or is a file, stops the start with a
 * message that names it (real read-only volumes), and starts again as it was once it is writable.
 * Closed cleanly, the database file alone holds every record.
 */
import fs from "fs";
import os from "os";
import path from "path";
import { ServiceBroker } from "moleculer";
import { Collection } from "../../../../lib/store/collection";
import { DATABASE_FILE, MARKER_FILE } from "../../../../lib/store/sqlite/store-files";
import { openFiles } from "../../../support/open-files";
import { mountTmpfs, type Volume } from "../../../support/volumes";

const broker = new ServiceBroker({ logger: false });
const volumes: Volume[] = [];
afterAll(async () => {
	await broker.stop();
	for (const v of volumes) v.unmount();
});

const open = async (dataDir: string, name = "things") => {
	const c = new Collection(name, {}, { dataDir, mongoUri: "" });
	await c.connect(broker);
	return c;
};
const volume = (mode: "ro" | "rw") => {
	const v = mountTmpfs(4 * 1024 * 1024, mode);
	volumes.push(v);
	return v;
};
const refusal = (dataDir: string, why: string) =>
	`DATA_DIR=${dataDir} ${why}: the embedded store and the secrets key are kept there; ` +
	"point DATA_DIR at a writable directory with free space, or fix this one (docs/operations.md#start-up-faults)";
const READ_ONLY = "(EROFS: it is on a read-only file system)";

it("makes a missing DATA_DIR, shares one store among collections, and closes it after the last one", async () => {
	const dataDir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "glv3-store-")), "a", "b");
	const store = path.join(dataDir, DATABASE_FILE);
	const labels = await open(dataDir, "labels");
	const keys = await open(dataDir, "keys");
	await labels.insert({ title: "bug" });
	await keys.insert({ title: "k" });
	expect(fs.readdirSync(dataDir).sort()).toEqual([DATABASE_FILE, `${DATABASE_FILE}-shm`, `${DATABASE_FILE}-wal`, MARKER_FILE]);
	await labels.disconnect();
	expect(await keys.find({})).toEqual([{ id: 1, title: "k" }]);
	await keys.disconnect();
	expect(openFiles(f => f.startsWith(store))).toBe(0);
	// Closed cleanly: the database file alone holds every record (its log checkpointed and removed).
	expect(fs.readdirSync(dataDir).sort()).toEqual([DATABASE_FILE, MARKER_FILE]);
	const again = await open(dataDir, "labels");
	expect(await again.find({})).toEqual([{ id: 1, title: "bug" }]);
	await again.disconnect();
});

it("a read-only DATA_DIR stops the start with a message naming it", async () => {
	const v = volume("ro");
	await expect(open(v.dir)).rejects.toThrow(refusal(v.dir, `is not writable ${READ_ONLY}`));
});

it("a store on a volume that is read-only at start-up: refused with the directory named, and as it was once writable again", async () => {
	const v = volume("rw");
	const c = await open(v.dir);
	const kept = await c.insert({ title: "kept" });
	await c.disconnect();
	v.remount("ro");
	await expect(open(v.dir)).rejects.toThrow(refusal(v.dir, `is not writable ${READ_ONLY}`));
	v.remount("rw");
	const again = await open(v.dir);
	expect(await again.find({})).toEqual([kept]);
	await again.disconnect();
});

it("a DATA_DIR that cannot be made stops the start with a message naming it", async () => {
	const v = volume("ro");
	const missing = path.join(v.dir, "data");
	await expect(open(missing)).rejects.toThrow(refusal(missing, `cannot be created ${READ_ONLY}`));
	const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "glv3-store-")), "file");
	fs.writeFileSync(file, "");
	await expect(open(file)).rejects.toThrow(refusal(file, "is a file, not a directory (ENOTDIR: a file stands where a directory should be)"));
	await expect(open(path.join(file, "data"))).rejects.toThrow(
		refusal(path.join(file, "data"), "cannot be created (ENOTDIR: a file stands where a directory should be)"),
	);
});
