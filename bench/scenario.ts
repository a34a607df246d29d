/**
 * The contract between the bench harness (bench/run.ts) and one scenario module.
 *
 * A scenario is a file `bench/scenarios/NN-<slug>.ts` (NN = its number in the issue: 03 builds
 * list, 04 artifacts, 05 push fan-out, …) whose default export (or `scenario` export) is a
 * `Scenario`. The harness finds it by that file name, runs it with a `BenchContext`, and prints
 * and saves the rows it returns. Every row compares a measurement with a baseline measured in the
 * same run; the harness computes the ratios. Whatever a scenario starts through the context
 * (stacks, baseline servers, `ctx.defer` clean-ups) is stopped after it, even when it fails.
 */
import type { BareServer } from "./support/bare-server";
import type { Summary } from "./support/stats";
import type { BaselineSerializer, FrameworkBaseline } from "./support/framework-baseline";
import type { LoadOptions, LoadResult } from "./support/load";
import type { Stack, StackOptions } from "./support/stack";

export type { Summary };

export interface Row {
	/** What was measured: "all-in-one", "split over NATS + Redis cacher", "100,000 builds, page 1". */
	case: string;
	/** The quantity and its unit: "latency ms @ c=10", "req/s @ c=10", "ms to /ready", "idle RSS MB". */
	metric: string;
	value: Summary;
	/** What the case is compared with: "bare node http, same bytes", "1,000 builds". */
	baseline: string;
	baselineValue: Summary;
	/**
	 * "lower" for times and sizes, "higher" for throughput. The harness reports every ratio as the
	 * cost relative to the baseline (1.0 = as good as the baseline, 3.0 = three times worse).
	 */
	better: "lower" | "higher";
	/** Anything else worth keeping: error counts, sample sizes, loss counts, peak RSS. */
	extra?: Record<string, number | string | boolean>;
	/**
	 * A goal on the ratio (a cost, as above): at most `max` (×1.25 = at least 0.8 of the baseline's
	 * throughput); or on the value itself, for an issue's absolute target (`atLeast` 1,000 events/s,
	 * `atMost` 250 ms or 0 lost), still shown beside its baseline. On the median unless `on` says p99.
	 */
	goal?: Goal;
}

export interface Goal {
	max?: number;
	atLeast?: number;
	atMost?: number;
	on?: "median" | "p99";
}

export interface Scenario {
	/** Short name for the table: "gateway overhead". */
	name: string;
	/** One sentence on what it measures and against what. */
	description?: string;
	/** How long it may take before the harness gives up on it (default 10 minutes). */
	timeLimitMinutes?: number;
	run(ctx: BenchContext): Promise<Row[]>;
}

export interface BenchContext {
	/** `--quick`: shorter runs and fewer samples (smoke-testing the harness). */
	quick: boolean;
	/** Seconds per measured load run (after a warm-up). */
	duration: number;
	/** Concurrent connections for load runs. */
	connections: number;
	/** A scratch directory for this scenario, removed afterwards. */
	tmpDir: string;
	log(message: string): void;
	/** Starts the services as processes (moleculer-runner on dist/); stopped after the scenario. */
	startStack(options: StackOptions): Promise<Stack>;
	/** A bare Node http server process answering every request with exactly these bytes. */
	startBareServer(body: Buffer, headers: Record<string, string>): Promise<BareServer>;
	/**
	 * The framework's own floor: a minimal moleculer-web gateway whose one action returns `body`'s
	 * data, in one process, or with the action in a second process over `nats`; with the project's
	 * serializer unless another is named.
	 */
	startFrameworkBaseline(body: Buffer, nats?: { url: string; namespace: string }, serializer?: BaselineSerializer): Promise<FrameworkBaseline>;
	/** autocannon at fixed concurrency: warm-up, then a measured run with per-request latencies. */
	load(options: LoadOptions): Promise<LoadResult>;
	/** Registers a clean-up to run after the scenario (last registered runs first). */
	defer(cleanup: () => unknown): void;
}
