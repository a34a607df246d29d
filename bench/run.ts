/**
 * `npm run bench`: every scenario module under bench/scenarios/ (NN-<slug>.js once compiled), each
 * against a baseline measured in the same run, printed as one table of ratios (median and p99)
 * and saved as JSON under bench/results/. Loopback only; a few minutes in all.
 *
 *   npm run bench                       all scenarios
 *   npm run bench -- --quick            shorter runs, fewer samples (checks the harness)
 *   npm run bench -- --only 1,6         some scenarios, by number or name
 *   npm run bench -- --duration 5 --connections 10
 *   npm run bench -- --update-readme    also rewrite the table in docs/performance.md#bench
 *
 * Ratios are costs relative to the baseline: 1.0 is as good as the baseline, 2.0 twice as slow
 * (or half the throughput, or twice the memory).
 */
import fs from "fs";
import os from "os";
import path from "path";
import { execFileSync } from "child_process";
import type { BenchContext, Goal, Row, Scenario, Summary } from "./scenario";
import { startBareServer } from "./support/bare-server";
import { startFrameworkBaseline } from "./support/framework-baseline";
import { runLoad } from "./support/load";
import { ROOT } from "../test/support/processes";
import { Stack } from "./support/stack";

/** The scenarios; a module `NN-*.ts` fills slot NN (7: durable writes of the store, 8: worker throughput per replica, 9: artifacts on S3). */
const EXPECTED: Record<number, string> = {
	1: "gateway overhead",
	2: "auth cost",
	3: "builds list",
	4: "artifacts",
	5: "push fan-out",
	6: "start-up",
	7: "durable writes",
	8: "worker throughput",
	9: "artifacts on S3",
};
const SCENARIO_TIME_LIMIT_MS = 10 * 60 * 1000;
const TABLE_START = "<!-- bench:table:start -->";
const TABLE_END = "<!-- bench:table:end -->";

interface Args {
	quick: boolean;
	only: string[];
	duration: number;
	connections: number;
	updateReadme: boolean;
}

function parseArgs(argv: string[]): Args {
	const args: Args = { quick: false, only: [], duration: 0, connections: 10, updateReadme: false };
	for (let i = 0; i < argv.length; i++) {
		const a = argv[i];
		if (a === "--quick") args.quick = true;
		else if (a === "--update-readme") args.updateReadme = true;
		else if (a === "--only")
			args.only = String(argv[++i] ?? "")
				.split(",")
				.map(s => s.trim().toLowerCase())
				.filter(Boolean);
		else if (a === "--duration") args.duration = Number(argv[++i]);
		else if (a === "--connections") args.connections = Number(argv[++i]);
		else throw new Error(`unknown argument ${a} (see the header of bench/run.ts)`);
	}
	if (!args.duration) args.duration = args.quick ? 2 : 5;
	if (!(args.duration > 0) || !(args.connections > 0)) throw new Error("--duration and --connections must be positive numbers");
	return args;
}

interface Found {
	number: number;
	file: string;
	scenario: Scenario;
}

async function discover(): Promise<Found[]> {
	const dir = path.join(__dirname, "scenarios");
	const files = fs.existsSync(dir)
		? fs
				.readdirSync(dir)
				.filter(f => /^\d+-.+\.js$/.test(f))
				.sort()
		: [];
	const found: Found[] = [];
	for (const file of files) {
		const mod = (await import(path.join(dir, file))) as { default?: Scenario; scenario?: Scenario };
		const scenario = mod.default ?? mod.scenario;
		if (!scenario || typeof scenario.run !== "function" || !scenario.name) throw new Error(`bench/scenarios/${file} exports no Scenario (name + run)`);
		found.push({ number: Number(file.split("-")[0]), file, scenario });
	}
	return found;
}

export interface RowResult extends Row {
	ratio: Summary;
	/** Whether the row's goal was met in this run (absent without a goal). */
	goalMet?: boolean;
}

export interface ScenarioResult {
	number: number;
	name: string;
	file: string | null;
	status: "ok" | "failed" | "missing";
	error?: string;
	seconds: number;
	rows: RowResult[];
}

/** Cost relative to the baseline: value/baseline for times and sizes, baseline/value for throughput. */
function ratioOf(row: Row): Summary {
	const r = (v: number | null, b: number | null) => {
		if (v === null || b === null || !Number.isFinite(v) || !Number.isFinite(b) || v <= 0 || b <= 0) return null;
		return row.better === "lower" ? v / b : b / v;
	};
	return { median: r(row.value.median, row.baselineValue.median) ?? NaN, p99: r(row.value.p99, row.baselineValue.p99) };
}

