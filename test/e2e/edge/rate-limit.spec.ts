/**
 * Rate limiting per token, shared by every gateway replica through Redis: two gateway processes
 * in front of one accounts service count the same token together. A request over the limit is
 * refused before anything is looked up for it.
 */
import Redis from "ioredis";
import { startCluster, type Cluster } from "../../support/cluster";
import { client } from "../../support/http";
import { createProject, createUser, type TestUser } from "../../support/fixtures";
import { REDIS_URL } from "../../support/servers";

const LIMIT = 6;
let cluster: Cluster;
let secondGateway: string;
let user: TestUser;
let other: TestUser;
let owner: TestUser;
let publicProject: { id: number };

beforeAll(async () => {
	cluster = await startCluster({ nodes: { api: "api", accounts: "accounts" }, env: { RATE_LIMIT_PER_MINUTE: "1000" } });
	user = await createUser(cluster.api());
	other = await createUser(cluster.api());
	owner = await createUser(cluster.api());
	publicProject = await createProject(cluster.api(), { visibility_level: 20 });
	// A second replica of the gateway on its own port, same Redis.
	const { freePort } = await import("../../support/processes");
	const port = await freePort();
	await cluster.spawnNode("api2", "api", { PORT: String(port), RATE_LIMIT_PER_MINUTE: String(LIMIT) });
	await cluster.kill("api");
	await cluster.spawnNode("api", "api", { RATE_LIMIT_PER_MINUTE: String(LIMIT) });
	secondGateway = `http://127.0.0.1:${port}/api/v3`;
}, 90000);

afterAll(() => cluster?.stop());

/** The limit is a fixed one-minute window: start a burst well inside one. */
async function insideOneWindow() {
	const left = 60000 - (Date.now() % 60000);
	if (left < 10000) await new Promise(r => setTimeout(r, left + 100));
}

it("counts one token across both replicas and answers 429 beyond the limit", async () => {
	await insideOneWindow();
	const gateways = [client(cluster.url, user.token), client(secondGateway, user.token)];
	const statuses: number[] = [];
	for (let i = 0; i < LIMIT + 3; i++) statuses.push((await gateways[i % 2].get("/user")).status);
	expect(statuses).toEqual([...Array(LIMIT).fill(200), 429, 429, 429]);
	const limited = await gateways[0].get("/user");
	expect(limited.body).toEqual({ message: "429 Too Many Requests" });
	expect(limited.headers.get("x-rate-limit-limit")).toBe(String(LIMIT));
	expect(limited.headers.get("x-rate-limit-remaining")).toBe("0");

	// Another token has its own budget.
	expect((await client(secondGateway, other.token).get("/user")).status).toBe(200);
});

it("answers 429 on project routes before the project is looked up", async () => {
	await insideOneWindow();
	const api = client(cluster.url, owner.token);
	// The owner's own project: its access is looked up (and cached) while there is budget.
	const ownersProject = await createProject(api);
	expect((await api.get(`/projects/${ownersProject.id}`)).status).toBe(200);
	const statuses: number[] = [];
	for (let i = 2; i < LIMIT; i++) statuses.push((await api.get("/user")).status);
	expect(statuses).toEqual(Array(LIMIT - 2).fill(200));

	// Over the limit: 429 whether the access is cached, never looked up, or no project at all.
	for (const ref of [ownersProject.id, publicProject.id, "x".repeat(300)]) {
		const reply = await api.get(`/projects/${ref}/members`);
		expect([reply.status, reply.body]).toEqual([429, { message: "429 Too Many Requests" }]);
		expect(reply.headers.get("ratelimit-remaining")).toBe("0");
	}
	// The limited requests had accounts look nothing up: no access entry for the public project,
	// which the owner may read and had not read before (a look-up would have cached one, as the
	// owner's own project's is).
	const redis = new Redis(REDIS_URL);
	try {
		const accessKey = (project: number) => `MOL-${cluster.namespace}-accounts.projectAccess:"${project}"|${owner.id}|false`;
		expect(await redis.exists(accessKey(ownersProject.id))).toBe(1);
		expect(await redis.exists(accessKey(publicProject.id))).toBe(0);
	} finally {
		redis.disconnect();
	}
});
