/**
 * Processes going away under traffic, over the real NATS:
 * - a replica killed (SIGKILL) while a client keeps retrying: the calls sent to the dead replica
 *   are sent again by the gateway (hedged calls) or retried by the client, another replica
 *   answers, every request ends in a correct 200, and once the dead node is forgotten no retry is
 *   needed;
 * - SIGTERM to the gateway, and to one replica of a backend, while requests are in flight: the
 *   requests finish (their answers arrive, correct), and the stopped process exits 0;
 * - SIGTERM to builds, and to the gateway writing it, while an artifact upload is half way: no
 *   partial file anywhere, and the previous artifact is still served, whole.
 * The slow requests are sign-ins (`POST /session`): checking a password is scrypt work in
 * accounts, so a few dozen of them are genuinely in flight for a while.
 *
 * Replicas of a data-owning service share the cluster's DATA_DIR, as processes on one machine
 * share its embedded store (MongoDB across machines); the traffic under test only reads.
 */
import path from "path";
import { filesUnder, internalApi, openUpload } from "../../support/builds";
import { startCluster, type Cluster } from "../../support/cluster";
import { createProject, createUser, type TestUser } from "../../support/fixtures";
import { client, waitFor, type Reply } from "../../support/http";
import { metricValue } from "../../support/processes";

const REQUEST_TIMEOUT_MS = 2000;

async function withRetries(call: () => Promise<Reply>, attempts: number): Promise<{ reply: Reply; tries: number }> {
	for (let tries = 1; ; tries++) {
		const reply = await call().catch(err => ({ status: 0, text: String(err), body: null }) as unknown as Reply);
		if (reply.status !== 503 && reply.status !== 0) return { reply, tries };
		if (tries >= attempts) return { reply, tries };
		await new Promise(r => setTimeout(r, 100));
	}
}

/** The copies of `action` the gateway sent again, their first request unanswered (`hedged_calls_total`). */
async function hedgedCopies(cluster: Cluster, action: string): Promise<number> {
	return (await metricValue(Number(cluster.nodes.get("api")!.env.METRICS_PORT), "hedged_calls_total", { action })) ?? 0;
}

describe("a replica killed while a client retries", () => {
	let cluster: Cluster;
	let owner: TestUser;
	let projectId: number;

	beforeAll(async () => {
		const env = { REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS) };
		cluster = await startCluster({ nodes: { api: "api", accounts: "accounts", labels: "labels" }, env });
		owner = await createUser(cluster.api());
		projectId = (await createProject(client(cluster.url, owner.token))).id;
		await cluster.waitForRoute("GET", `/projects/${projectId}/labels`, owner.token);
		expect((await client(cluster.url, owner.token).post(`/projects/${projectId}/labels`, { body: { name: "x", color: "#fff" } })).status).toBe(200);
		expect(await cluster.kill("labels", "SIGTERM")).toBe(0);
		await Promise.all([cluster.spawnNode("labels-a", "labels"), cluster.spawnNode("labels-b", "labels")]);
		// Both replicas known to the gateway, or the traffic may all go to one and the kill touch none.
		await cluster.waitForGatewayToSeeAll();
		await cluster.waitForRoute("GET", `/projects/${projectId}/labels`, owner.token);
	}, 120000);

	afterAll(async () => {
		await cluster?.stop();
	});

	it("is answered by the other replica; no request is lost or wrong", async () => {
		const api = client(cluster.url, owner.token);
		// Both replicas serve (the cache would hide one: each read asks for a fresh page).
		const results: { status: number; tries: number; ok: boolean }[] = [];
		let running = true;
		let n = 0;
		const worker = async () => {
			while (running) {
				const page = 1 + (n++ % 1000);
				const { reply, tries } = await withRetries(() => api.get(`/projects/${projectId}/labels`, { query: { page, per_page: 1 } }), 20);
				const ok = reply.status === 200 && Array.isArray(reply.body) && reply.body.length === (page === 1 ? 1 : 0);
				results.push({ status: reply.status, tries, ok });
			}
		};
		const workers = Array.from({ length: 4 }, worker);
		await waitFor("steady traffic", () => Promise.resolve(results.length >= 40), 20000);
		const copiesBefore = await hedgedCopies(cluster, "labels.list");
		await cluster.kill("labels-a", "SIGKILL");
		const killedAt = results.length;
		// Until the gateway forgets labels-a (heartbeat timeout), some calls go to it and are retried.
		await waitFor(
			"30 consecutive first-try answers after the kill",
			() => {
				const tail = results.slice(killedAt).slice(-30);
				return Promise.resolve(tail.length === 30 && tail.every(r => r.tries === 1));
			},
			60000,
			250,
		);
		running = false;
		await Promise.all(workers);
		expect(results.filter(r => !r.ok)).toEqual([]);
		// The kill was felt: calls went to the dead replica and were sent again, by the gateway (its
		// copy went to the live replica) or, when its copy went to the dead one too, by the client.
		const copiesAfter = await hedgedCopies(cluster, "labels.list");
		expect(copiesAfter - copiesBefore).toBeGreaterThan(0);
		expect(cluster.logs("api")).not.toMatch(/Unexpected error/);
	}, 120000);
});

