/**
 * The all-in-one process (`npm start`'s shape) on a DATA_DIR an operator has got wrong, or whose
 * store was damaged, as an operator meets it: it stops before serving, exit 1, its first error
 * line the store's one line naming the file, what is wrong and how to recover, no stack trace,
 * `/ready` never up, and never an empty service with a new root. DATA_DIR a regular file, a
 * directory this process may not write (the process run without root's override of file
 * permissions, as a service user), a missing directory under a read-only mount, a read-only
 * tmpfs, an empty directory on a full disk; store.sqlite read-only for the process; a write-ahead
 * log lost or damaged after kill -9; a damaged table page; store.sqlite deleted beside its
 * marker; recovered by `npm run recover-store`, a damaged store starts with what could be read.
 * And a clean stop leaves store.sqlite alone holding every record
 * (docs/operations.md#start-up-faults, #damaged-store).
 */
import fs from "fs";
import os from "os";
import path from "path";
import { DatabaseSync } from "node:sqlite";
import { generateToken } from "../../../lib/crypto/tokens";
import { DATABASE_FILE, MARKER_FILE, SHM_FILE, WAL_FILE } from "../../../lib/store/sqlite/store-files";
import { createProject } from "../../support/fixtures";
import { allInOneEnv, answers200, freePort, healthReady, launch, runnerArgs, stopProcess, waitUntilReady, type ManagedProcess } from "../../support/processes";
import { client, waitFor, type Client } from "../../support/http";
import { npmRun } from "../../support/operator";
import { mountTmpfs, type Volume } from "../../support/volumes";

const rootToken = generateToken();
const SECRETS_KEY = "start-faults-secrets-key-0123";
const volumes: Volume[] = [];
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "glv3-start-faults-"));
afterAll(() => {
	for (const v of volumes) v.unmount();
	fs.rmSync(scratch, { recursive: true, force: true });
});

/** As a service user: root without its override of file permissions (CAP_DAC_OVERRIDE and the like). */
const AS_SERVICE_USER = ["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner", "--"];

interface Started {
	proc: ManagedProcess;
	health: number;
	api: Client;
}

async function launchAio(dataDir: string, opts: { prefix?: string[] } = {}): Promise<Started> {
	const [port, health, metrics] = [await freePort(), await freePort(), await freePort()];
	const env = {
		...allInOneEnv({ dataDir, port, healthPort: health, metricsPort: metrics, rootToken, secretsKey: SECRETS_KEY }),
		LOG_LEVEL: "info",
		LOG_FORMAT: "text",
	};
	const [command, ...prefix] = [...(opts.prefix ?? []), process.execPath];
	const proc = launch({ name: "all-in-one", command, args: [...prefix, ...runnerArgs()], env, maxOutputChunks: Infinity });
	return { proc, health, api: client(`http://127.0.0.1:${port}/api/v3`, rootToken) };
}

async function startAio(dataDir: string): Promise<Started> {
	const started = await launchAio(dataDir);
	await waitUntilReady(started.proc, healthReady(started.health), { timeoutMs: 90000 });
	return started;
}

/**
 * Starts the process and expects it to refuse: exit 1 without /ready ever answering 200, the
 * store's line the first error it prints, in one line, no stack frames, no root made. Its output.
 */
