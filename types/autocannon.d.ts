// autocannon 9 ships no types: the part of its programmatic API the benchmarks use.
declare module "autocannon" {
	import type { EventEmitter } from "events";

	namespace autocannon {
		interface Request {
			method?: string;
			path?: string;
			headers?: Record<string, string>;
			body?: string | Buffer;
			setupRequest?: (request: Request, context: Record<string, unknown>) => Request | null | undefined;
		}
		interface Options {
			url: string;
			connections?: number;
			duration?: number;
			amount?: number;
			timeout?: number;
			method?: string;
			headers?: Record<string, string>;
			body?: string | Buffer;
			requests?: Request[];
			bailout?: number;
		}
		interface Histogram {
			average: number;
			mean: number;
			p50: number;
			p99: number;
			min: number;
			max: number;
			total?: number;
		}
		interface Result {
			requests: Histogram & { total: number; sent: number };
			latency: Histogram;
			throughput: Histogram;
			duration: number;
			errors: number;
			timeouts: number;
			non2xx: number;
			statusCodeStats: Record<string, { count: number }>;
		}
		interface Instance extends EventEmitter {
			stop(): void;
		}
	}
	function autocannon(opts: autocannon.Options, cb: (err: Error | null, result: autocannon.Result) => void): autocannon.Instance;
	export = autocannon;
}
