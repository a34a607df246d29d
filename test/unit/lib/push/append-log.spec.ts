/** The journal of the durable in-process channel, on real files. */
import fs from "fs";
import os from "os";
import path from "path";
import { AppendLog } from "../../../../lib/push/append-log";

let dir: string;
let file: string;

beforeEach(() => {
	dir = fs.mkdtempSync(path.join(os.tmpdir(), "glv3-journal-"));
	file = path.join(dir, "sub", "journal.log");
});

afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const lines = () => fs.readFileSync(file, "utf8").split("\n").filter(Boolean);

it("has every record on the disk, in order, once append resolves, and reads them back", async () => {
	const { log, records } = await AppendLog.open<{ n: number }>(file);
	expect(records).toEqual([]);
	await Promise.all(Array.from({ length: 500 }, (_, n) => log.append({ n })));
	expect(lines()).toHaveLength(500);
	await log.close();
	const again = await AppendLog.open<{ n: number }>(file);
	expect(again.records.map(r => r.n)).toEqual(Array.from({ length: 500 }, (_, n) => n));
	expect(again.skipped).toBe(0);
	await again.log.close();
});

it("drops a last line cut short, and appends after the good records", async () => {
	const first = await AppendLog.open(file);
	await first.log.append({ a: 1 });
	await first.log.append({ a: 2 });
	await first.log.close();
	fs.appendFileSync(file, '{"a":3,"tor');
	const { log, records } = await AppendLog.open(file);
	expect(records).toEqual([{ a: 1 }, { a: 2 }]);
	await log.append({ a: 4 });
	await log.close();
	expect(lines()).toEqual(['{"a":1}', '{"a":2}', '{"a":4}']);
});

it("compacts to a snapshot while appends go on: nothing appended is lost, nothing doubled", async () => {
	const { log } = await AppendLog.open<{ n: number }>(file);
	// The state the records describe: which numbers were appended.
	const state = new Set<number>();
	const add = (n: number) => {
		state.add(n);
		return log.append({ n });
	};
	const writes: Promise<void>[] = [];
	for (let n = 0; n < 300; n++) {
		writes.push(add(n));
		if (n % 100 === 50) writes.push(log.compact(() => [...state].map(k => JSON.stringify({ n: k }))));
	}
	await Promise.all(writes);
	await log.close();
	const numbers = lines().map(l => JSON.parse(l).n as number);
	expect(new Set(numbers).size).toBe(numbers.length);
	expect(numbers.sort((a, b) => a - b)).toEqual(Array.from({ length: 300 }, (_, n) => n));
});
