/**
 * Removes, now and then, the artifacts uploads left unfinished by a process that died mid-upload
 * (their `.part` files), so that they do not wait for the builds service's next start. One sweep
 * at a time; a failed one is reported and the next one tries again.
 */

/** What a sweep needs of the store (lib/builds/artifact-store.ts). */
interface SweptStore {
	sweepStaleUploads(idleMs: number): Promise<number>;
}

interface SweepOptions {
	everyMs: number;
	/** Uploads not written to for this long are removed (far longer than any upload may last). */
	idleMs: number;
	onSwept: (removed: number) => void;
	onError: (err: unknown) => void;
}

/** Starts the sweeps; returns the function that stops them. The timer does not keep the process alive. */
export function sweepUploadsEvery(store: SweptStore, opts: SweepOptions): () => void {
	let sweeping = false;
	const timer = setInterval(() => {
		if (sweeping) return;
		sweeping = true;
		store
			.sweepStaleUploads(opts.idleMs)
			.then(removed => {
				if (removed) opts.onSwept(removed);
			})
			.catch(opts.onError)
			.finally(() => (sweeping = false));
	}, opts.everyMs);
	timer.unref();
	return () => clearInterval(timer);
}
