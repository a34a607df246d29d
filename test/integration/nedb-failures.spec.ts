/**
 * The NeDB store when its file cannot be written (a full, read-only or unwritable volume): a write
 * that does not reach the file is undone and answered 503, a torn last line never stops a start,
 * and a failed compaction is no unhandled rejection. Real NeDB files in a temporary directory; the
 * failures are injected where NeDB calls the file system (its storage module), since no full volume
 * can be mounted here.
 */
import fs from "fs";
import os from "os";
import path from "path";
import vm from "vm";
import { ServiceBroker } from "moleculer";
import { toHttpError } from "../../gateway/errors";
import { Collection, type StoreLocation } from "../../lib/store/collection";
import { waitFor } from "../support/http";

type Write = (file: string, ...rest: any[]) => Promise<void>;
// The module NeDB writes its files through: lib/persistence.js calls `storage.<fn>` at each write.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const storage = require("@seald-io/nedb/lib/storage.js") as { appendFileAsync: Write; crashSafeWriteFileLinesAsync: Write };
const real = { ...storage };

const broker = new ServiceBroker({ logger: false });
afterAll(() => broker.stop());
afterEach(() => jest.restoreAllMocks());

const enospc = () => Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC", errno: -28, syscall: "write" });

/** The next `method` call on `file` does `failure` instead (other files and later calls go through). */
function failNext(method: keyof typeof storage, file: string, failure: Write) {
	const original = real[method];
	let failed = false;
	jest.spyOn(storage, method).mockImplementation((target, ...rest) => {
		if (target !== file || failed) return original(target, ...rest);
		failed = true;
		return failure(target, ...rest);
	});
}
/** An append that writes half its line, as one cut short by a full volume, then fails. */
const tornAppend: Write = async (file, data: string) => {
	await fs.promises.appendFile(file, data.slice(0, Math.floor(data.length / 2)));
	throw enospc();
};
const failedAppend: Write = () => Promise.reject(enospc());

let where: StoreLocation;
let seq = 0;
beforeEach(() => {
	// Each test but the last checks what one failed write leaves, and writes again at once: no pause.
	where = { dataDir: fs.mkdtempSync(path.join(os.tmpdir(), "glv3-nedb-failures-")), mongoUri: "", writePauseMs: 0 };
});
const open = async (name = `failures_${process.pid}_${++seq}`, location = where) => {
	const c = new Collection(name, { indexes: [{ fields: { title: 1 }, unique: true }] }, location);
	await c.connect(broker);
	return c;
};
const fileOf = (c: Collection, counters = false) => path.join(where.dataDir, `${c.name}${counters ? ".counters" : ""}.db`);
const SERVICE_UNAVAILABLE = { status: 503, body: { message: "503 Service Unavailable" }, unexpected: false };
const expect503 = async (write: Promise<unknown>) => {
	const err = await write.then(
		() => new Error("the write succeeded"),
		(e: unknown) => e,
	);
	expect(toHttpError(err as object)).toMatchObject(SERVICE_UNAVAILABLE);
};

it("an insert whose append fails is answered 503 and not kept; the next insert survives a reconnect", async () => {
	const c = await open();
	await c.insert({ title: "a" });
	failNext("appendFileAsync", fileOf(c), tornAppend);
	await expect503(c.insert({ title: "b" }));
	expect(await c.findOne({ title: "b" })).toBeNull();
	expect(await c.count()).toBe(1);
	// Not glued onto the torn line the failed append left.
	const next = await c.insert({ title: "c" });
	await c.disconnect();
	const again = await open(c.name);
	expect(await again.find({}, { sort: "id" })).toEqual([{ id: 1, title: "a" }, next]);
	await again.disconnect();
});

it("writes queued behind one whose append fails are all kept, and only it is undone", async () => {
	const c = await open();
	failNext("appendFileAsync", fileOf(c), tornAppend);
	const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => c.insert({ title: `t${i}` })));
	const kept = results.flatMap(r => (r.status === "fulfilled" ? [r.value] : []));
	expect(kept).toHaveLength(9);
	for (const r of results) if (r.status === "rejected") expect(toHttpError(r.reason)).toMatchObject(SERVICE_UNAVAILABLE);
	expect(await c.find({}, { sort: "id" })).toEqual(kept.sort((a, b) => a.id - b.id));
	await c.disconnect();
	const again = await open(c.name);
	expect(await again.find({}, { sort: "id" })).toEqual(kept);
	await again.disconnect();
});

it("an update or a remove whose append fails leaves the old document", async () => {
	const c = await open();
	const doc = await c.insert({ title: "a", status: "pending" });
	failNext("appendFileAsync", fileOf(c), failedAppend);
	await expect503(c.update({ id: doc.id }, { status: "running" }));
	expect(await c.findOne({ id: doc.id })).toEqual(doc);
	failNext("appendFileAsync", fileOf(c), tornAppend);
	await expect503(c.remove({ id: doc.id }));
	expect(await c.findOne({ id: doc.id })).toEqual(doc);
	expect(await c.update({ id: doc.id, status: "pending" }, { status: "running" })).toBe(1);
	await c.disconnect();
	const again = await open(c.name);
	expect(await again.find({})).toEqual([{ ...doc, status: "running" }]);
	await again.disconnect();
});

