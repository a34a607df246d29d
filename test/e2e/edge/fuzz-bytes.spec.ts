/**
 * The front door, fuzzed with raw bytes (docs/architecture.md#fuzzing): fast-check builds HTTP
 * requests from the gateway's route table (test/support/raw-requests.ts: every method, escapes
 * right and wrong, queries, Expect, encodings, framings, Host, bodies, a known token so that the
 * fast path of a cached GET is reached, a made-up one, none) and sends each as it is, to `npm
 * start`'s shape and to the gateway split from the services over NATS.
 *
 * For every request: an answer within the harness's bound, never a 5xx, and a GitLab-style JSON
 * body on every 4xx; no stored secret, integration secret or private token in it (tokens only from
 * /user and /session); and, split (the all-in-one's push journal moves on its own), a rejected
 * request or a GET leaves the store as it was. Afterwards every process is up, serving, and logged
 * nothing unexpected. Loopback only, bounded: FUZZ_RUNS requests (1000) within FUZZ_SECONDS (120) a
 * shape; FUZZ_SEED picks the run. A failure prints its seed and the request's bytes; the cases
 * found stay in test/e2e/edge/edge-regressions.spec.ts. `npm run fuzz` runs it longer.
 */
import fc from "fast-check";
import { startCluster, type Cluster } from "../../support/cluster";
import { createUser, type TestUser } from "../../support/fixtures";
import { serviceNames } from "../../support/processes";
import { seedProject, validBody } from "../../support/project-fixtures";
import { exchange, type RawAnswer } from "../../support/raw-exchange";
import { fuzzSeed } from "../../support/fuzz-seed";
import { rawRequest, type RawRequest } from "../../support/raw-requests";
import { gatewayRoutes } from "../../support/routes";
import { KeyFactory } from "../../support/ssh-keys";
import { storeDigest } from "../../support/store";

const SEED = fuzzSeed();
const RUNS = Number(process.env.FUZZ_RUNS ?? 1000);
const SECONDS = Number(process.env.FUZZ_SECONDS ?? 120);
/** The harness's wait for an answer: past the gateway's 10 s request timeout, so only a request left unanswered trips it. */
const ANSWER_BOUND_MS = 15000;

const SECRET_FIELDS = /"(password_hash|token_hash|token_enc|encrypted_[a-z_]*|secret_[a-z_]*)"\s*:/;

describe.each([
	["npm start's shape (one process)", { all: "" }, false],
	[
		"split over NATS",
		{
			api: "api",
			backend: serviceNames()
				.filter(s => s !== "api")
				.join(","),
		},
		true,
	],
] as const)("%s", (_shape, nodes, split) => {
	let cluster: Cluster;
	let owner: TestUser;
	let reporter: TestUser;
	let ids: Record<string, string>;
	let integrationSecret = "";
	const keys = new KeyFactory();

	beforeAll(async () => {
		cluster = await startCluster({ nodes: { ...nodes }, nats: split, env: { RATE_LIMIT_PER_MINUTE: "0" } });
		owner = await createUser(cluster.api());
		reporter = await createUser(cluster.api());
		const seeded = await seedProject(cluster, owner, keys, { member: reporter, memberLevel: 20 });
		ids = seeded.ids;
		integrationSecret = seeded.integrationSecret;
		// Their owners are kept: requests with these tokens reach the fast path of a cached GET.
		for (const token of [cluster.rootToken, owner.token, reporter.token]) expect((await cluster.api(token).get("/user")).status).toBe(200);
	}, 180000);

	afterAll(async () => {
		keys.cleanup();
		await cluster?.stop();
	});

	/** What is wrong with an answer. */
	function problems(req: RawRequest, answer: RawAnswer, storeChanged: boolean): string[] {
		const out: string[] = [];
		const text = answer.body.toString("utf8");
		if (answer.status >= 500) out.push(`status ${answer.status}`);
		if (answer.status >= 400 && answer.status < 500 && req.method !== "HEAD") {
			let body: unknown = null;
			try {
				body = JSON.parse(text);
			} catch {
				// reported below
			}
			if (!body || typeof body !== "object" || !("message" in body || "error" in body))
				out.push(`a ${answer.status} without a GitLab error body: ${text.slice(0, 120)}`);
		}
		if (storeChanged) out.push(`the store changed on ${answer.status >= 400 ? `a ${answer.status}` : "a read"}`);
		if (SECRET_FIELDS.test(text)) out.push("a stored secret field in the answer");
		if (text.includes(integrationSecret)) out.push("an integration secret in the answer");
		const mayShowToken = /^(GET \/user|POST \/session)$/.test(req.route);
		if (!mayShowToken && [cluster.rootToken, owner.token, reporter.token].some(t => text.includes(t))) out.push("a private token in the answer");
		return out;
	}

	it(
		`answers every raw request in GitLab's words, never with a 5xx, and stays up (seed ${SEED})`,
		async () => {
			const world = {
				routes: gatewayRoutes(),
				ids,
				tokens: [cluster.rootToken, owner.token, reporter.token],
				internalSecret: cluster.internalSecret,
				validBody: (route: Parameters<typeof validBody>[0], unique: string) => validBody(route, ids, owner, unique),
			};
			const statuses: Record<number, number> = {};
			if (split) {
				// The digest sees a write and ignores a refused one (or the oracle would prove nothing).
				const before = storeDigest(cluster.dataDir);
				const labels = cluster.api(owner.token);
				expect((await labels.post(`/projects/${ids.id}/labels`, { body: { name: "bug", color: "#000000" } })).status).toBe(409);
				expect(storeDigest(cluster.dataDir)).toBe(before);
				expect((await labels.post(`/projects/${ids.id}/labels`, { body: { name: "digest-check", color: "#000000" } })).status).toBe(200);
				expect(storeDigest(cluster.dataDir)).not.toBe(before);
			}
			let digest = split ? storeDigest(cluster.dataDir) : "";
			await fc.assert(
				fc.asyncProperty(rawRequest(world), async req => {
					const answer = await exchange(cluster.port, req.bytes, { timeoutMs: ANSWER_BOUND_MS, head: req.method === "HEAD" });
					statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
					let changed = false;
					if (split) {
						const after = storeDigest(cluster.dataDir);
						changed = (answer.status >= 400 || req.reads) && after !== digest;
						digest = after;
					}
					const found = problems(req, answer, changed);
					if (found.length) throw new Error(`${found.join("; ")}\n  answer: ${answer.status} ${answer.body.toString("utf8").slice(0, 300)}`);
				}),
				{ seed: SEED, numRuns: RUNS, interruptAfterTimeLimit: SECONDS * 1000 },
			);
			// What the run covered, by status.
			console.log(`fuzz seed ${SEED}: ${JSON.stringify(statuses)}`);

			for (const [name, node] of cluster.nodes) expect([name, node.child.exitCode, node.child.signalCode]).toEqual([name, null, null]);
			expect((await cluster.api().get("/user")).status).toBe(200);
			const logs = [...cluster.nodes.keys()].map(name => cluster.logs(name)).join("");
			expect(logs).not.toMatch(/Unexpected error|UnhandledPromiseRejection|uncaughtException/);
		},
		(SECONDS + 300) * 1000,
	);
});
