/**
 * The gateway's server (gateway/server/http-server.ts) on a route table of its own: OPTIONS and
 * `Expect: 100-continue` read the routes through the same resolution as everything else, and
 * whatever way a request arrives (a request, a wait for 100 Continue, another Expect, an upgrade)
 * it goes through the one guarded entry, so a path that does not decode is a 400 every way.
 */
import { randomUUID } from "crypto";
import type { IncomingMessage, ServerResponse } from "http";
import type { AddressInfo } from "net";
import { toHttpError } from "../../../../gateway/server/errors";
import { createHardenedServer, isHead, sendContinue } from "../../../../gateway/server/http-server";
import { requestIdOf } from "../../../../gateway/server/request-id";
import { sendJson } from "../../../../gateway/server/responses";
import { Routing, SENDS_CONTINUE, type FoundRoute } from "../../../../gateway/server/routing";
import { loadConfig } from "../../../../config";
import { startTelemetry, stopTelemetry } from "../../../../lib/tracing/telemetry";
import { exchange, type RawAnswer } from "../../../support/raw-exchange";
import { SpanCollector } from "../../../support/span-collector";

/** `/things/:id` (GET, PUT) and `/uploads/:id` (PUT, sending 100 Continue itself); a segment is decoded as moleculer-web decodes it. */
function resolve(path: string, method: string): FoundRoute | false {
	const m = /^\/(things|uploads)\/([^/]+)$/.exec(path);
	if (!m) return false;
	const upload = m[1] === "uploads";
	if (!(upload ? ["PUT"] : ["GET", "PUT"]).includes(method)) return false;
	const handler = upload ? Object.assign(() => undefined, { [SENDS_CONTINUE]: true }) : undefined;
	return { alias: { path: `${m[1]}/:id`, fullPath: `/${m[1]}/:id`, handler }, params: { id: decodeURIComponent(m[2]) } };
}

const routed: string[] = [];
const server = createHardenedServer(
	{ headersTimeoutMs: 5000, requestTimeoutMs: 10000, idleTimeoutMs: 10000, maxConnections: 50, maxBodyBytes: 1000 },
	{
		route(req: IncomingMessage, res: ServerResponse) {
			routed.push(`${req.method}${isHead(req) ? " (HEAD)" : ""} ${req.url}`);
			sendContinue(req);
			req.resume();
			req.on("end", () => res.end("routed"));
		},
		refuse(req, res, err) {
			const { status, body, headers } = toHttpError(err as Error);
			sendJson(res, status, body, headers);
		},
		onBroken: () => undefined,
		routes: new Routing(resolve),
		requestId: req => requestIdOf(req, randomUUID),
	},
);
let port = 0;

