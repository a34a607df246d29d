/**
 * The embedded store's writer thread (lib/store/sqlite/writer-thread.ts): writes that arrive
 * together share a transaction, each one undone alone when refused; and on a real volume that
 * fills up, a write that cannot be stored is answered 503 and kept nowhere, every answered one
 * is kept, reads go on, writes are taken again once there is room, without a restart, and the
 * directory starts again once there is room (not before: a store that cannot take a write does
 * not start) (docs/architecture.md#embedded-store). A read-only DATA_DIR at start-up
 * is in store.spec.ts (a volume in use cannot be remounted read-only).
 */
import fs from "fs";
import os from "os";
import path from "path";
import { ServiceBroker } from "moleculer";
import { toHttpError } from "../../../../gateway/server/errors";
import { Collection, UniqueViolation, type CollectionOptions, type Doc } from "../../../../lib/store/collection";
import { mountTmpfs, type Volume } from "../../../support/volumes";

const broker = new ServiceBroker({ logger: false });
const volumes: Volume[] = [];
afterAll(async () => {
	await broker.stop();
	for (const v of volumes) v.unmount();
});

const SERVICE_UNAVAILABLE = { status: 503, body: { message: "503 Service Unavailable" } };
const INDEXES: CollectionOptions = { indexes: [{ fields: { key: 1 }, unique: true }] };

const open = async (dataDir: string, name = "things") => {
	const c = new Collection(name, INDEXES, { dataDir, mongoUri: "" });
	await c.connect(broker);
	return c;
};

/** What each write came to: the documents answered, and the errors of the others as HTTP answers. */
async function settle(writes: Promise<Doc>[]): Promise<{ stored: Doc[]; refused: ReturnType<typeof toHttpError>[] }> {
	const results = await Promise.allSettled(writes);
	return {
		stored: results.flatMap(r => (r.status === "fulfilled" ? [r.value] : [])),
		refused: results.flatMap(r => (r.status === "rejected" ? [toHttpError(r.reason)] : [])),
	};
}

it("writes sent together are committed together, a refused one undone alone", async () => {
	const dir = fs.mkdtempSync(path.join(os.tmpdir(), "glv3-writer-"));
	const c = await open(dir);
	const results = await Promise.allSettled(Array.from({ length: 60 }, (_, i) => c.insert({ key: `k${i % 40}`, i })));
	const stored = results.flatMap(r => (r.status === "fulfilled" ? [r.value] : []));
	expect(stored.map(d => d.key).sort()).toEqual(Array.from({ length: 40 }, (_, i) => `k${i}`).sort());
	for (const r of results) if (r.status === "rejected") expect(r.reason).toBeInstanceOf(UniqueViolation);
	await c.disconnect();
	const again = await open(dir);
	expect(await again.find({}, { sort: "id" })).toEqual([...stored].sort((a, b) => a.id - b.id));
	await again.disconnect();
	fs.rmSync(dir, { recursive: true, force: true });
});

it("a full volume: writes answered 503 and kept nowhere, answered ones kept, reads go on, writes resume and the directory starts with room", async () => {
	const volume = mountTmpfs(4 * 1024 * 1024);
	volumes.push(volume);
	const ballast = path.join(volume.dir, "ballast");
	fs.writeFileSync(ballast, Buffer.alloc(1024 * 1024));
	const spare = path.join(volume.dir, "spare");
	fs.writeFileSync(spare, Buffer.alloc(256 * 1024));
	const c = await open(volume.dir);
	const pad = "x".repeat(16 * 1024);
	const answered: Doc[] = [];
	let first503: ReturnType<typeof toHttpError> | undefined;
	for (let i = 0; !first503; i++) {
		if (i > 1000) throw new Error("a 4 MiB volume took 16 MiB of writes");
		try {
			answered.push(await c.insert({ key: `seq-${i}`, pad }));
		} catch (err) {
			first503 = toHttpError(err as object);
		}
	}
	expect(first503).toMatchObject(SERVICE_UNAVAILABLE);
	// A burst into the full volume: whatever was answered is kept, whatever was refused is not.
	const burst = await settle(Array.from({ length: 50 }, (_, i) => c.insert({ key: `burst-${i}`, pad })));
	expect(burst.refused.length).toBeGreaterThan(0);
	for (const r of burst.refused) expect(r).toMatchObject(SERVICE_UNAVAILABLE);
	answered.push(...burst.stored);
	const keys = (docs: Doc[]) => docs.map(d => d.key).sort();
	// Reads go on.
	expect(await c.count()).toBe(answered.length);
	expect(keys(await c.find({}, { omit: ["pad"] }))).toEqual(keys(answered));

	fs.rmSync(ballast);
	const after = await c.insert({ key: "after", pad });
	answered.push(after);
	expect(await c.findOne({ key: "after" })).toEqual(after);
	await c.disconnect();

	// The close's checkpoint needs room for the database file to grow while the log still holds
	// its pages: the volume is full again, and a store that cannot take a write does not start.
	expect(volume.free()).toBe(0);
	await expect(open(volume.dir)).rejects.toThrow(`DATA_DIR=${volume.dir} is not writable (ENOSPC: its disk is full)`);
	fs.rmSync(spare);
	const again = await open(volume.dir);
	expect(await again.count()).toBe(answered.length);
	expect(keys(await again.find({}, { omit: ["pad"] }))).toEqual(keys(answered));
	await again.disconnect();
});