async function expectRefusal(dataDir: string, message: string | RegExp, opts: { prefix?: string[] } = {}): Promise<string> {
	const { proc, health } = await launchAio(dataDir, opts);
	let readySeen = false;
	const exited = new Promise<number | null>(resolve => proc.child.once("exit", code => resolve(code)));
	const polling = (async () => {
		while (proc.child.exitCode === null && proc.child.signalCode === null) {
			if (await answers200(`http://127.0.0.1:${health}/ready`)) readySeen = true;
			await new Promise(r => setTimeout(r, 100));
		}
	})();
	let timer: NodeJS.Timeout | undefined;
	const code = await Promise.race([exited, new Promise<"running">(r => (timer = setTimeout(() => r("running"), 90000)))]);
	clearTimeout(timer);
	if (code === "running") await stopProcess(proc, "SIGKILL");
	await polling;
	const output = proc.output.join("");
	expect({ code, readySeen }).toEqual({ code: 1, readySeen: false });
	const firstError = output.split("\n").find(l => /ERROR|FATAL|\[Runner\]|Error:/.test(l)) ?? "";
	if (typeof message === "string") expect(firstError).toContain(message);
	else expect(firstError).toMatch(message);
	expect(output.split("\n").filter(l => /^\s+at /.test(l))).toEqual([]);
	expect(output).not.toContain("Created the root user");
	return output;
}

const dataDirFault = (dir: string, what: string) =>
	`DATA_DIR=${dir} ${what}: the embedded store and the secrets key are kept there; ` +
	"point DATA_DIR at a writable directory with free space, or fix this one (docs/operations.md#start-up-faults)";

describe("DATA_DIR faults are the store's one line, first", () => {
	it("a regular file", async () => {
		const file = path.join(scratch, "a-file");
		fs.writeFileSync(file, "");
		await expectRefusal(file, dataDirFault(file, "is a file, not a directory (ENOTDIR: a file stands where a directory should be)"));
	}, 120000);

	it("a fresh directory this process may not write", async () => {
		const dir = path.join(scratch, "no-write");
		fs.mkdirSync(dir, { mode: 0o555 });
		fs.chmodSync(dir, 0o555);
		await expectRefusal(dir, dataDirFault(dir, "is not writable (EACCES: this process may not write there)"), { prefix: AS_SERVICE_USER });
	}, 120000);

	it("a missing directory under a read-only mount, and a read-only tmpfs", async () => {
		const ro = mountTmpfs(1024 * 1024, "ro");
		volumes.push(ro);
		const missing = path.join(ro.dir, "data");
		await expectRefusal(missing, dataDirFault(missing, "cannot be created (EROFS: it is on a read-only file system)"));
		await expectRefusal(ro.dir, dataDirFault(ro.dir, "is not writable (EROFS: it is on a read-only file system)"));
	}, 180000);

	it("an empty directory on a full disk", async () => {
		const full = mountTmpfs(1024 * 1024);
		volumes.push(full);
		const ballast = path.join(full.dir, "ballast");
		try {
			fs.writeFileSync(ballast, Buffer.alloc(2 * 1024 * 1024));
		} catch {
			// Filled to the last byte.
		}
		const dir = path.join(full.dir, "data");
		fs.mkdirSync(dir);
		expect(full.free()).toBe(0);
		await expectRefusal(dir, dataDirFault(dir, "is not writable (ENOSPC: its disk is full)"));
	}, 120000);
});

