/** The fuzzers' seed: FUZZ_SEED, a new one for FUZZ_SEED=random (`npm run fuzz`), else CI's fixed one. A failure prints it. */
export function fuzzSeed(): number {
	const given = process.env.FUZZ_SEED;
	if (given === "random") return Math.floor(Math.random() * 2 ** 31);
	return given ? Number(given) : 20170101;
}
