/** Percentiles of measured samples (nearest rank, exact: every sample is kept). */

/** A distribution summarised: the median and the 99th percentile (null when not meaningful). */
export interface Summary {
	median: number;
	p99: number | null;
}

export function percentile(sorted: number[], p: number): number {
	if (!sorted.length) return NaN;
	const rank = Math.ceil((p / 100) * sorted.length);
	return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/** Median and p99 of the samples; p99 only when there are enough samples for it to mean something. */
export function summarize(samples: number[], minForP99 = 100): Summary {
	const sorted = [...samples].sort((a, b) => a - b);
	return { median: percentile(sorted, 50), p99: sorted.length >= minForP99 ? percentile(sorted, 99) : null };
}

/** A single figure (a rate, a size) as a summary without a spread. */
export const single = (value: number): Summary => ({ median: value, p99: null });

export const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;
