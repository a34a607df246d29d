/**
 * 4. Artifacts, the way the gateway moves them (docs/architecture.md#artifacts): gateway, accounts
 * and builds as processes over NATS; builds authorizes, the gateway streams the bytes between the
 * client and the artifact store. Against baselines measured in the same run, on the same files:
 * - a download of a 1 GiB artifact through the gateway vs `fs.createReadStream` of the stored file
 *   (goal: at least 0.8 of its throughput);
 * - an upload of the same 1 GiB vs a plain file write of the same bytes into the same directory,
 *   flushed to disk as the store flushes an upload before it commits it (goal: at least 0.8), and
 *   for the record vs the same write not flushed;
 * - each process's peak RSS while the artifact goes up and comes down vs its RSS at rest, after
 *   a warm-up transfer (goal: within 64 MB).
 * The client is curl (`-o /dev/null`, `-T file`): it moves bytes over loopback several times
 * faster than a Node http client, so the client is not what is measured.
 */
import crypto from "crypto";
import fs from "fs";
import path from "path";
import { Writable } from "stream";
import { pipeline } from "stream/promises";
import type { BenchContext, Row, Scenario } from "../scenario";
import { single, summarize } from "../support/stats";
import { artifactsBuild, writeSource } from "../support/transfers";
import type { ServiceProcess } from "../../test/support/processes";

const MiB = 1024 * 1024;
/** The RSS goal: at most this much above rest. */
const RSS_BUDGET = 64 * MiB;
/** What the processes move before their rest is measured: their first transfer grows them once (see the e2e test). */
const WARM_UP = 64 * MiB;

/** A sink that counts what it gets. */
function counter(): Writable & { bytes: number } {
	const sink = new Writable({
		write(chunk: Buffer, _enc, done) {
			sink.bytes += chunk.length;
			done();
		},
	}) as Writable & { bytes: number };
	sink.bytes = 0;
	return sink;
}

const seconds = (started: bigint) => Number(process.hrtime.bigint() - started) / 1e9;

async function plainRead(file: string, expected: number): Promise<number> {
	const started = process.hrtime.bigint();
	const sink = counter();
	await pipeline(fs.createReadStream(file), sink);
	if (sink.bytes !== expected) throw new Error(`plain read: ${sink.bytes} of ${expected} bytes`);
	return seconds(started);
}

/** The same bytes into a new file of `dir`, then flushed to disk (as the store does before a commit). */
async function plainWrite(source: string, dir: string, fsync: boolean): Promise<number> {
	const target = path.join(dir, `plain-${crypto.randomBytes(4).toString("hex")}`);
	const started = process.hrtime.bigint();
	await pipeline(fs.createReadStream(source), fs.createWriteStream(target));
	if (fsync) {
		const handle = await fs.promises.open(target, "r+");
		await handle.sync();
		await handle.close();
	}
	const took = seconds(started);
	await fs.promises.unlink(target);
	return took;
}

function memory(pid: number, field: "VmRSS" | "VmHWM"): number {
	const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
	return m ? Number(m[1]) * 1024 : NaN;
}

function storedFile(dir: string): string {
	const found = fs
		.readdirSync(dir, { withFileTypes: true, recursive: true })
		.filter(e => e.isFile() && e.name.startsWith("artifacts-"))
		.map(e => path.join(e.parentPath, e.name));
	if (found.length !== 1) throw new Error(`expected one stored artifacts file under ${dir}, found ${found.length}`);
	return found[0];
}

