/**
 * The API as documented, fuzzed (docs/architecture.md#fuzzing): Schemathesis reads the running
 * gateway's own /api/v3/openapi.json and sends every operation requests made from it, with root's
 * token and the shared secret, the seeded records' identifiers among the generated ones. Nothing may
 * be a server error, and every answer's status, content type, headers and body must be what the
 * document says. `npm start`'s shape, loopback only, bounded: FUZZ_OPENAPI_EXAMPLES cases per
 * operation (15) within FUZZ_OPENAPI_SECONDS (180); FUZZ_SEED picks the run (a failure prints it,
 * and a curl line for each request that failed). `npm run fuzz` runs it longer.
 */
import { startCluster, type Cluster } from "../support/cluster";
import { createUser } from "../support/fixtures";
import { seedProject } from "../support/project-fixtures";
import { failuresOf, runSchemathesis } from "../support/schemathesis";
import { fuzzSeed } from "../support/fuzz-seed";
import { KeyFactory } from "../support/ssh-keys";

const SEED = fuzzSeed();
const EXAMPLES = Number(process.env.FUZZ_OPENAPI_EXAMPLES ?? 15);
const SECONDS = Number(process.env.FUZZ_OPENAPI_SECONDS ?? 180);
const CHECKS = ["not_a_server_error", "status_code_conformance", "content_type_conformance", "response_headers_conformance", "response_schema_conformance"];

let cluster: Cluster;
const keys = new KeyFactory();
let ids: Record<string, string> = {};

beforeAll(async () => {
	// No request limit: thousands of requests in a few minutes are the point here.
	cluster = await startCluster({ nodes: { all: "" }, nats: false, env: { RATE_LIMIT_PER_MINUTE: "0" } });
	const owner = await createUser(cluster.api());
	ids = (await seedProject(cluster, owner, keys)).ids;
}, 120000);

afterAll(async () => {
	keys.cleanup();
	await cluster?.stop();
});

it(
	`answers every documented operation as its document says (seed ${SEED})`,
	async () => {
		const run = await runSchemathesis({
			document: `${cluster.url}/openapi.json`,
			headers: { "PRIVATE-TOKEN": cluster.rootToken, "Gitlab-Shared-Secret": cluster.internalSecret },
			ids,
			checks: CHECKS,
			maxExamples: EXAMPLES,
			maxSeconds: SECONDS,
			seed: SEED,
		});
		// What it covered, for the log; the failures, with their curl lines, in the assertion.
		console.log(run.output.slice(run.output.lastIndexOf("SUMMARY")));
		expect(failuresOf(run)).toBe("");
		// Every operation of the document was tried.
		const [, selected, total] = /Selected: (\d+)\/(\d+)/.exec(run.output) ?? [];
		expect([selected, /Tested: (\d+)/.exec(run.output)?.[1]]).toEqual([total, total]);
		expect((await cluster.api().get("/user")).status).toBe(200);
		expect(cluster.logs("all")).not.toMatch(/Unexpected error|UnhandledPromiseRejection|uncaughtException/);
	},
	(SECONDS + 300) * 1000,
);
