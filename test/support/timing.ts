/**
 * Cost comparisons for the tests that show an input costs time in proportion to its size: a
 * ratio measured in the same run, never a wall-clock bound.
 */

/**
 * What `subject` costs in multiples of `baseline`: both timed in turns, `runs` rounds after one
 * untimed call of each, and the median of the rounds' ratios. A burst of other work on a shared
 * machine then slows one round of both, not all of one side's timings.
 */
export function costRatio(subject: () => unknown, baseline: () => unknown, runs = 7): number {
	subject();
	baseline();
	const ratios: number[] = [];
	for (let i = 0; i < runs; i++) {
		const start = process.hrtime.bigint();
		subject();
		const middle = process.hrtime.bigint();
		baseline();
		const end = process.hrtime.bigint();
		ratios.push(Number(middle - start) / Math.max(1, Number(end - middle)));
	}
	return ratios.sort((a, b) => a - b)[Math.floor(runs / 2)];
}
