/**
 * 4. Artifacts: download throughput of a 256 MiB artifact through the gateway and the transporter
 * (gateway and builds as processes over NATS, in windows: gateway/windowed-download.ts) against
 * reading the same stored file with a plain Node stream, in the same run; and the peak memory
 * each process reaches while the artifact goes up and comes down, against its memory at rest.
 */
import crypto from "crypto";
import fs from "fs";
import http from "http";
import path from "path";
import { Readable, Writable } from "stream";
import { pipeline } from "stream/promises";
import type { BenchContext, Row, Scenario } from "../scenario";
import { single, summarize } from "../support/stats";
import type { ServiceProcess } from "../../test/support/processes";

const MiB = 1024 * 1024;
const SECRET = "bench-internal-secret";

function* bytes(total: number): Generator<Buffer> {
	const block = crypto.randomBytes(MiB);
	for (let sent = 0; sent < total; sent += MiB) yield block.subarray(0, Math.min(MiB, total - sent));
}

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

function upload(url: string, total: number): Promise<number> {
	return new Promise((resolve, reject) => {
		const req = http.request(url, {
			method: "PUT",
			headers: { "Gitlab-Shared-Secret": SECRET, "Content-Type": "application/octet-stream", "Content-Length": String(total) },
		});
		req.on("response", res => (res.resume(), res.on("end", () => resolve(res.statusCode!))));
		req.on("error", reject);
		Readable.from(bytes(total)).pipe(req);
	});
}

/** Seconds to download `url` completely (checking the length). */
function download(url: string, token: string, expected: number): Promise<number> {
	const started = process.hrtime.bigint();
	return new Promise((resolve, reject) => {
		http
			.get(url, { headers: { "PRIVATE-TOKEN": token } }, res => {
				if (res.statusCode !== 200) return reject(new Error(`download: HTTP ${res.statusCode}`));
				const sink = counter();
				pipeline(res, sink).then(() => {
					if (sink.bytes !== expected) return reject(new Error(`download: ${sink.bytes} of ${expected} bytes`));
					resolve(Number(process.hrtime.bigint() - started) / 1e9);
				}, reject);
			})
			.on("error", reject);
	});
}

async function plainRead(file: string, expected: number): Promise<number> {
	const started = process.hrtime.bigint();
	const sink = counter();
	await pipeline(fs.createReadStream(file), sink);
	if (sink.bytes !== expected) throw new Error(`plain read: ${sink.bytes} of ${expected} bytes`);
	return Number(process.hrtime.bigint() - started) / 1e9;
}

function memory(pid: number, field: "VmRSS" | "VmHWM"): number {
	const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
	return m ? Number(m[1]) * 1024 : NaN;
}

function findFile(dir: string): string {
	for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true }))
		if (entry.isFile() && entry.name.startsWith("artifacts-")) return path.join(entry.parentPath, entry.name);
	throw new Error(`no stored artifacts file under ${dir}`);
}

const scenario: Scenario = {
	name: "artifacts",
	description: "a 256 MiB artifact through the gateway over NATS vs a plain file read; peak RSS per process",
	async run(ctx: BenchContext): Promise<Row[]> {
		const size = (ctx.quick ? 64 : 256) * MiB;
		const rounds = ctx.quick ? 2 : 5;
		const stack = await ctx.startStack({ nodes: { api: "api", accounts: "accounts", builds: "builds" }, nats: true, redis: true });
		const project = (await stack.expect(201, "POST", "/projects", { json: { name: "bench-artifacts" } })).body;
		await stack.waitForRoute(`/projects/${project.id}/builds`);
		const commit = {
			id: "0ff3ae198f8601a285adcf5c0fff204ee6fba5fd",
			title: "bench",
			message: "bench",
			author_name: "Bench",
			author_email: "bench@example.com",
			created_at: "2016-01-01T00:00:00Z",
		};
		const created = await fetch(`${stack.url}/internal/builds`, {
			method: "POST",
			headers: { "Gitlab-Shared-Secret": SECRET, "Content-Type": "application/json" },
			body: JSON.stringify({ project_id: project.id, name: "bench", stage: "test", ref: "master", commit }),
		});
		if (created.status !== 201) throw new Error(`create build: HTTP ${created.status} ${await created.text()}`);
		const build = (await created.json()) as { id: number };

		const procs = Object.fromEntries(stack.processes.map(p => [p.name, p])) as Record<string, ServiceProcess>;
		const pids = { api: procs.api.child.pid!, builds: procs.builds.child.pid! };
		const resetPeaks = () => Object.values(pids).forEach(pid => fs.writeFileSync(`/proc/${pid}/clear_refs`, "5"));
		const rest = { api: memory(pids.api, "VmRSS"), builds: memory(pids.builds, "VmRSS") };

		ctx.log(`uploading ${size / MiB} MiB`);
		resetPeaks();
		const uploadStarted = process.hrtime.bigint();
		const status = await upload(`${stack.url}/internal/builds/${build.id}/artifacts?filename=bench.zip`, size);
		if (status !== 200) throw new Error(`upload: HTTP ${status}`);
		const uploadSeconds = Number(process.hrtime.bigint() - uploadStarted) / 1e9;
		const peakUp = { api: memory(pids.api, "VmHWM"), builds: memory(pids.builds, "VmHWM") };

		const file = findFile(path.join(stack.dataDir, "artifacts"));
		const url = `${stack.url}/projects/${project.id}/builds/${build.id}/artifacts`;
		ctx.log(`downloading ${rounds} times through the gateway, and reading the file ${rounds} times`);
		resetPeaks();
		const through: number[] = [];
		const plain: number[] = [];
		for (let i = 0; i < rounds; i++) {
			through.push(size / MiB / (await download(url, stack.rootToken, size)));
			plain.push(size / MiB / (await plainRead(file, size)));
		}
		const peakDown = { api: memory(pids.api, "VmHWM"), builds: memory(pids.builds, "VmHWM") };

		const MB = (n: number) => Math.round(n / MiB);
		const rows: Row[] = [
			{
				case: `download ${size / MiB} MiB through the gateway over NATS`,
				metric: "MiB/s",
				value: summarize(through, rounds + 1),
				baseline: "plain fs.createReadStream of the stored file",
				baselineValue: summarize(plain, rounds + 1),
				better: "higher",
				extra: { rounds, uploadMiBps: Math.round(size / MiB / uploadSeconds) },
			},
		];
		for (const name of ["api", "builds"] as const)
			rows.push({
				case: `${name} process, peak while ${size / MiB} MiB goes up / comes down`,
				metric: "peak RSS MB",
				value: single(MB(Math.max(peakUp[name], peakDown[name]))),
				baseline: "its RSS at rest",
				baselineValue: single(MB(rest[name])),
				better: "lower",
				extra: { peakUploadMB: MB(peakUp[name]), peakDownloadMB: MB(peakDown[name]), restMB: MB(rest[name]) },
			});
		return rows;
	},
};

export default scenario;
