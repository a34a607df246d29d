/**
 * The API as documented, fuzzed (docs/architecture.md#fuzzing): Schemathesis reads the running
 * gateway's own /api/v3/openapi.json (both versions) and runs every check it has in every phase it
 * has: the document's examples, its coverage (each keyword's edges, each parameter left out, every
 * method a path does not take), fuzzing, and stateful sequences that follow the document's links
 * (create, then read, edit, delete what was made). Root's token and the shared secret go with every
 * request, the seeded records' identifiers among the generated ones. Nothing may be a server
 * error, every answer's status, content type, headers and body must be what the document says, a
 * request the document calls valid must be taken and one it calls invalid refused.
 *
 * `npm start`'s shape, loopback only, bounded: FUZZ_OPENAPI_EXAMPLES cases per operation (3)
 * within FUZZ_OPENAPI_SECONDS (240); the seed is new each run unless FUZZ_SEED names one, and a
 * failure prints it with a curl line for each request that failed. `npm run fuzz` runs it longer.
 */
import { startCluster, type Cluster } from "../../support/cluster";
import { createUser } from "../../support/fixtures";
import { seedProject } from "../../support/project-fixtures";
import { failuresOf, OWN_KEY, runSchemathesis } from "../../support/schemathesis";
import { fuzzSeed } from "../../support/fuzz-seed";
import { KeyFactory } from "../../support/ssh-keys";

const SEED = fuzzSeed();
const EXAMPLES = Number(process.env.FUZZ_OPENAPI_EXAMPLES ?? 3);
const SECONDS = Number(process.env.FUZZ_OPENAPI_SECONDS ?? 240);

let cluster: Cluster;
const keys = new KeyFactory();
let ids: Record<string, string> = {};

beforeAll(async () => {
	// No request limit: thousands of requests in a few minutes are the point here.
	cluster = await startCluster({ nodes: { all: "" }, nats: false, env: { RATE_LIMIT_PER_MINUTE: "0" } });
	const owner = await createUser(cluster.api());
	ids = (await seedProject(cluster, owner, keys)).ids;
	// Each deploy-key create its own key (test/support/schemathesis.ts, OWN_KEY).
	for (const create of ["post_projects_id_keys", "post_projects_id_deploy_keys", "v4_post_projects_id_deploy_keys"])
		ids[`${OWN_KEY}${create}`] = (await keys.generate("ed25519")).line;
}, 120000);

afterAll(async () => {
	keys.cleanup();
	await cluster?.stop();
});

it(
	`answers every documented operation as its document says, in every phase, with every check (seed ${SEED})`,
	async () => {
		console.log(`Schemathesis seed ${SEED} (FUZZ_SEED=${SEED} replays this run)`);
		const run = await runSchemathesis({
			document: `${cluster.url}/openapi.json`,
			headers: { "PRIVATE-TOKEN": cluster.rootToken, "Gitlab-Shared-Secret": cluster.internalSecret },
			ids,
			phases: ["examples", "coverage", "fuzzing", "stateful"],
			maxExamples: EXAMPLES,
			maxSeconds: SECONDS,
			seed: SEED,
		});
		// What it covered, for the log; the failures, with their curl lines, in the assertion.
		console.log(run.output.slice(run.output.lastIndexOf("SUMMARY")));
		expect(failuresOf(run)).toBe("");
		// Every operation of the document was tried, and every phase ran.
		const [, selected, total] = /Selected: (\d+)\/(\d+)/.exec(run.output) ?? [];
		expect([selected, /Tested: (\d+)/.exec(run.output)?.[1]]).toEqual([total, total]);
		const phases = run.output.slice(run.output.lastIndexOf("Test Phases:"));
		for (const phase of ["Examples", "Coverage", "Fuzzing", "Stateful"]) expect([phase, new RegExp(`✅ ${phase}`).test(phases)]).toEqual([phase, true]);
		expect((await cluster.api().get("/user")).status).toBe(200);
		expect(cluster.logs("all")).not.toMatch(/Unexpected error|UnhandledPromiseRejection|uncaughtException/);
	},
	(SECONDS + 600) * 1000,
);