it("an update of several documents whose append fails part way keeps none of them changed, the whole lines it wrote included", async () => {
	const c = await open();
	const docs = [await c.insert({ title: "x", project: 1 }), await c.insert({ title: "y", project: 1 }), await c.insert({ title: "z", project: 1 })];
	// Half of the three lines: the first whole, the second torn.
	failNext("appendFileAsync", fileOf(c), tornAppend);
	await expect503(c.update({ project: 1 }, { status: "done" }));
	expect(await c.find({}, { sort: "id" })).toEqual(docs);
	await c.disconnect();
	const again = await open(c.name);
	expect(await again.find({}, { sort: "id" })).toEqual(docs);
	await again.disconnect();
});

it("while a failed write cannot be undone (its file unreadable), reads answer 503 rather than serve it", async () => {
	const c = await open();
	const doc = await c.insert({ title: "a", status: "pending" });
	const readFile = fs.promises.readFile;
	let unreadable = 2;
	jest.spyOn(fs.promises, "readFile").mockImplementation(((file: string, ...rest: any[]) =>
		file === fileOf(c) && unreadable-- > 0
			? Promise.reject(Object.assign(new Error("EIO: i/o error, read"), { code: "EIO" }))
			: readFile(file, ...rest)) as typeof readFile);
	failNext("appendFileAsync", fileOf(c), tornAppend);
	await expect503(c.update({ id: doc.id }, { status: "running" }));
	await expect503(c.findOne({ id: doc.id }));
	expect(await c.findOne({ id: doc.id })).toEqual(doc);
	await c.disconnect();
});

it("an id whose counter update fails to append is answered 503 and not handed out", async () => {
	const c = await open();
	expect(await c.nextId()).toBe(1);
	failNext("appendFileAsync", fileOf(c, true), tornAppend);
	await expect503(c.nextId());
	expect(await c.nextId()).toBe(2);
	await c.disconnect();
	const again = await open(c.name);
	expect(await again.nextId()).toBe(3);
	await again.disconnect();
});

it("a torn last line left by a crash mid-append is cut when a collection connects", async () => {
	const c = await open();
	for (const title of ["a", "b", "c"]) await c.insert({ title });
	await c.disconnect();
	fs.appendFileSync(fileOf(c), '{"title":"d","id":4,"_id":"Xq');
	fs.appendFileSync(fileOf(c, true), '{"_id":"x","se');
	const again = await open(c.name);
	expect((await again.find({}, { sort: "id" })).map(d => d.title)).toEqual(["a", "b", "c"]);
	expect(await again.insert({ title: "d" })).toEqual({ id: 4, title: "d" });
	await again.disconnect();
	const third = await open(c.name);
	expect((await third.find({}, { sort: "id" })).map(d => d.title)).toEqual(["a", "b", "c", "d"]);
	await third.disconnect();
});

it("a compaction whose rewrite fails is no unhandled rejection, and the next compaction works", async () => {
	// Jest's `process` is a copy: the process's own events reach listeners on the real one only.
	const realProcess = vm.runInThisContext("process") as NodeJS.Process;
	const unhandled: unknown[] = [];
	const onUnhandled = (reason: unknown) => unhandled.push(reason);
	realProcess.on("unhandledRejection", onUnhandled);
	const c = await open(undefined, { ...where, compactEveryMs: 5000 });
	const counters = fileOf(c, true);
	const lines = () => fs.readFileSync(counters, "utf8").split("\n").filter(Boolean).length;
	try {
		for (let i = 0; i < 300; i++) await c.nextId();
		// The first rewrite of the counters' file runs out of space half-way through its temporary copy.
		const original = real.crashSafeWriteFileLinesAsync;
		let calls = 0;
		let tempLeftAtRetry: boolean | undefined;
		const retried = new Promise<void>((resolve, reject) => {
			jest.spyOn(storage, "crashSafeWriteFileLinesAsync").mockImplementation(async (file, lines: string[], ...rest) => {
				if (file !== counters) return original(file, lines, ...rest);
				if (++calls === 1) {
					await fs.promises.writeFile(`${file}~`, lines.join("\n").slice(0, 5));
					throw enospc();
				}
				tempLeftAtRetry ??= fs.existsSync(`${file}~`);
				await original(file, lines, ...rest).then(resolve, reject);
			});
		});
		await retried;
		expect(unhandled).toEqual([]);
		expect(tempLeftAtRetry).toBe(false);
		expect(lines()).toBe(1);
		expect((await c.insert({ title: "after" })).id).toBe(301);
	} finally {
		await c.disconnect();
		realProcess.off("unhandledRejection", onUnhandled);
	}
});

it("refuses writes at once for a while after one failed, without touching the file, and takes them again after", async () => {
	const pauseMs = 400;
	const c = await open(undefined, { ...where, writePauseMs: pauseMs });
	await c.insert({ title: "a" });
	failNext("appendFileAsync", fileOf(c), failedAppend);
	await expect503(c.insert({ title: "b" }));
	const size = fs.statSync(fileOf(c)).size;
	const counters = fs.statSync(fileOf(c, true)).size;
	// Refused before NeDB changes anything: no reload of the whole file for each.
	for (let i = 0; i < 20; i++) await expect503(c.insert({ title: `c${i}` }));
	await expect503(c.update({ title: "a" }, { note: "x" }));
	expect([fs.statSync(fileOf(c)).size, fs.statSync(fileOf(c, true)).size]).toEqual([size, counters]);
	// Reads go on meanwhile.
	expect(await c.find({}, { sort: "id" })).toEqual([{ id: 1, title: "a" }]);
	await waitFor(
		"writes to be taken again",
		() =>
			c.insert({ title: "d" }).then(
				() => true,
				() => false,
			),
		10 * pauseMs,
		50,
	);
	expect((await c.find({}, { sort: "id" })).map(d => d.title)).toEqual(["a", "d"]);
	await c.disconnect();
});