const scenario: Scenario = {
	name: "artifacts",
	description: "1 GiB through the gateway (split, over NATS) vs fs.createReadStream and a plain file write; peak RSS per process vs rest",
	async run(ctx: BenchContext): Promise<Row[]> {
		const size = (ctx.quick ? 256 : 1024) * MiB;
		const rounds = ctx.quick ? 2 : 3;
		const stack = await ctx.startStack({ nodes: { api: "api", accounts: "accounts", builds: "builds" }, nats: true, redis: true });
		const { projectId, upload, download } = await artifactsBuild(stack, "bench-artifacts");
		const artifactsDir = path.join(stack.dataDir, "artifacts");

		const source = path.join(ctx.tmpDir, "source.bin");
		const warm = path.join(ctx.tmpDir, "warm.bin");
		await writeSource(source, size);
		await writeSource(warm, WARM_UP);

		const procs = Object.fromEntries(stack.processes.map(p => [p.name, p])) as Record<string, ServiceProcess>;
		const pids = { api: procs.api.child.pid!, builds: procs.builds.child.pid! };
		ctx.log(`warming up with ${WARM_UP / MiB} MiB up and down`);
		await upload(warm, WARM_UP);
		await download(WARM_UP);
		const rest = { api: memory(pids.api, "VmRSS"), builds: memory(pids.builds, "VmRSS") };
		for (const pid of Object.values(pids)) fs.writeFileSync(`/proc/${pid}/clear_refs`, "5");

		ctx.log(`uploading ${size / MiB} MiB ${rounds} times with curl, and writing the same bytes ${rounds} times`);
		const up: number[] = [];
		const write: number[] = [];
		const writeNoSync: number[] = [];
		for (let i = 0; i < rounds; i++) {
			up.push(size / MiB / (await upload(source, size)));
			write.push(size / MiB / (await plainWrite(source, artifactsDir, true)));
			writeNoSync.push(size / MiB / (await plainWrite(source, artifactsDir, false)));
		}
		const stored = storedFile(path.join(artifactsDir, String(projectId)));
		ctx.log(`downloading ${rounds} times with curl, and reading the stored file ${rounds} times`);
		const down: number[] = [];
		const read: number[] = [];
		for (let i = 0; i < rounds; i++) {
			down.push(size / MiB / (await download(size)));
			read.push(size / MiB / (await plainRead(stored, size)));
		}
		const peak = { api: memory(pids.api, "VmHWM"), builds: memory(pids.builds, "VmHWM") };

		const MB = (n: number) => Math.round(n / MiB);
		const rows: Row[] = [
			{
				case: `download ${size / MiB} MiB through the gateway (split, over NATS), curl`,
				metric: "MiB/s",
				value: summarize(down, rounds + 1),
				baseline: "fs.createReadStream of the stored file",
				baselineValue: summarize(read, rounds + 1),
				better: "higher",
				extra: { rounds, client: "curl" },
				goal: { max: 1.25 },
			},
			{
				case: `upload ${size / MiB} MiB through the gateway (split, over NATS), curl -T`,
				metric: "MiB/s",
				value: summarize(up, rounds + 1),
				baseline: "plain file write of the same bytes, same directory, flushed (fsync)",
				baselineValue: summarize(write, rounds + 1),
				better: "higher",
				extra: { rounds, client: "curl" },
				goal: { max: 1.25 },
			},
			{
				// For the record: against a write that leaves the bytes in the page cache only (not what a store may commit).
				case: `upload ${size / MiB} MiB through the gateway (split, over NATS), curl -T`,
				metric: "MiB/s",
				value: summarize(up, rounds + 1),
				baseline: "plain file write of the same bytes, not flushed",
				baselineValue: summarize(writeNoSync, rounds + 1),
				better: "higher",
				extra: { rounds, client: "curl" },
			},
		];
		for (const name of ["api", "builds"] as const)
			rows.push({
				case: `${name} process, peak while ${size / MiB} MiB goes up and comes down ${rounds} times`,
				metric: "peak RSS MB",
				value: single(MB(peak[name])),
				baseline: `its RSS at rest (after a ${WARM_UP / MiB} MiB warm-up)`,
				baselineValue: single(MB(rest[name])),
				better: "lower",
				extra: { riseMB: MB(peak[name] - rest[name]), budgetMB: RSS_BUDGET / MiB },
				// Within 64 MB of rest, as a ratio on this run's rest.
				goal: { max: Number(((rest[name] + RSS_BUDGET) / rest[name]).toFixed(3)) },
			});
		return rows;
	},
};

export default scenario;