/** Every bound the goal sets holds: on the ratio (`max`) and on the value (`atLeast`, `atMost`). */
function goalMet(goal: Goal, ratio: Summary, value: Summary): boolean {
	const pick = (s: Summary) => (goal.on === "p99" ? s.p99 : s.median);
	const ok = (n: number | null, test: (n: number) => boolean) => n !== null && Number.isFinite(n) && test(n);
	return (
		(goal.max === undefined || ok(pick(ratio), r => r <= goal.max!)) &&
		(goal.atLeast === undefined || ok(pick(value), v => v >= goal.atLeast!)) &&
		(goal.atMost === undefined || ok(pick(value), v => v <= goal.atMost!))
	);
}

function withRatio(row: Row): RowResult {
	const ratio = ratioOf(row);
	return row.goal ? { ...row, ratio, goalMet: goalMet(row.goal, ratio, row.value) } : { ...row, ratio };
}

async function runScenario(found: Found, args: Args): Promise<ScenarioResult> {
	const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), `glv3-bench-${found.number}-`));
	const cleanups: (() => unknown)[] = [];
	const ctx: BenchContext = {
		quick: args.quick,
		duration: args.duration,
		connections: args.connections,
		tmpDir,
		log: message => console.error(`  [${found.scenario.name}] ${message}`),
		startStack: async options => {
			const stack = new Stack(options);
			cleanups.push(() => stack.stop());
			return stack.start();
		},
		startBareServer: async (body, headers) => {
			const bare = await startBareServer(body, headers, tmpDir);
			cleanups.push(() => bare.proc.child.kill("SIGKILL"));
			return bare;
		},
		startFrameworkBaseline: async (body, nats, serializer) => {
			const baseline = await startFrameworkBaseline(body, tmpDir, nats, serializer);
			cleanups.push(() => baseline.procs.forEach(p => p.child.kill("SIGKILL")));
			return baseline;
		},
		load: options => runLoad(options, { connections: args.connections, duration: args.duration }),
		defer: cleanup => cleanups.push(cleanup),
	};
	const started = Date.now();
	let timer: NodeJS.Timeout | undefined;
	try {
		const limit = new Promise<never>((_, reject) => {
			const limitMs = (found.scenario.timeLimitMinutes ?? SCENARIO_TIME_LIMIT_MS / 60000) * 60000;
			timer = setTimeout(() => reject(new Error(`took longer than ${limitMs / 60000} minutes`)), limitMs);
		});
		const rows = await Promise.race([found.scenario.run(ctx), limit]);
		return {
			number: found.number,
			name: found.scenario.name,
			file: found.file,
			status: "ok",
			seconds: (Date.now() - started) / 1000,
			rows: rows.map(withRatio),
		};
	} catch (err) {
		return {
			number: found.number,
			name: found.scenario.name,
			file: found.file,
			status: "failed",
			error: (err as Error).stack ?? String(err),
			seconds: (Date.now() - started) / 1000,
			rows: [],
		};
	} finally {
		clearTimeout(timer);
		for (const cleanup of cleanups.reverse())
			await Promise.resolve()
				.then(cleanup)
				.catch(err => console.error(`  clean-up failed: ${(err as Error).message}`));
		fs.rmSync(tmpDir, { recursive: true, force: true });
	}
}

const fmt = (n: number | null, digits = 2) =>
	n === null || !Number.isFinite(n) ? "–" : n >= 1000 ? Math.round(n).toLocaleString("en-US") : Number.isInteger(n) ? String(n) : n.toFixed(digits);
const pair = (s: Summary) => (s.p99 === null ? fmt(s.median) : `${fmt(s.median)} / ${fmt(s.p99)}`);
const ratio = (n: number | null) => (n === null || !Number.isFinite(n) ? "–" : `×${n.toFixed(2)}`);
function goalCell(row: RowResult): string {
	const g = row.goal;
	if (!g) return "";
	const bounds = [
		g.max !== undefined ? `≤ ×${g.max.toFixed(2)}` : "",
		g.atLeast !== undefined ? `≥ ${fmt(g.atLeast)}` : "",
		g.atMost !== undefined ? `≤ ${fmt(g.atMost)}` : "",
	].filter(Boolean);
	return `${g.on === "p99" ? "p99 " : ""}${bounds.join(", ")} ${row.goalMet ? "✓ met" : "✗ missed"}`;
}

