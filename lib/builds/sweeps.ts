/**
 * Runs a sweep now and then: the artifacts uploads a process that died mid-upload left unfinished,
 * the pipelines a build still owes a status refresh. One sweep at a time; a failed one is
 * reported and the next one tries again.
 */

interface SweepOptions {
	everyMs: number;
	/** Told what a sweep did when it did something (the count the sweep answered). */
	onSwept: (count: number) => void;
	onError: (err: unknown) => void;
}

/** Starts the sweeps; returns the function that stops them. The timer does not keep the process alive. */
export function sweepEvery(sweep: () => Promise<number>, opts: SweepOptions): () => void {
	let sweeping = false;
	const timer = setInterval(() => {
		if (sweeping) return;
		sweeping = true;
		sweep()
			.then(count => {
				if (count) opts.onSwept(count);
			})
			.catch(opts.onError)
			.finally(() => (sweeping = false));
	}, opts.everyMs);
	timer.unref();
	return () => clearInterval(timer);
}