describe("SIGTERM while requests are in flight", () => {
	let cluster: Cluster;
	let users: { username: string; password: string }[];

	beforeAll(async () => {
		cluster = await startCluster({ nodes: { api: "api", "accounts-a": "accounts" } });
		users = [];
		for (let i = 0; i < 4; i++) {
			const u = await createUser(cluster.api());
			users.push({ username: u.username, password: `password-${u.username}` });
		}
		await cluster.spawnNode("accounts-b", "accounts");
		await cluster.waitForGatewayToSeeAll();
	}, 120000);

	afterAll(async () => {
		await cluster?.stop();
	});

	/** Starts `count` sign-ins at once; resolves when the first answer arrives, with all of them. */
	async function signInsInFlight(count: number) {
		const api = client(cluster.url);
		let firstAnswered!: () => void;
		const first = new Promise<void>(r => (firstAnswered = r));
		let answered = 0;
		const all = Promise.all(
			Array.from({ length: count }, async (_, i) => {
				const u = users[i % users.length];
				const reply = await api
					.post("/session", { token: null, body: { login: u.username, password: u.password } })
					.catch(err => ({ status: 0, text: String(err) }) as Reply);
				answered++;
				firstAnswered();
				return reply;
			}),
		);
		await first;
		return { all, pendingNow: () => count - answered };
	}

	it("the gateway finishes the requests it took, then exits 0", async () => {
		const { all, pendingNow } = await signInsInFlight(24);
		const pending = pendingNow();
		const exit = cluster.kill("api", "SIGTERM");
		const replies = await all;
		expect(pending).toBeGreaterThan(0);
		expect(replies.map(r => r.status)).toEqual(replies.map(() => 201));
		expect(await exit).toBe(0);
		await cluster.spawnNode("api", "api");
		await cluster.waitForGatewayToSeeAll();
		await waitFor("the gateway back", async () => (await cluster.api().get("/user")).status === 200, 30000);
	}, 120000);

	it("a backend replica finishes its requests (or leaves them to the other), then exits 0", async () => {
		const { all, pendingNow } = await signInsInFlight(24);
		const pending = pendingNow();
		const exit = cluster.kill("accounts-a", "SIGTERM");
		const replies = await all;
		expect(pending).toBeGreaterThan(0);
		expect(replies.map(r => r.status)).toEqual(replies.map(() => 201));
		expect(await exit).toBe(0);
		// The other replica serves alone now.
		expect((await cluster.api().get("/user")).status).toBe(200);
	}, 120000);
});

describe("SIGTERM during an artifact upload", () => {
	let cluster: Cluster;
	const MiB = 1024 * 1024;

	beforeAll(async () => {
		cluster = await startCluster({ nodes: { api: "api", accounts: "accounts", builds: "builds" }, env: { SHUTDOWN_TIMEOUT_MS: "3000" } });
	}, 120000);

	afterAll(async () => {
		await cluster?.stop();
	});

	/** A build with a previous artifact, and an upload of the next one half way (32 of 64 MiB sent) when it resolves. */
	async function halfWayUpload() {
		const owner = await createUser(cluster.api());
		const projectId = (await createProject(client(cluster.url, owner.token))).id;
		await cluster.waitForRoute("GET", `/projects/${projectId}/builds`, owner.token);
		const ci = internalApi(cluster.url, cluster.internalSecret);
		const buildId = await ci.build({ project_id: projectId });
		expect((await ci.upload(buildId, Buffer.from("previous artifact"), "prev.zip")).status).toBe(200);
		const artifactsDir = path.join(cluster.dataDir, "artifacts");
		const tmpDir = path.join(artifactsDir, ".tmp");
		const { request: upload, outcome } = openUpload(`${cluster.url}/internal/builds/${buildId}/artifacts?filename=next.zip`, ci.headers, 64 * MiB);
		upload.write(Buffer.alloc(32 * MiB, 7));
		await waitFor("the upload to reach the store", () => Promise.resolve(filesUnder(tmpDir).length > 0), 30000, 20);
		/** The previous artifact is what the build has and serves, and the only file of the build. */
		const previousIntact = async () => {
			const build = await client(cluster.url, owner.token).get(`/projects/${projectId}/builds/${buildId}`);
			expect(build.body.artifacts_file).toEqual({ filename: "prev.zip", size: 17 });
			expect((await client(cluster.url, owner.token).get(`/projects/${projectId}/builds/${buildId}/artifacts`)).text).toBe("previous artifact");
			expect(filesUnder(path.join(artifactsDir, String(projectId), String(buildId)))).toHaveLength(1);
			expect(filesUnder(tmpDir)).toEqual([]);
		};
		return { upload, outcome, tmpDir, owner, projectId, previousIntact };
	}

	it("to builds: the upload cannot be committed, its file is removed, the previous artifact stays", async () => {
		const { upload, outcome, tmpDir, owner, projectId, previousIntact } = await halfWayUpload();
		expect(await cluster.kill("builds", "SIGTERM")).toBe(0);
		// The rest of the body arrives; the commit finds no builds service.
		upload.end(Buffer.alloc(32 * MiB, 7));
		expect(await outcome).toBe("HTTP 503");
		expect(filesUnder(tmpDir)).toEqual([]);

		await cluster.spawnNode("builds", "builds");
		await cluster.waitForRoute("GET", `/projects/${projectId}/builds`, owner.token);
		await previousIntact();
	}, 120000);

	it("to the gateway writing it: it removes the partial file before it exits 0; the previous artifact stays", async () => {
		const { upload, outcome, tmpDir, owner, projectId, previousIntact } = await halfWayUpload();
		expect(await cluster.kill("api", "SIGTERM")).toBe(0);
		expect(filesUnder(tmpDir)).toEqual([]);
		upload.destroy();
		expect(await outcome).not.toBe("HTTP 200");

		await cluster.spawnNode("api", "api");
		await cluster.waitForRoute("GET", `/projects/${projectId}/builds`, owner.token);
		await previousIntact();
	}, 120000);
});