/** The results as a Markdown table (also what docs/performance.md#bench shows). */
export function markdownTable(results: ScenarioResult[]): string {
	const lines = [
		"| # | Scenario | Case | Metric | Value (median / p99) | Baseline | Baseline (median / p99) | Ratio median | Ratio p99 | Goal |",
		"|---|---|---|---|---|---|---|---|---|---|",
	];
	for (const r of results) {
		if (r.status !== "ok") {
			const why = r.status === "missing" ? `not implemented yet (bench/scenarios/0${r.number}-*.ts)` : `FAILED: ${String(r.error).split("\n")[0]}`;
			lines.push(`| ${r.number} | ${r.name} | ${why} | | | | | | | |`);
			continue;
		}
		for (const row of r.rows) {
			const cells = [r.number, r.name, row.case, row.metric, pair(row.value), row.baseline, pair(row.baselineValue)];
			lines.push(`| ${cells.join(" | ")} | ${ratio(row.ratio.median)} | ${ratio(row.ratio.p99)} | ${goalCell(row)} |`);
		}
	}
	return lines.join("\n");
}

function gitCommit(): string | null {
	try {
		return execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
	} catch {
		return null;
	}
}

function machine() {
	const cpus = os.cpus();
	return {
		cpus: cpus.length,
		cpuModel: cpus[0]?.model ?? "unknown",
		memoryGiB: Math.round(os.totalmem() / 1024 ** 3),
		node: process.version,
		platform: `${os.type()} ${os.release()}`,
	};
}

function updateReadme(table: string, when: string, info: ReturnType<typeof machine>): void {
	const file = path.join(ROOT, "docs", "performance.md");
	const text = fs.readFileSync(file, "utf8");
	const start = text.indexOf(TABLE_START);
	const end = text.indexOf(TABLE_END);
	if (start < 0 || end < start) throw new Error(`docs/performance.md has no ${TABLE_START} … ${TABLE_END} markers`);
	const block = `${TABLE_START}\n_Measured ${when} on ${info.cpus} × ${info.cpuModel}, Node ${info.node}._\n\n${table}\n${TABLE_END}`;
	fs.writeFileSync(file, text.slice(0, start) + block + text.slice(end + TABLE_END.length));
}

async function main(): Promise<void> {
	const args = parseArgs(process.argv.slice(2));
	const found = await discover();
	const wanted = (n: number, name: string) => !args.only.length || args.only.includes(String(n)) || args.only.includes(name.toLowerCase());
	const slots = [...new Set([...Object.keys(EXPECTED).map(Number), ...found.map(f => f.number)])].sort((a, b) => a - b);
	const startedAt = new Date();
	const results: ScenarioResult[] = [];
	for (const n of slots) {
		const modules = found.filter(f => f.number === n);
		if (!modules.length) {
			if (wanted(n, EXPECTED[n])) results.push({ number: n, name: EXPECTED[n], file: null, status: "missing", seconds: 0, rows: [] });
			continue;
		}
		for (const f of modules) {
			if (!wanted(n, f.scenario.name)) continue;
			console.error(`▶ ${n}. ${f.scenario.name}${f.scenario.description ? ` — ${f.scenario.description}` : ""}`);
			const result = await runScenario(f, args);
			const seconds = result.seconds.toFixed(1);
			console.error(result.status === "ok" ? `  done in ${seconds} s` : `  FAILED after ${seconds} s:\n${result.error}`);
			results.push(result);
		}
	}
	const info = machine();
	const table = markdownTable(results);
	console.log(`\n${table}\n`);
	console.log("Ratios: cost relative to the baseline measured in the same run (×1.00 = as good as the baseline).");
	const goals = results.flatMap(r => r.rows.filter(row => row.goal));
	if (goals.length) console.log(`Goals: ${goals.filter(row => row.goalMet).length} of ${goals.length} met in this run.`);

	const report = {
		startedAt: startedAt.toISOString(),
		finishedAt: new Date().toISOString(),
		commit: gitCommit(),
		machine: info,
		options: args,
		scenarios: results,
	};
	const outDir = path.join(ROOT, "bench/results");
	fs.mkdirSync(outDir, { recursive: true });
	// A quick run checks the harness: it keeps only its latest result, a full run keeps a history.
	const json = JSON.stringify(report, null, 2) + "\n";
	if (args.quick) {
		fs.writeFileSync(path.join(outDir, "latest-quick.json"), json);
		console.log("Saved bench/results/latest-quick.json.");
	} else {
		const stamp = startedAt.toISOString().replace(/[:.]/g, "-");
		fs.writeFileSync(path.join(outDir, `bench-${stamp}.json`), json);
		fs.writeFileSync(path.join(outDir, "latest.json"), json);
		console.log(`Saved bench/results/bench-${stamp}.json (and latest.json).`);
	}
	if (args.updateReadme) {
		updateReadme(table, startedAt.toISOString().slice(0, 10), info);
		console.log("Updated the table in docs/performance.md.");
	}
	if (results.some(r => r.status === "failed")) process.exitCode = 1;
}

if (require.main === module) {
	main().catch(err => {
		console.error(err);
		process.exit(1);
	});
}
