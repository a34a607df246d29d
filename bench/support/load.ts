/**
 * HTTP load at a fixed concurrency with autocannon (in this process, against servers in their
 * own processes). autocannon's own latency histogram has 1 ms resolution, which cannot tell a
 * bare server's 0.2 ms from 0.9 ms, so every response time is also kept from its `response`
 * event (hrtime, sub-millisecond) and summarised exactly.
 */
import autocannon from "autocannon";
import { percentile, summarize, type Summary } from "./stats";

export interface LoadOptions {
	url: string;
	method?: string;
	headers?: Record<string, string>;
	body?: string | Buffer;
	/** Default: the context's connections. */
	connections?: number;
	/** Seconds (default: the context's duration). Ignored when `amount` is set. */
	duration?: number;
	/** A fixed number of requests instead of a duration. */
	amount?: number;
	/** Seconds of unmeasured load first (default 1; 0 for none). */
	warmup?: number;
	/** Changes each request before it is sent (e.g. a different token per request). */
	setupRequest?: autocannon.Request["setupRequest"];
}

export interface LoadResult {
	/** Completed requests per second over the measured run (merged runs: the median of theirs). */
	rps: number;
	latency: Summary;
	/** Every response time, ms (for merging runs). */
	samples: number[];
	requests: number;
	/** Connection errors and timeouts, and responses outside 2xx: a valid run has none. */
	errors: number;
	non2xx: number;
	statusCodes: Record<string, number>;
}

function fire(opts: autocannon.Options, samples?: number[]): Promise<autocannon.Result> {
	return new Promise((resolve, reject) => {
		const instance = autocannon({ timeout: 30, ...opts }, (err, result) => (err ? reject(err) : resolve(result)));
		if (samples) instance.on("response", (_client: unknown, _status: number, _bytes: number, ms: number) => samples.push(ms));
	});
}

export async function runLoad(opts: LoadOptions, defaults: { connections: number; duration: number }): Promise<LoadResult> {
	const base: autocannon.Options = {
		url: opts.url,
		method: opts.method ?? "GET",
		headers: opts.headers,
		body: opts.body,
		connections: opts.connections ?? defaults.connections,
		requests: opts.setupRequest ? [{ setupRequest: opts.setupRequest }] : undefined,
	};
	const warmup = opts.warmup ?? 1;
	if (warmup > 0 && !opts.amount) await fire({ ...base, duration: warmup });
	const samples: number[] = [];
	const started = process.hrtime.bigint();
	const result = await fire(opts.amount ? { ...base, amount: opts.amount } : { ...base, duration: opts.duration ?? defaults.duration }, samples);
	const seconds = Number(process.hrtime.bigint() - started) / 1e9;
	const statusCodes = Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, s]) => [code, Number(s.count)]));
	return {
		rps: samples.length / seconds,
		latency: summarize(samples),
		samples,
		requests: samples.length,
		errors: result.errors + result.timeouts,
		non2xx: result.non2xx,
		statusCodes,
	};
}

/**
 * Runs of the same load, taken in turns with other loads (bench scenario 1), as one result: every
 * response time in one distribution, and the median run's throughput, which a run slowed by a
 * neighbour on a shared machine moves least.
 */
export function mergeLoads(runs: LoadResult[]): LoadResult {
	const samples = runs.flatMap(r => r.samples);
	const rates = runs.map(r => r.rps).sort((a, b) => a - b);
	const statusCodes: Record<string, number> = {};
	for (const r of runs) for (const [code, n] of Object.entries(r.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + n;
	const sum = (pick: (r: LoadResult) => number) => runs.reduce((total, r) => total + pick(r), 0);
	return {
		rps: percentile(rates, 50),
		latency: summarize(samples),
		samples,
		requests: samples.length,
		errors: sum(r => r.errors),
		non2xx: sum(r => r.non2xx),
		statusCodes,
	};
}
