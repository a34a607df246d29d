/**
 * The physical limit of durable writes on a file system, measured in the bench's own process:
 * small records appended to a plain file, each one flushed to the disk (fdatasync) before the
 * next, and the same appends from many writers sharing their flushes (group commit, with the
 * project's own journal, lib/push/append-log.ts). What no store on that disk can beat while it
 * answers each write once it is on the disk.
 */
import fs from "fs";
import path from "path";
import { AppendLog } from "../../lib/push/append-log";

/** About what a label record weighs. */
const RECORD = { id: 0, project_id: 1, title: "label-000000", color: "#428bca", description: null, created_at: new Date(0).toISOString() };

/** Appends with an fdatasync each, one after the other, for `seconds`: writes per second. */
export async function appendEachSynced(dir: string, seconds: number): Promise<number> {
	const file = path.join(dir, `each-synced-${process.pid}.log`);
	const handle = await fs.promises.open(file, "a");
	let writes = 0;
	const started = process.hrtime.bigint();
	const until = Date.now() + seconds * 1000;
	try {
		while (Date.now() < until) {
			await handle.write(JSON.stringify({ ...RECORD, id: ++writes }) + "\n");
			await handle.datasync();
		}
	} finally {
		await handle.close();
		await fs.promises.rm(file, { force: true });
	}
	return writes / (Number(process.hrtime.bigint() - started) / 1e9);
}

/** `writers` concurrent writers, each waiting for its record to be on the disk before the next: writes per second. */
export async function appendGroupCommit(dir: string, writers: number, seconds: number): Promise<number> {
	const file = path.join(dir, `group-commit-${process.pid}.log`);
	const { log } = await AppendLog.open(file);
	let writes = 0;
	const started = process.hrtime.bigint();
	const until = Date.now() + seconds * 1000;
	try {
		await Promise.all(
			Array.from({ length: writers }, async () => {
				while (Date.now() < until) await log.append({ ...RECORD, id: ++writes });
			}),
		);
	} finally {
		await log.close();
		await fs.promises.rm(file, { force: true });
	}
	return writes / (Number(process.hrtime.bigint() - started) / 1e9);
}
