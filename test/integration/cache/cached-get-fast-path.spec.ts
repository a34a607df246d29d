/**
 * The fast path of a cached GET (gateway/edge/cached-get-fast-path.ts): on the all-in-one's in-memory
 * cache, a repeated GET is answered before moleculer-web takes the request, with the answer the
 * usual way gives (status, body, headers), counted against the user and recorded in the metrics;
 * anything it does not read, and every refusal but a 429, still goes the usual way.
 */
import { ServiceBroker, type Service } from "moleculer";
import http from "http";
import { RequestLimits } from "../../../gateway/edge/rate-limit";
import { HTTP_REQUEST_TIME, RequestMetricsMiddleware } from "../../../middlewares/request-metrics.middleware";
import AccountsService from "../../../services/accounts.service";
import ApiService from "../../../services/api.service";
import DeployKeysService from "../../../services/deploy-keys.service";
import LabelsService from "../../../services/labels.service";
import { startLocal, type LocalStack } from "../../support/broker";
import { addMember, createProject, createUser, type TestUser } from "../../support/fixtures";
import { client, type Reply } from "../../support/http";

type Gateway = Service & { httpHandler(...args: unknown[]): unknown; limits: RequestLimits };

let stack: LocalStack;
let gateway: Gateway;
let owner: TestUser;
let developer: TestUser;
let project: { id: number; path_with_namespace: string };
const as = (user: TestUser) => client(stack.url, user.token);
const labelsPath = () => `/projects/${project.id}/labels`;

/** How many requests went moleculer-web's way while `run` ran. */
async function usualWay<T>(run: () => Promise<T>): Promise<{ result: T; usual: number }> {
	const spy = jest.spyOn(gateway, "httpHandler");
	try {
		const result = await run();
		return { result, usual: spy.mock.calls.length };
	} finally {
		spy.mockRestore();
	}
}

/** A GET with a JSON body (fetch sends none with a GET). */
function getWithBody(path: string, token: string, body: string): Promise<Reply> {
	return new Promise((resolve, reject) => {
		const headers = { "PRIVATE-TOKEN": token, "Content-Type": "application/json", "Content-Length": String(Buffer.byteLength(body)) };
		const req = http.request(`${stack.url}${path}`, { method: "GET", headers }, res => {
			let text = "";
			res.setEncoding("utf8");
			res.on("data", (chunk: string) => (text += chunk));
			res.on("end", () => {
				const headers = new Headers(res.headers as Record<string, string>);
				resolve({ status: res.statusCode!, headers, body: JSON.parse(text), text });
			});
		});
		req.on("error", reject);
		req.end(body);
	});
}

const countOf = (status: string) =>
	(stack.broker.metrics.getMetric(HTTP_REQUEST_TIME)!.snapshot() as Array<{ labels: { status?: string }; count?: number }>)
		.filter(v => v.labels.status === status)
		.reduce((sum, v) => sum + (v.count ?? 0), 0);

