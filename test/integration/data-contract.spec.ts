/**
 * The data layer's contract, run against every back end there is: the embedded SQLite store
 * always, and MongoDB whenever MONGO_URI is set (no MongoDB server can run on the build machines,
 * so CI runs the SQLite side; the MongoDB side runs wherever a server is given).
 */
import fs from "fs";
import os from "os";
import path from "path";
import { ServiceBroker } from "moleculer";
import { loadConfig } from "../../config";
import { Collection, UniqueViolation, type StoreLocation } from "../../lib/store/collection";

const mongoUri = loadConfig(process.env).mongoUri;
const backends: [string, () => StoreLocation][] = [["SQLite", () => ({ dataDir: fs.mkdtempSync(path.join(os.tmpdir(), "glv3-contract-")), mongoUri: "" })]];
if (mongoUri) backends.push(["MongoDB", () => ({ dataDir: "", mongoUri })]);
else console.info("MONGO_URI is not set: the data contract runs on SQLite only.");

const broker = new ServiceBroker({ logger: false });
afterAll(() => broker.stop());

describe.each(backends)("data contract on %s", (_name, location) => {
	let where: StoreLocation;
	let seq = 0;
	const open = async (
		indexes = [{ fields: { project_title: 1 }, unique: true }, { fields: { project_id: 1, id: -1 } }, { fields: { key: 1 }, unique: true, sparse: true }],
	) => {
		const c = new Collection(`contract_${process.pid}_${++seq}`, { indexes: indexes as any }, where);
		await c.connect(broker);
		return c;
	};

	beforeAll(() => {
		where = location();
	});

	it("allocates integer ids atomically, never twice", async () => {
		const c = await open();
		const ids = await Promise.all(Array.from({ length: 200 }, () => c.nextId()));
		expect(new Set(ids).size).toBe(200);
		expect(Math.min(...ids)).toBe(1);
		expect(Math.max(...ids)).toBe(200);
		const doc = await c.insert({ project_id: 1, project_title: "1|a" });
		expect(doc.id).toBe(201);
		await c.remove({ id: doc.id });
		expect((await c.insert({ project_id: 1, project_title: "1|a" })).id).toBe(202);
		await c.disconnect();
	});

	it("returns documents without the store's _id", async () => {
		const c = await open();
		const doc = await c.insert({ project_id: 7, project_title: "7|x", nested: { a: [1, 2] } });
		expect(doc).toEqual({ id: 1, project_id: 7, project_title: "7|x", nested: { a: [1, 2] } });
		expect(await c.findOne({ id: 1 })).toEqual(doc);
		expect(await c.findOne({ id: 99 })).toBeNull();
		await c.disconnect();
	});

	it("enforces unique indexes in the store: of racing inserts exactly one wins", async () => {
		const c = await open();
		const results = await Promise.allSettled(Array.from({ length: 20 }, () => c.insert({ project_id: 1, project_title: "1|same" })));
		expect(results.filter(r => r.status === "fulfilled")).toHaveLength(1);
		for (const r of results.filter(r => r.status === "rejected")) expect(r.reason).toBeInstanceOf(UniqueViolation);
		expect(await c.count({ project_title: "1|same" })).toBe(1);
		await c.disconnect();
	});

	it("lets sparse unique fields be absent on many documents", async () => {
		const c = await open();
		await c.insert({ project_id: 1, project_title: "1|a" });
		await c.insert({ project_id: 1, project_title: "1|b" });
		await c.insert({ project_id: 1, project_title: "1|c", key: "k" });
		await expect(c.insert({ project_id: 1, project_title: "1|d", key: "k" })).rejects.toBeInstanceOf(UniqueViolation);
		await c.disconnect();
	});

	it("finds with sort, offset and limit, and counts", async () => {
		const c = await open();
		for (let i = 1; i <= 25; i++) await c.insert({ project_id: i % 2, project_title: `${i % 2}|${i}` });
		const page = await c.find({ project_id: 1 }, { sort: "-id", offset: 5, limit: 3 });
		expect(page.map(d => d.id)).toEqual([15, 13, 11]);
		expect((await c.find({ project_id: 0 }, { sort: ["project_id", "-id"], limit: 2 })).map(d => d.id)).toEqual([24, 22]);
		expect(await c.count({ project_id: 1 })).toBe(13);
		expect(await c.count({ id: { $in: [1, 2, 3, 999] } })).toBe(3);
		await c.disconnect();
	});

	it("finds without the fields a list leaves in the store, sorted and paged alike", async () => {
		const c = await open();
		for (let i = 1; i <= 5; i++) await c.insert({ project_id: 3, project_title: `3|${i}`, content: "x".repeat(1000 * i) });
		const page = await c.find({ project_id: 3 }, { sort: "-id", offset: 1, limit: 2, omit: ["content"] });
		expect(page).toEqual([
			{ id: 4, project_id: 3, project_title: "3|4" },
			{ id: 3, project_id: 3, project_title: "3|3" },
		]);
		// The documents themselves keep them.
		expect((await c.findOne({ id: 4 }))!.content).toHaveLength(4000);
		expect((await c.find({ project_id: 3 }, { sort: "id", limit: 1 }))[0].content).toHaveLength(1000);
		await c.disconnect();
	});

	it("updates as compare-and-set and refuses updates that break a unique index", async () => {
		const c = await open();
		const a = await c.insert({ project_id: 1, project_title: "1|a", status: "pending" });
		await c.insert({ project_id: 1, project_title: "1|b", status: "pending" });
		const won = await Promise.all(Array.from({ length: 5 }, () => c.update({ id: a.id, status: "pending" }, { status: "canceled" })));
		expect(won.reduce((x, y) => x + y, 0)).toBe(1);
		expect(await c.update({ id: a.id }, { status: "canceled" })).toBe(1);
		await expect(c.update({ id: a.id }, { project_title: "1|b" })).rejects.toBeInstanceOf(UniqueViolation);
		expect((await c.findOne({ id: a.id }))!.project_title).toBe("1|a");
		const changed = await c.updateOne({ id: a.id }, { note: "n" }, ["status"]);
		expect(changed).toEqual({ id: a.id, project_id: 1, project_title: "1|a", note: "n" });
		expect(await c.updateOne({ id: 999 }, { note: "x" })).toBeNull();
		expect(await c.remove({ project_id: 1 })).toBe(2);
		expect(await c.count()).toBe(0);
		await c.disconnect();
	});

	it("keeps data and the id counter across a restart", async () => {
		const c = await open();
		await c.insert({ project_id: 3, project_title: "3|kept" });
		await c.disconnect();
		const again = new Collection(c.name, { indexes: [{ fields: { project_title: 1 }, unique: true }] }, where);
		await again.connect(broker);
		expect(await again.findOne({ project_title: "3|kept" })).toMatchObject({ id: 1 });
		expect((await again.insert({ project_id: 3, project_title: "3|next" })).id).toBe(2);
		await expect(again.insert({ project_id: 3, project_title: "3|kept" })).rejects.toBeInstanceOf(UniqueViolation);
		await again.disconnect();
	});
});
