/**
 * Rate limiting per token, shared by every gateway replica through Redis: two gateway processes
 * in front of one accounts service count the same token together.
 */
import { startCluster, type Cluster } from "../support/cluster";
import { client } from "../support/http";
import { createUser, type TestUser } from "../support/fixtures";

const LIMIT = 6;
let cluster: Cluster;
let secondGateway: string;
let user: TestUser;
let other: TestUser;

beforeAll(async () => {
	cluster = await startCluster({ nodes: { api: "api", accounts: "accounts" }, env: { RATE_LIMIT_PER_MINUTE: "1000" } });
	user = await createUser(cluster.api());
	other = await createUser(cluster.api());
	// A second replica of the gateway on its own port, same Redis.
	const { freePort } = await import("../support/processes");
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
