/**
 * Cost comparisons for the tests that show an input costs time in proportion to its size: a
 * ratio of two medians measured in the same run, never a wall-clock bound.
 */

/** The median of `runs` timings of `f`, in nanoseconds, after one untimed call (compiled, its memory warm). */
export function medianNs(f: () => unknown, runs = 7): number {
	f();
	const times: number[] = [];
	for (let i = 0; i < runs; i++) {
		const start = process.hrtime.bigint();
		f();
		times.push(Number(process.hrtime.bigint() - start));
	}
	return times.sort((a, b) => a - b)[Math.floor(runs / 2)];
}
