/**
 * The fuzzers' seed: FUZZ_SEED when it is a number (a run replayed), a new one otherwise, so that
 * every run, CI's included, tries other inputs. The tests name it, and a failure prints it.
 */
export function fuzzSeed(): number {
	const given = Number(process.env.FUZZ_SEED);
	return process.env.FUZZ_SEED && Number.isSafeInteger(given) ? given : Math.floor(Math.random() * 2 ** 31);
}
