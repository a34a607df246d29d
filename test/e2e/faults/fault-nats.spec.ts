/**
 * The NATS server restarted under load: a NATS of this test's own (never the machine's shared one
 * on 4222), killed while clients keep calling, then started again on the same port. While it is
 * down, requests fail fast with 503 (never a 500, never a wait beyond the request timeout); once it
 * is back, the processes reconnect and rediscover each other by themselves and every request
 * succeeds again.
 */
import { RECLEAN_DELAY_MS } from "../../../lib/cache/cleaning";
import { startCluster, type Cluster } from "../../support/cluster";
import { createProject, createUser, type TestUser } from "../../support/fixtures";
import { client, waitFor } from "../../support/http";
import { PrivateServer } from "../../support/private-servers";

const REQUEST_TIMEOUT_MS = 3000;
/** A request may take the gateway's timeout plus scheduling slack, never more. */
const MAX_ANSWER_MS = REQUEST_TIMEOUT_MS + 2000;

let nats: PrivateServer;
let cluster: Cluster;
let owner: TestUser;
let projectId: number;

interface Outcome {
	status: number | string;
	ms: number;
	at: number;
}

/** Clients calling in a loop until told to stop, each answer recorded with its duration. */
function startLoad(concurrency: number) {
	const outcomes: Outcome[] = [];
	let running = true;
	const worker = async () => {
		const api = client(cluster.url, owner.token);
		while (running) {
			const t0 = Date.now();
			const status = await api
				.get(`/projects/${projectId}/labels`)
				.then(r => (r.status === 200 && !(Array.isArray(r.body) && r.body.length === 1) ? `200 with a wrong body: ${r.text}` : r.status))
				.catch(err => `no answer: ${(err as Error).message}`);
			outcomes.push({ status, ms: Date.now() - t0, at: t0 });
			if (status !== 200) await new Promise(r => setTimeout(r, 50));
		}
	};
	const workers = Array.from({ length: concurrency }, worker);
	return {
		outcomes,
		since: (t: number) => outcomes.filter(o => o.at >= t),
		stop: async () => {
			running = false;
			await Promise.all(workers);
		},
	};
}

beforeAll(async () => {
	nats = await PrivateServer.nats();
	cluster = await startCluster({
		nodes: { api: "api", accounts: "accounts", labels: "labels" },
		// No request limit: four clients reading as fast as cached reads are answered (the gateway
		// serves them without NATS) spend a user's default 2,000 a minute within a second, and the
		// 429s until the minute is over would hide what NATS does to the answers.
		env: { TRANSPORTER: nats.url, REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS), RATE_LIMIT_PER_MINUTE: "0" },
	});
	owner = await createUser(cluster.api());
	projectId = (await createProject(client(cluster.url, owner.token))).id;
	await cluster.waitForRoute("GET", `/projects/${projectId}/labels`, owner.token);
	expect((await client(cluster.url, owner.token).post(`/projects/${projectId}/labels`, { body: { name: "x", color: "#fff" } })).status).toBe(200);
	// The write cleans the list's cache entry twice (lib/cache/cleaning.ts): past the second
	// clean, what the load caches stays cached while NATS is down, as it would in production.
	await new Promise(r => setTimeout(r, RECLEAN_DELAY_MS + 500));
}, 120000);

afterAll(async () => {
	await cluster?.stop();
	await nats?.destroy();
});

it("fails fast with 503 while NATS is down and recovers by itself when it is back", async () => {
	const load = startLoad(4);
	try {
		await waitFor("steady load", () => Promise.resolve(load.outcomes.filter(o => o.status === 200).length >= 20), 20000);

		const down = Date.now();
		await nats.stop("SIGKILL");
		// Until the registry drops the silent nodes (heartbeat timeout 15 s in moleculer.config.ts; about 27 s
		// after the kill here), the gateway still answers these reads from the shared cache without NATS (200); then 503.
		await waitFor("requests failing with 503", () => Promise.resolve(load.since(down).filter(o => o.status === 503).length >= 8), 45000);
		// Down for a moment longer, as a restarting server would be.
		await new Promise(r => setTimeout(r, 1000));

		await nats.start();
		const restarted = Date.now();
		await waitFor(
			"every client served again",
			() => {
				const recent = load.since(Date.now() - 1500);
				return Promise.resolve(recent.length >= 8 && recent.every(o => o.status === 200));
			},
			30000,
			250,
		).catch(err => {
			// What the clients got since the restart, and what each process said: why it did not recover.
			const since = load.since(restarted);
			console.info("ANSWERS SINCE THE RESTART", JSON.stringify(since.slice(-20)), `of ${since.length}`);
			for (const n of ["api", "accounts", "labels"]) console.info(n, cluster.logs(n).slice(-3000));
			throw err;
		});
		const recovered = Date.now();

		const outage = load.outcomes.filter(o => o.at >= down && o.at < recovered);
		const unexpected = outage.filter(o => o.status !== 200 && o.status !== 503);
		expect(unexpected).toEqual([]);
		const slow = load.outcomes.filter(o => o.ms > MAX_ANSWER_MS);
		expect(slow).toEqual([]);
		expect(outage.filter(o => o.status === 503).length).toBeGreaterThan(0);
		// Recovery came from the processes themselves: none of them was restarted.
		for (const [name, node] of cluster.nodes) expect([name, node.child.exitCode]).toEqual([name, null]);
	} finally {
		await load.stop();
	}
	// Reads and writes both work after the restart.
	const api = client(cluster.url, owner.token);
	expect((await api.post(`/projects/${projectId}/labels`, { body: { name: "after", color: "#000" } })).status).toBe(200);
	expect((await api.get(`/projects/${projectId}/labels`)).body.map((l: { name: string }) => l.name)).toEqual(["after", "x"]);
	const logs = ["api", "accounts", "labels"].map(n => cluster.logs(n)).join("\n");
	expect(logs).not.toMatch(/Unexpected error|UnhandledPromiseRejection|uncaughtException/);
}, 120000);