beforeAll(async () => {
	await new Promise<void>(done => server.listen(0, "127.0.0.1", done));
	port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise(done => server.close(done)));
beforeEach(() => (routed.length = 0));

const send = (head: string, opts: { body?: string; head?: boolean } = {}) =>
	exchange(port, `${head}\r\nHost: 127.0.0.1\r\n\r\n${opts.body ?? ""}`, { timeoutMs: 10000, head: opts.head });
const summary = (answer: RawAnswer) => [answer.status, answer.interim, answer.body.toString("utf8")];

it("answers OPTIONS from the route table, and refuses an unknown path or one that does not decode", async () => {
	const options = await send("OPTIONS /things/1/ HTTP/1.1");
	expect([options.status, options.headers.allow]).toEqual([204, "OPTIONS, GET, HEAD, PUT"]);
	expect(summary(await send("OPTIONS /nothing HTTP/1.1"))).toEqual([404, [], '{"error":"404 Not Found"}']);
	expect(summary(await send("OPTIONS /things/%C3%28 HTTP/1.1"))).toEqual([400, [], '{"message":"400 Bad request"}']);
	expect(routed).toEqual([]);
});

it("routes a HEAD as a GET, without its body", async () => {
	const head = await send("HEAD /things/1 HTTP/1.1", { head: true });
	expect([head.status, head.body.length]).toEqual([200, 0]);
	expect(routed).toEqual(["GET (HEAD) /things/1"]);
});

it("sends 100 Continue unless the route sends its own; none for a body too large or a path that does not decode", async () => {
	const put = (path: string, length: number) => `PUT ${path} HTTP/1.1\r\nContent-Length: ${length}\r\nExpect: 100-continue`;
	expect(summary(await send(put("/things/1", 2), { body: "{}" }))).toEqual([200, [100], "routed"]);
	expect(summary(await send(put("/uploads/1", 2), { body: "{}" }))).toEqual([200, [100], "routed"]);
	expect(summary(await send(put("/things/1", 5000)))).toEqual([413, [], '{"message":"413 Request Entity Too Large"}']);
	expect(summary(await send(put("/things/%E0%A4%A", 2)))).toEqual([400, [], '{"message":"400 Bad request"}']);
	expect(routed).toEqual(["PUT /things/1", "PUT /uploads/1"]);
});

it("refuses any other Expect with 417", async () => {
	expect(summary(await send("GET /things/1 HTTP/1.1\r\nExpect: 200-ok"))).toEqual([417, [], '{"message":"417 Expectation Failed"}']);
	expect(routed).toEqual([]);
});

it("answers an Upgrade request as a plain request", async () => {
	expect(summary(await send("GET /things/1 HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket"))).toEqual([200, [], "routed"]);
	expect(routed).toEqual(["GET /things/1"]);
});

it("refuses an HTTP/1.1 request without Host in GitLab's words; HTTP/1.0 needs none", async () => {
	const bare = (head: string) => exchange(port, `${head}\r\n\r\n`, { timeoutMs: 10000 });
	expect(summary(await bare("GET /things/1 HTTP/1.1"))).toEqual([400, [], '{"message":"400 Bad request"}']);
	expect(summary(await bare("GET /things/1 HTTP/1.0"))).toEqual([200, [], "routed"]);
});

it("says nosniff on every answer", async () => {
	for (const head of ["GET /things/1 HTTP/1.1", "OPTIONS /things/1 HTTP/1.1", "OPTIONS /nothing HTTP/1.1"])
		expect([head, (await send(head)).headers["x-content-type-options"]]).toEqual([head, "nosniff"]);
});

it("names and traces every request once on its way in, whichever way it arrives and whatever its answer", async () => {
	const collector = new SpanCollector();
	startTelemetry(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" }).tracing, { services: ["api"], nodeID: "api-1" }, collector);
	try {
		const id = (n: number) => `X-Request-ID: req-${n}`;
		const answers = [
			await send(`GET /things/1 HTTP/1.1\r\n${id(1)}`),
			await send(`HEAD /things/1 HTTP/1.1\r\n${id(2)}`, { head: true }),
			await send(`OPTIONS /things/1 HTTP/1.1\r\n${id(3)}`),
			await send(`OPTIONS /things/%C3%28 HTTP/1.1\r\n${id(4)}`),
			await send(`PUT /uploads/1 HTTP/1.1\r\n${id(5)}\r\nContent-Length: 2\r\nExpect: 100-continue`, { body: "{}" }),
			await send(`GET /things/1 HTTP/1.1\r\n${id(6)}\r\nExpect: 200-ok`),
			await send(`GET /things/1 HTTP/1.1\r\n${id(7)}\r\nConnection: Upgrade\r\nUpgrade: websocket`),
			await exchange(port, `GET /things/1 HTTP/1.1\r\n${id(8)}\r\n\r\n`, { timeoutMs: 10000 }),
		];
		expect(answers.map(a => a.status)).toEqual([200, 200, 204, 400, 200, 417, 200, 400]);
		const spans = await collector.take();
		const byId = (n: number) => spans.filter(s => s.attributes.correlation_id === `req-${n}`).map(s => [s.name, s.attributes["http.response.status_code"]]);
		expect([1, 2, 3, 4, 5, 6, 7, 8].map(byId)).toEqual([
			[["GET /things/:id", 200]],
			[["HEAD /things/:id", 200]],
			[["OPTIONS /things/:id", 204]],
			[["OPTIONS", 400]],
			[["PUT /uploads/:id", 200]],
			[["GET /things/:id", 417]],
			[["GET /things/:id", 200]],
			[["GET /things/:id", 400]],
		]);
		expect(spans).toHaveLength(8);
	} finally {
		await stopTelemetry();
	}
});
