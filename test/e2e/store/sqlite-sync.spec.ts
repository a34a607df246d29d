/**
 * The embedded store's sync contract at the system-call level: the all-in-one process runs under
 * `strace -f`, answers concurrent label, deploy-key, snippet and build writes, and for every
 * write answered 2xx the trace shows, in this order, the write of its record into the database's
 * write-ahead log (or the database file), an fsync or fdatasync of that file, and only then the
 * answer on the socket (docs/architecture.md#embedded-store).
 */
import crypto from "crypto";
import fs from "fs";
import os from "os";
import path from "path";
import { generateToken } from "../../../lib/crypto/tokens";
import { DATABASE_FILE } from "../../../lib/store/sqlite/store-files";
import { createProject } from "../../support/fixtures";
import { client, waitFor } from "../../support/http";
import { allInOneEnv, freePort, healthReady, launch, runnerArgs, stopProcess, waitUntilReady, type ManagedProcess } from "../../support/processes";
import { KINDS, writeOne, type Kind, type Target } from "../../support/store-writes";

/** A traced system call, at the line where it completed. */
interface Call {
	line: number;
	pid: string;
	name: string;
	/** The file or socket of its first argument (strace -y). */
	fd: string;
	args: string;
}

/** strace's log as completed calls: a call cut by another thread (`<unfinished ...>`) completes at its `resumed` line. */
function parseTrace(text: string): Call[] {
	const calls: Call[] = [];
	const unfinished = new Map<string, { name: string; args: string }>();
	text.split("\n").forEach((raw, line) => {
		// strace pads a pid of fewer than five digits (`9966  16:08:25.768682 write(…`).
		const m = /^(\d+) +\S+ (.*)$/.exec(raw);
		if (!m) return;
		const [, pid, rest] = m;
		const resumed = /^<\.\.\. (\w+) resumed>(.*)$/.exec(rest);
		if (resumed) {
			const started = unfinished.get(pid);
			unfinished.delete(pid);
			if (started) calls.push({ line, pid, name: started.name, fd: /^\d+<([^>]*)>/.exec(started.args)?.[1] ?? "", args: started.args + resumed[2] });
			return;
		}
		const call = /^(\w+)\((.*)$/.exec(rest);
		if (!call) return;
		if (call[2].endsWith("<unfinished ...>")) unfinished.set(pid, { name: call[1], args: call[2] });
		else calls.push({ line, pid, name: call[1], fd: /^\d+<([^>]*)>/.exec(call[2])?.[1] ?? "", args: call[2] });
	});
	return calls;
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "glv3-sync-"));
const traceFile = path.join(dataDir, "..", `${path.basename(dataDir)}.strace`);
const rootToken = generateToken();
const internalSecret = "sync-internal-secret";
let traced: ManagedProcess;
let target: Target;

beforeAll(async () => {
	const port = await freePort();
	const healthPort = await freePort();
	const env = {
		...allInOneEnv({ dataDir, port, healthPort, metricsPort: await freePort(), rootToken, secretsKey: "sync-secrets-key-0123456789" }),
		INTERNAL_API_SECRET: internalSecret,
		LOG_LEVEL: "warn",
	};
	const strace = ["-f", "-tt", "-y", "-s", "65536", "-e", "trace=pwrite64,pwritev,write,writev,fsync,fdatasync", "-o", traceFile];
	traced = launch({ name: "all-in-one under strace", command: "strace", args: [...strace, process.execPath, ...runnerArgs()], env });
	await waitUntilReady(traced, healthReady(healthPort), { timeoutMs: 90000 });
	const url = `http://127.0.0.1:${port}/api/v3`;
	const api = client(url, rootToken);
	target = { api, url, internalSecret, projectId: (await createProject(api)).id };
}, 120000);

afterAll(async () => {
	// strace detaches from a process when it is stopped itself: the traced node (the first pid of the log) is stopped first.
	const first = /^(\d+) /.exec(fs.existsSync(traceFile) ? fs.readFileSync(traceFile, "utf8").slice(0, 100) : "")?.[1];
	if (first) process.kill(Number(first), "SIGTERM");
	if (traced) await stopProcess(traced, "SIGTERM", 30000);
	fs.rmSync(dataDir, { recursive: true, force: true });
	fs.rmSync(traceFile, { force: true });
}, 60000);

it("answers every write only after the write-ahead log holding it has been synced", async () => {
	const answered: { kind: Kind; tag: string }[] = [];
	await Promise.all(
		KINDS.flatMap(kind =>
			Array.from({ length: 4 }, async () => {
				for (let i = 0; i < 5; i++) {
					const tag = crypto.randomUUID().slice(0, 12);
					if ((await writeOne(target, kind, tag)) !== null) answered.push({ kind, tag });
				}
			}),
		),
	);
	expect(answered).toHaveLength(KINDS.length * 20);

	// strace writes its log through a buffer: read it once it holds every answer's socket write.
	const answersIn = (text: string) => answered.every(({ tag }) => text.split(tag).length > 2);
	const text = await waitFor(
		"the trace to hold every answer",
		() => {
			const now = fs.readFileSync(traceFile, "utf8");
			return answersIn(now) && now;
		},
		30000,
	);
	const calls = parseTrace(text);
	const store = path.join(dataDir, DATABASE_FILE);
	const storeFile = (c: Call) => c.fd === store || c.fd === `${store}-wal`;
	const syncs = calls.filter(c => (c.name === "fsync" || c.name === "fdatasync") && storeFile(c));
	const unsynced = answered.filter(({ tag }) => {
		const stored = calls.find(c => c.name.startsWith("pwrite") && storeFile(c) && c.args.includes(tag));
		// The answer: the first write elsewhere (its socket) that carries the mark.
		const answer = calls.find(c => c.name.startsWith("write") && !storeFile(c) && c.args.includes(tag));
		if (!stored || !answer) return true;
		return !syncs.some(s => s.fd === stored.fd && s.line > stored.line && s.line < answer.line);
	});
	expect(syncs.length).toBeGreaterThan(0);
	expect(unsynced).toEqual([]);
}, 120000);
