/**
 * Requests that once ended a process, kept as tests: the five malformed percent-escapes that reached
 * the gateway's own route resolution outside any error handling (the OPTIONS answer, the
 * `Expect: 100-continue` check and the fast path of a cached GET each resolved routes themselves),
 * each other way a request comes in (an upgrade, another Expect, bytes that are no request, a
 * CONNECT), and every case the fuzzers found since (test/e2e/edge/fuzz-bytes.spec.ts). In `npm start`'s
 * shape and split: each is a GitLab-style 4xx, and afterwards every process is up and serving, with
 * nothing unexpected in its log (docs/architecture.md#the-guarded-entry).
 */
import { startCluster, type Cluster } from "../../support/cluster";
import { exchange } from "../../support/raw-exchange";

const BAD_REQUEST = { message: "400 Bad request" };

/** A raw request: the request line and headers as given (with Host), `body` after them. */
const raw = (line: string, headers: string[] = [], body = "") => [line, "Host: 127.0.0.1", ...headers, "", body].join("\r\n");

interface Case {
	what: string;
	request: (token: string) => string;
	head?: boolean;
	status: number;
	body?: object;
}

const CASES: Case[] = [
	{
		what: "OPTIONS on a path with an invalid UTF-8 escape, no token",
		request: () => raw("OPTIONS /api/v3/projects/%C3%28/labels HTTP/1.1"),
		status: 400,
		body: BAD_REQUEST,
	},
	{
		what: "OPTIONS on a path with a non-hex escape, no token",
		request: () => raw("OPTIONS /api/v3/projects/1/snippets/%ZZ/raw HTTP/1.1"),
		status: 400,
		body: BAD_REQUEST,
	},
	{
		what: "a POST waiting for 100 Continue on a path with a cut escape, no token",
		request: () => raw("POST /api/v3/projects/%E0%A4%A/labels HTTP/1.1", ["Content-Type: application/json", "Content-Length: 2", "Expect: 100-continue"]),
		status: 400,
		body: BAD_REQUEST,
	},
	{
		what: "a HEAD with a non-hex escape, a token seen before",
		request: token => raw("HEAD /api/v3/projects/1/snippets/%ZZ HTTP/1.1", [`PRIVATE-TOKEN: ${token}`]),
		head: true,
		status: 400,
	},
	{
		what: "a GET with an overlong UTF-8 escape, a token seen before",
		request: token => raw("GET /api/v3/users/%C0%AF HTTP/1.1", [`PRIVATE-TOKEN: ${token}`]),
		status: 400,
		body: BAD_REQUEST,
	},
	// The other ways in: each answered in GitLab's words by the one entry, or on the socket.
	{
		what: "an Upgrade: websocket request with a non-hex escape",
		request: token => raw("GET /api/v3/projects/%ZZ/labels HTTP/1.1", [`PRIVATE-TOKEN: ${token}`, "Connection: Upgrade", "Upgrade: websocket"]),
		status: 400,
		body: BAD_REQUEST,
	},
	{
		what: "an Expect other than 100-continue",
		request: token => raw("GET /api/v3/user HTTP/1.1", [`PRIVATE-TOKEN: ${token}`, "Expect: 200-ok"]),
		status: 417,
		body: { message: "417 Expectation Failed" },
	},
	{ what: "bytes that are no request", request: () => "GET /api/v3/user HTTP/1.1\r\n: no name\r\n\r\n", status: 400, body: BAD_REQUEST },
	{ what: "a CONNECT", request: () => raw("CONNECT 127.0.0.1:22 HTTP/1.1"), status: 405, body: { message: "405 Method Not Allowed" } },
	// Found by the byte fuzzer: Node answered it with a bare 400 of its own, before the gateway saw it.
	{
		what: "an HTTP/1.1 request without Host",
		request: token => `POST /api/v3/session HTTP/1.1\r\nPRIVATE-TOKEN: ${token}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`,
		status: 400,
		body: BAD_REQUEST,
	},
];

describe.each([
	["npm start's shape (one process)", { all: "" }, false],
	["split over NATS", { api: "api", backend: "accounts,labels,snippets" }, true],
] as const)("%s", (_shape, nodes, nats) => {
	let cluster: Cluster;

	beforeAll(async () => {
		cluster = await startCluster({ nodes: { ...nodes }, nats });
		// The token is seen before: the all-in-one keeps its owner, and its fast path takes the GETs.
		expect((await cluster.api().get("/user")).status).toBe(200);
	}, 120000);

	afterAll(async () => {
		await cluster?.stop();
	});

	it.each(CASES.map(c => [c.what, c] as const))("%s: answered, and the process goes on", async (_what, c) => {
		const answer = await exchange(cluster.port, c.request(cluster.rootToken), { timeoutMs: 15000, head: c.head });
		expect(answer.status).toBe(c.status);
		expect(answer.interim).toEqual([]);
		expect(answer.headers["content-type"]).toBe("application/json");
		expect(answer.headers["x-content-type-options"]).toBe("nosniff");
		if (c.body) expect(JSON.parse(answer.body.toString("utf8"))).toEqual(c.body);
		else expect(answer.body.length).toBe(0);
		expect((await cluster.api().get("/user")).status).toBe(200);
	});

	it("every process is still up, and logged nothing unexpected", () => {
		for (const [name, node] of cluster.nodes) expect([name, node.child.exitCode, node.child.signalCode]).toEqual([name, null, null]);
		const logs = [...cluster.nodes.keys()].map(name => cluster.logs(name)).join("");
		expect(logs).not.toMatch(/Unexpected error|UnhandledPromiseRejection|uncaughtException|BadRequestError/);
	});
});