/** What two answers of the same request must share (the request id, the date and the remaining count differ). */
function sameAnswer(fast: Reply, usual: Reply) {
	expect(fast.status).toBe(usual.status);
	expect(fast.text).toBe(usual.text);
	for (const name of ["content-type", "content-length", "ratelimit-limit", "x-rate-limit-limit", "connection"])
		expect([name, fast.headers.get(name)]).toEqual([name, usual.headers.get(name)]);
	expect(fast.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
	expect(Number(fast.headers.get("ratelimit-remaining"))).toBeLessThan(Number(usual.headers.get("ratelimit-remaining")));
}

beforeAll(async () => {
	stack = await startLocal([ApiService, AccountsService, LabelsService, DeployKeysService], {
		cacher: { type: "MemoryLRU", options: { max: 1000 } },
		// The production metrics: the gateway's HTTP histogram (moleculer.config.ts).
		metrics: { enabled: true },
		internalMiddlewares: false,
		middlewares: ServiceBroker.INTERNAL_MIDDLEWARES.map(name => (name === "Metrics" ? RequestMetricsMiddleware() : name)),
	});
	gateway = stack.broker.getLocalService("api") as Gateway;
	owner = await createUser(stack.api());
	developer = await createUser(stack.api());
	project = await createProject(as(owner));
	await addMember(as(owner), project.id, developer.id, 30);
	for (const name of ["bug", "feature"]) expect((await as(owner).post(labelsPath(), { body: { name, color: "#428bca" } })).status).toBe(200);
});
afterAll(() => stack?.stop());

it("answers a repeated cached GET itself, exactly as the usual way answered it, counted and recorded", async () => {
	const first = await usualWay(() => as(owner).get(labelsPath()));
	expect(first.usual).toBe(1);
	expect(first.result.status).toBe(200);
	expect(first.result.body.map((l: { name: string }) => l.name)).toEqual(["bug", "feature"]);

	const recorded = countOf("200");
	const again = await usualWay(() => as(owner).get(labelsPath()));
	expect(again.usual).toBe(0);
	sameAnswer(again.result, first.result);
	expect(countOf("200")).toBe(recorded + 1);

	// By path with namespace, and with a trailing slash: the same route and answer, once the access
	// look-up of that path is in the cache too.
	const byPathUrl = `/projects/${encodeURIComponent(project.path_with_namespace)}/labels/`;
	expect((await usualWay(() => as(owner).get(byPathUrl))).usual).toBe(1);
	const byPath = await usualWay(() => as(owner).get(byPathUrl));
	expect(byPath.usual).toBe(0);
	expect(byPath.result.text).toBe(first.result.text);

	// A HEAD is told the GET's length, without the body.
	const head = await usualWay(() => as(owner).request("HEAD", labelsPath()));
	expect(head.usual).toBe(0);
	expect(head.result.status).toBe(200);
	expect(head.result.headers.get("content-length")).toBe(first.result.headers.get("content-length"));
	expect(head.result.text).toBe("");

	// The request id a client sends comes back, as moleculer-web sends it back.
	const named = await usualWay(() => as(owner).get(labelsPath(), { headers: { "X-Request-ID": "trace-42" } }));
	expect(named.usual).toBe(0);
	expect(named.result.headers.get("x-request-id")).toBe("trace-42");
});

it("leaves to the usual way every request with something it does not read", async () => {
	await as(owner).get(labelsPath());
	const admin = stack.api();
	const cases: Array<[string, () => Promise<Reply>, number]> = [
		["a query string", () => as(owner).get(labelsPath(), { query: { per_page: 20 } }), 200],
		["a token in the query", () => client(stack.url).get(labelsPath(), { query: { private_token: owner.token } }), 200],
		["a sudo", () => admin.get(labelsPath(), { headers: { Sudo: owner.username } }), 200],
		["a conditional request", () => as(owner).get(labelsPath(), { headers: { "If-None-Match": '"x"' } }), 200],
		["a body", () => getWithBody(labelsPath(), owner.token, JSON.stringify({ per_page: 20 })), 200],
		["a made-up token", () => client(stack.url, "made-up-token-000000").get(labelsPath()), 401],
		["no token", () => client(stack.url).get(labelsPath()), 401],
		["a project that is not there", () => as(owner).get("/projects/999999/labels"), 404],
	];
	for (const [what, request, status] of cases) {
		await request(); // whatever the first one fills
		const { result, usual } = await usualWay(request);
		expect([what, result.status, usual]).toEqual([what, status, 1]);
	}
});

it("never answers a caller below the level the action asks, even with the answer in the cache", async () => {
	const keysPath = `/projects/${project.id}/keys`;
	expect((await as(owner).get(keysPath)).status).toBe(200); // the master's answer is in the cache
	await as(developer).get(labelsPath()); // the developer's token and access are known
	for (let i = 0; i < 2; i++) {
		const { result, usual } = await usualWay(() => as(developer).get(keysPath));
		expect(result.status).toBe(403);
		expect(result.body).toEqual({ message: "403 Forbidden" });
		expect(usual).toBe(1);
	}
});

it("after a write has cleaned the entry, goes the usual way once, with the new answer", async () => {
	await as(owner).get(labelsPath());
	expect((await as(owner).post(labelsPath(), { body: { name: "docs", color: "#428bca" } })).status).toBe(200);
	const after = await usualWay(() => as(owner).get(labelsPath()));
	expect(after.usual).toBe(1);
	expect(after.result.body.map((l: { name: string }) => l.name)).toEqual(["bug", "docs", "feature"]);
	const again = await usualWay(() => as(owner).get(labelsPath()));
	expect(again.usual).toBe(0);
	expect(again.result.text).toBe(after.result.text);
});

it("refuses past the limit with the usual 429, and counts nothing for a request it left to the usual way", async () => {
	const saved = gateway.limits;
	const limits = new RequestLimits(null, { prefix: `fast-path-${process.pid}`, perMinute: 3, authFailures: 5 });
	gateway.limits = limits;
	try {
		const fast: Reply[] = [];
		for (let i = 0; i < 4; i++) {
			const { result, usual } = await usualWay(() => as(owner).get(labelsPath()));
			expect(usual).toBe(0);
			fast.push(result);
		}
		expect(fast.map(r => r.status)).toEqual([200, 200, 200, 429]);
		const usual = await usualWay(() => as(owner).get(labelsPath(), { query: { per_page: 20 } }));
		expect(usual.usual).toBe(1);
		const [refused, usualRefusal] = [fast[3], usual.result];
		expect(usualRefusal.status).toBe(429);
		expect(refused.body).toEqual(usualRefusal.body);
		for (const name of ["content-type", "ratelimit-limit", "ratelimit-remaining", "retry-after"])
			expect([name, refused.headers.get(name)]).toEqual([name, usualRefusal.headers.get(name)]);
		expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
	} finally {
		gateway.limits = saved;
	}
});
