/**
 * 6. Start-up: time from spawning the process to the first 200 from /ready, and the resident
 * memory once idle, for the all-in-one process (every service, no transporter) and for one
 * service alone in cluster mode (labels over NATS: /ready also waits for the transporter),
 * against a bare Node http server process (time to its first 200, its idle RSS). Restarts on an
 * existing data directory, as a pod restart would be; the first start (which creates root) is
 * not counted.
 */
import fs from "fs";
import path from "path";
import type { BenchContext, Row, Scenario, Summary } from "../scenario";
import { rssBytes, serviceNames } from "../../test/support/processes";
import { summarize } from "../support/stats";
import type { StackOptions } from "../support/stack";

const POLL_MS = 5;
/** Idle: long enough after /ready for start-up garbage and timers to settle. */
const SETTLE_MS = 2000;
const MB = 1024 * 1024;

interface Timing {
	readyMs: number[];
	rssMb: number[];
}

const scenario: Scenario = {
	name: "start-up",
	description: "ms from spawn to /ready and idle RSS, vs a bare node http server process",
	async run(ctx: BenchContext): Promise<Row[]> {
		const runs = ctx.quick ? 3 : 7;
		const settle = () => new Promise(r => setTimeout(r, SETTLE_MS));

		const measureStack = async (options: StackOptions): Promise<Timing> => {
			const dataDir = path.join(ctx.tmpDir, `data-${Object.keys(options.nodes).join("-")}`);
			fs.mkdirSync(dataDir, { recursive: true });
			const first = await ctx.startStack({ ...options, dataDir, pollMs: POLL_MS });
			await first.stop();
			const rootToken = first.rootToken;
			const t: Timing = { readyMs: [], rssMb: [] };
			for (let i = 0; i < runs; i++) {
				const stack = await ctx.startStack({ ...options, dataDir, rootToken, pollMs: POLL_MS });
				const proc = stack.processes[0];
				t.readyMs.push(proc.readyAt - proc.spawnedAt);
				await settle();
				t.rssMb.push((rssBytes(proc.child.pid) ?? NaN) / MB);
				await stack.stop();
			}
			return t;
		};

		const bare: Timing = { readyMs: [], rssMb: [] };
		for (let i = 0; i < runs; i++) {
			const server = await ctx.startBareServer(Buffer.from("[]"), { "Content-Type": "application/json" });
			bare.readyMs.push(server.proc.readyAt - server.proc.spawnedAt);
			await settle();
			bare.rssMb.push((rssBytes(server.proc.child.pid) ?? NaN) / MB);
			server.proc.child.kill("SIGKILL");
		}

		const all = serviceNames();
		ctx.log(`all-in-one: ${runs} restarts with ${all.length} services (${all.join(", ")})`);
		const allInOne = await measureStack({ nodes: { all: "" } });
		ctx.log(`labels alone over NATS: ${runs} restarts`);
		const alone = await measureStack({ nodes: { labels: "labels" }, nats: true });

		const s = (xs: number[]): Summary => ({ ...summarize(xs), p99: null });
		const max = (xs: number[]) => Math.round(Math.max(...xs) * 10) / 10;
		const rows: Row[] = [];
		for (const [name, t] of [
			[`all-in-one (${all.length} services)`, allInOne],
			["labels alone, over NATS", alone],
		] as const) {
			rows.push({
				case: name,
				metric: "ms to /ready",
				value: s(t.readyMs),
				baseline: "bare node http: ms to first 200",
				baselineValue: s(bare.readyMs),
				better: "lower",
				extra: { runs, max: max(t.readyMs), baselineMax: max(bare.readyMs) },
			});
			rows.push({
				case: name,
				metric: "idle RSS MB",
				value: s(t.rssMb),
				baseline: "bare node http: idle RSS",
				baselineValue: s(bare.rssMb),
				better: "lower",
				extra: { runs, max: max(t.rssMb), baselineMax: max(bare.rssMb) },
			});
		}
		return rows;
	},
};

export default scenario;