describe("a store that cannot take writes, or was damaged or lost, stops the start", () => {
	/**
	 * A DATA_DIR whose service answered `count` labels, then was stopped with `signal`. With
	 * `checkpointedFirst`, that many were answered first and the store waited for until its periodic
	 * checkpoint had carried them into store.sqlite (as a running service does within a second),
	 * the rest answered after it.
	 */
	async function written(
		count: number,
		signal: NodeJS.Signals,
		opts: { checkpointedFirst?: number } = {},
	): Promise<{ dir: string; labels: string[]; rootCreatedAt: string; projectId: number }> {
		const dir = fs.mkdtempSync(path.join(scratch, "store-"));
		const aio = await startAio(dir);
		const projectId = (await createProject(aio.api)).id;
		const labels: string[] = [];
		for (let i = 0; i < count; i++) {
			if (i === opts.checkpointedFirst) await waitFor("the periodic checkpoint into store.sqlite", () => labelsInDatabaseFile(dir) >= i, 60000);
			const res = await aio.api.post(`/projects/${projectId}/labels`, { body: { name: `label-${i}`, color: "#428BCA" } });
			expect(res.status).toBe(200);
			labels.push(`label-${i}`);
		}
		const rootCreatedAt = (await aio.api.get("/user")).body.created_at as string;
		const code = await stopProcess(aio.proc, signal);
		if (signal === "SIGTERM") expect(code).toBe(0);
		return { dir, labels, rootCreatedAt, projectId };
	}

	/** The labels store.sqlite holds by itself, without its write-ahead log: read from a copy of the file alone. */
	function labelsInDatabaseFile(dir: string): number {
		const copy = path.join(fs.mkdtempSync(path.join(scratch, "file-only-")), DATABASE_FILE);
		try {
			fs.copyFileSync(path.join(dir, DATABASE_FILE), copy);
			const db = new DatabaseSync(copy, { readOnly: true });
			try {
				return (db.prepare("SELECT count(*) AS n FROM labels").get() as { n: number }).n;
			} finally {
				db.close();
			}
		} catch {
			// No labels table yet, or a page copied while the checkpoint wrote it: not yet.
			return 0;
		} finally {
			fs.rmSync(path.dirname(copy), { recursive: true, force: true });
		}
	}

	/** Every label of the project, page by page (100 a page at most). */
	const allLabels = async (api: Client, projectId: number) => {
		const all: { id: number; name: string }[] = [];
		for (let page = 1; ; page++) {
			const rows = (await api.get(`/projects/${projectId}/labels`, { query: { per_page: 100, page } })).body as { id: number; name: string }[];
			all.push(...rows);
			if (rows.length < 100) return all;
		}
	};
	const labelNames = async (api: Client, projectId: number) => (await allLabels(api, projectId)).map(l => l.name).sort();

	it("a clean stop leaves store.sqlite alone holding every record: a copy of that one file starts with all of them and the same root", async () => {
		const { dir, labels, rootCreatedAt, projectId } = await written(120, "SIGTERM");
		expect(fs.readdirSync(dir).filter(f => f.startsWith("store.sqlite-"))).toEqual([]);
		const copy = fs.mkdtempSync(path.join(scratch, "file-alone-"));
		fs.copyFileSync(path.join(dir, "store.sqlite"), path.join(copy, "store.sqlite"));
		const again = await startAio(copy);
		expect(await labelNames(again.api, projectId)).toEqual([...labels].sort());
		expect((await again.api.get("/user")).body.created_at).toBe(rootCreatedAt);
		expect(again.proc.output.join("")).not.toContain("Created the root user");
		await stopProcess(again.proc, "SIGTERM");
	}, 240000);

	it("store.sqlite the service's user may not write (chmod 444): refused, /ready never up", async () => {
		const { dir } = await written(3, "SIGTERM");
		const file = path.join(dir, "store.sqlite");
		fs.chmodSync(file, 0o444);
		await expectRefusal(
			dir,
			`${file} cannot be written by this process (user 0: attempt to write a readonly database): give the service's user write access to store.sqlite, ` +
				`store.sqlite-wal and store.sqlite-shm in DATA_DIR (chown, chmod), or move DATA_DIR to a writable volume (docs/operations.md#start-up-faults)`,
			{ prefix: AS_SERVICE_USER },
		);
		fs.chmodSync(file, 0o644);
	}, 240000);

	it("a write-ahead log deleted after kill -9: refused, not an empty service with a new root; as told, it starts on the database file", async () => {
		const { dir, labels, projectId } = await written(120, "SIGKILL", { checkpointedFirst: 100 });
		expect(fs.existsSync(path.join(dir, SHM_FILE))).toBe(true);
		fs.rmSync(path.join(dir, WAL_FILE));
		await expectRefusal(dir, `${path.join(dir, WAL_FILE)} is missing while ${SHM_FILE} shows the store was not closed cleanly`);
		// As the message says: to go on with what store.sqlite holds, delete the index.
		fs.rmSync(path.join(dir, SHM_FILE));
		const again = await startAio(dir);
		const kept = await labelNames(again.api, projectId);
		// Checkpointed a second after their commits: the labels answered before the checkpoint are there, nothing else.
		expect(kept.length).toBeGreaterThanOrEqual(100);
		expect(labels).toEqual(expect.arrayContaining(kept));
		expect(again.proc.output.join("")).not.toContain("Created the root user");
		await stopProcess(again.proc, "SIGTERM");
	}, 240000);

	it("a write-ahead log whose header is damaged after kill -9: refused", async () => {
		const { dir } = await written(20, "SIGKILL");
		const wal = path.join(dir, WAL_FILE);
		const fd = fs.openSync(wal, "r+");
		fs.writeSync(fd, Buffer.from("damaged!"), 0, 8, 8);
		fs.closeSync(fd);
		await expectRefusal(dir, `${wal} is damaged (its header is not a write-ahead log's)`);
	}, 240000);

	it("a damaged table page: refused, naming store.sqlite and how to recover; recovered as told, the rest of the data starts", async () => {
		const { dir, labels, projectId, rootCreatedAt } = await written(120, "SIGTERM");
		const file = path.join(dir, "store.sqlite");
		const db = new DatabaseSync(file, { readOnly: true });
		const pageSize = (db.prepare("PRAGMA page_size").get() as { page_size: number }).page_size;
		const pages = (db.prepare("SELECT pageno FROM dbstat WHERE name = 'labels' AND pagetype = 'leaf' ORDER BY path").all() as { pageno: number }[]).map(
			r => r.pageno,
		);
		db.close();
		expect(pages.length).toBeGreaterThan(2);
		const fd = fs.openSync(file, "r+");
		fs.writeSync(fd, Buffer.alloc(8, 0x5a), 0, 8, (pages[1] - 1) * pageSize);
		fs.closeSync(fd);
		await expectRefusal(
			dir,
			new RegExp(
				`${file.replace(/[.]/g, "\\.")} is damaged \\(SQLite's integrity check: .+\\): the service will not serve from it. To recover, restore the last backup`,
			),
		);

		const recovered = path.join(scratch, `recovered-${path.basename(dir)}`);
		const recovery = await npmRun("recover-store", [recovered], { DATA_DIR: dir, SECRETS_KEY });
		expect(recovery.code).toBe(0);
		expect(recovery.stdout).toMatch(/^ {2}labels: \d+ documents; lost: the documents with ids after \d+ and before \d+$/m);
		const lostCount = labels.length - Number(/^ {2}labels: (\d+) documents/m.exec(recovery.stdout)![1]);
		expect(lostCount).toBeGreaterThan(0);
		const again = await startAio(recovered);
		const kept = await labelNames(again.api, projectId);
		expect(kept.length).toBe(labels.length - lostCount);
		expect(labels).toEqual(expect.arrayContaining(kept));
		// The same root, and ids never given twice: a new label's id is past every id the damaged store had.
		expect((await again.api.get("/user")).body.created_at).toBe(rootCreatedAt);
		expect((await again.api.post(`/projects/${projectId}/labels`, { body: { name: "after-recovery", color: "#000000" } })).status).toBe(200);
		expect((await allLabels(again.api, projectId)).find(l => l.name === "after-recovery")?.id).toBe(labels.length + 1);
		await stopProcess(again.proc, "SIGTERM");
	}, 300000);

	it("store.sqlite deleted beside its marker: refused, not a fresh store", async () => {
		const { dir } = await written(3, "SIGTERM");
		fs.rmSync(path.join(dir, "store.sqlite"));
		await expectRefusal(dir, `${path.join(dir, "store.sqlite")} is missing, but ${MARKER_FILE} beside it says a store was created there on `);
		expect(fs.existsSync(path.join(dir, "store.sqlite"))).toBe(false);
	}, 240000);
});
