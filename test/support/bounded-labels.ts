/**
 * A project's labels read and made through the gateway with a bound on each answer, for the tests
 * that take Redis away: a request that waits on a lost, dead or frozen Redis fails the test
 * instead of hanging it.
 */
import type { Cluster } from "./cluster";
import { createProject, createUser, type TestUser } from "./fixtures";
import { client } from "./http";

const CLIENT_TIMEOUT_MS = 8000;

function bounded<T>(work: Promise<T>, what: string): Promise<T> {
	let timer: NodeJS.Timeout;
	const limit = new Promise<never>(
		(_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer within ${CLIENT_TIMEOUT_MS} ms`)), CLIENT_TIMEOUT_MS)),
	);
	return Promise.race([work, limit]).finally(() => clearTimeout(timer));
}

/** The project's label names, as the gateway lists them (200). */
export async function labelNames(url: string, token: string, projectId: number): Promise<string[]> {
	const res = await bounded(client(url, token).get(`/projects/${projectId}/labels`), "GET labels");
	if (res.status !== 200) throw new Error(`GET labels: ${res.status} ${res.text}`);
	return (res.body as { name: string }[]).map(l => l.name);
}

/** Makes a label; GitLab v3 answers its creation with 200 (docs/api.md#labels). */
export async function createLabel(url: string, token: string, projectId: number, name: string): Promise<void> {
	const res = await bounded(client(url, token).post(`/projects/${projectId}/labels`, { body: { name, color: "#123456" } }), "POST label");
	const body = res.body as { name?: unknown; color?: unknown; description?: unknown };
	// Plain code: the bench's build compiles test/support without jest.
	if (res.status !== 200 || body.name !== name || body.color !== "#123456" || body.description !== null)
		throw new Error(`POST label: ${res.status} ${res.text}`);
}

/** A new user's project on the cluster, its labels route served, holding one label: `before`. */
export async function labelledProject(cluster: Cluster): Promise<{ owner: TestUser; projectId: number }> {
	const owner = await createUser(cluster.api());
	const projectId = (await createProject(client(cluster.url, owner.token))).id;
	await cluster.waitForRoute("GET", `/projects/${projectId}/labels`, owner.token);
	await createLabel(cluster.url, owner.token, projectId, "before");
	return { owner, projectId };
}
