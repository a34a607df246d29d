/**
 * Build numbers on the real stores (SQLite, and MongoDB through the wire-protocol server of
 * test/support/mongo-server.ts): dense and in id order under concurrent writers; a counter left
 * behind its builds (by a crash, on MongoDB, or in the NeDB files of an earlier version) rolled
 * forward; and a gap left by an earlier version (counter advanced, build never stored) renumbered
 * at start-up.
 */
import fs from "fs";
import os from "os";
import path from "path";
import { ServiceBroker } from "moleculer";
import { seqKey } from "../../../models/build";
import { BuildNumbers, type NumberedDoc } from "../../../lib/builds/build-numbers";
import { type BuildCounterDoc } from "../../../models/build";
import { Collection, type StoreLocation } from "../../../lib/store/collection";
import { startMongoServer, type MongoServer } from "../../support/mongo-server";

let mongo: MongoServer;
beforeAll(async () => {
	mongo = await startMongoServer();
});
const backends: [string, () => StoreLocation][] = [
	["SQLite", () => ({ dataDir: fs.mkdtempSync(path.join(os.tmpdir(), "glv3-numbers-")), mongoUri: "" })],
	["MongoDB", () => ({ dataDir: "", mongoUri: mongo.database(`numbers_${process.pid}`) })],
];

interface Build extends NumberedDoc {
	name: string;
}

const broker = new ServiceBroker({ logger: false });
const dirs: string[] = [];
afterAll(async () => {
	await broker.stop();
	await mongo?.stop();
	for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

describe.each(backends)("build numbers on %s", (_name, location) => {
	let where: StoreLocation;
	let n = 0;
	let builds: Collection<Build>;
	let counters: Collection<BuildCounterDoc>;

	beforeEach(async () => {
		if (!where) {
			where = location();
			if (where.dataDir) dirs.push(where.dataDir);
		}
		n++;
		builds = new Collection<Build>(`numbers_builds_${process.pid}_${n}`, { indexes: [{ fields: { project_seq: 1 }, unique: true }] }, where);
		counters = new Collection<BuildCounterDoc>(`numbers_counters_${process.pid}_${n}`, {}, where);
		await builds.connect(broker);
		await counters.connect(broker);
	});

	afterEach(async () => {
		await builds.disconnect();
		await counters.disconnect();
	});

	const make = (name: string) => () => ({ project_id: 7, name });
	const stored = async (projectId = 7) =>
		(await builds.find({ project_seq: { $gte: seqKey(projectId, 0), $lte: seqKey(projectId, 9_999_999_999) } }, { sort: ["seq"] })).map(b => [b.seq, b.id]);

	it("numbers builds 1…n in id order, also with two writers (two replicas) racing on one project", async () => {
		const a = new BuildNumbers(builds, counters);
		const b = new BuildNumbers(builds, counters);
		await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).insert(7, 1 + (i % 3), make(`b${i}`))));
		const rows = await stored();
		expect(rows.map(([seq]) => seq)).toEqual(Array.from({ length: rows.length }, (_, i) => i + 1));
		expect(rows.length).toBe(Array.from({ length: 40 }, (_, i) => 1 + (i % 3)).reduce((x, y) => x + y));
		const ids = rows.map(([, id]) => id);
		expect(ids).toEqual([...ids].sort((x, y) => x - y));
		expect(await a.total(7)).toBe(rows.length);
		expect(await a.total(8)).toBe(0);
	});

	it("rolls a counter left behind its builds forward (at the next read on MongoDB, at start-up on SQLite), and numbers after it", async () => {
		const numbers = new BuildNumbers(builds, counters);
		await numbers.insert(7, 3, make("before"));
		// Builds 4 and 5 stored without moving the counter: a process killed in between on MongoDB, NeDB files imported.
		for (const seq of [4, 5]) await builds.insert({ project_id: 7, name: "orphan", id: await builds.nextId(), seq, project_seq: seqKey(7, seq) });
		expect((await counters.findOne({ id: 7 }))!.seq).toBe(3);
		if (builds.transactional) expect(await numbers.repair()).toEqual([]);
		expect(await numbers.total(7)).toBe(5);
		expect((await counters.findOne({ id: 7 }))!.seq).toBe(5);
		// And a writer that starts from a lagging counter steps over what is stored.
		await counters.update({ id: 7 }, { seq: 2 });
		const [next] = await numbers.insert(7, 1, make("after"));
		expect(next.seq).toBe(6);
		expect((await stored()).map(([seq]) => seq)).toEqual([1, 2, 3, 4, 5, 6]);
		expect(await numbers.total(7)).toBe(6);
	});

	it("renumbers at start-up a project whose counter is ahead of its builds (gaps from an earlier version), and leaves others alone", async () => {
		const numbers = new BuildNumbers(builds, counters);
		await numbers.insert(9, 2, () => ({ project_id: 9, name: "fine" }));
		// The earlier allocation: counter to 6 first, then builds 3 and 6 never stored.
		for (const seq of [1, 2, 4, 5]) await builds.insert({ project_id: 7, name: `s${seq}`, id: 100 + seq, seq, project_seq: seqKey(7, seq) });
		await counters.insert({ id: 7, seq: 6 });
		const messages: string[] = [];
		expect(await numbers.repair(m => messages.push(m))).toEqual([7]);
		expect(messages).toEqual(["Project 7: its build counter said 6 but 4 builds are stored; renumbered them 1…4."]);
		expect(await stored()).toEqual([
			[1, 101],
			[2, 102],
			[3, 104],
			[4, 105],
		]);
		expect(await numbers.total(7)).toBe(4);
		expect(await numbers.total(9)).toBe(2);
		expect(await numbers.repair()).toEqual([]);
	});
});
