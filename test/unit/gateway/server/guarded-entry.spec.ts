/**
 * The one guarded entry (gateway/server/guarded-entry.ts) on a real HTTP server: a handler that throws,
 * or whose promise rejects, is answered by the error handler and the server goes on; an error
 * handler that fails itself closes the connection; bytes that are no request, and a CONNECT, are
 * answered on the socket in GitLab's JSON.
 */
import http from "http";
import type { AddressInfo } from "net";
import { toHttpError } from "../../../../gateway/server/errors";
import { guardedEntry, refuseClientError, refuseConnect, type EntryHandler } from "../../../../gateway/server/guarded-entry";
import { sendJson } from "../../../../gateway/server/responses";
import { badRequest } from "../../../../lib/api/errors";
import { exchange } from "../../../support/raw-exchange";

const refused: unknown[] = [];
const broken: unknown[] = [];
let handler: EntryHandler = () => undefined;

const entry = guardedEntry(
	(req, res, arrival) => handler(req, res, arrival),
	(req, res, err) => {
		refused.push(err);
		if ((err as Error).message === "break the error handler") throw new Error("the error handler failed");
		const { status, body } = toHttpError(err as Error);
		sendJson(res, status, body);
	},
	err => broken.push(err),
);
const server = http.createServer({ requestTimeout: 1000, headersTimeout: 1000, connectionsCheckingInterval: 100 }, entry);
server.on("clientError", refuseClientError);
server.on("connect", refuseConnect);
let port = 0;

beforeAll(async () => {
	await new Promise<void>(resolve => server.listen(0, "127.0.0.1", resolve));
	port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise(resolve => server.close(resolve)));
beforeEach(() => {
	refused.length = 0;
	broken.length = 0;
});

const get = (path = "/") => exchange(port, `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`, { timeoutMs: 10000 });
const json = (answer: { body: Buffer }) => JSON.parse(answer.body.toString("utf8"));
const serving = () => {
	handler = (req, res) => res.end("served");
};

it.each([
	[
		"throws",
		() => {
			throw new TypeError("a bug");
		},
	],
	["returns a promise that rejects", () => Promise.reject(new TypeError("a bug"))],
	[
		"rejects later, after an await",
		async () => {
			await new Promise(resolve => setImmediate(resolve));
			throw new TypeError("a bug");
		},
	],
])("a handler that %s is answered 500, and the server goes on", async (_what, failing) => {
	handler = failing;
	const answer = await get();
	expect([answer.status, json(answer)]).toEqual([500, { message: "500 Internal Server Error" }]);
	expect(refused).toEqual([new TypeError("a bug")]);
	serving();
	expect((await get()).body.toString()).toBe("served");
});

it("answers what the client sent wrong as the error handler says: 400", async () => {
	handler = () => {
		throw badRequest("400 Bad request");
	};
	const answer = await get("/%ZZ");
	expect([answer.status, json(answer)]).toEqual([400, { message: "400 Bad request" }]);
});

it("cuts an answer already under way, so that the client sees it incomplete, and goes on", async () => {
	handler = (req, res) => {
		res.writeHead(200, { "Content-Length": "100" });
		res.write("part");
		throw new TypeError("a bug mid-answer");
	};
	const cut = exchange(port, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", { timeoutMs: 10000 });
	await expect(cut).rejects.toThrow(/closed without a whole answer/);
	serving();
	expect((await get()).status).toBe(200);
});

it("closes the connection when the error answer itself fails, says so, and goes on", async () => {
	handler = () => {
		throw new Error("break the error handler");
	};
	await expect(get()).rejects.toThrow(/closed without a whole answer/);
	expect(broken).toEqual([new Error("the error handler failed")]);
	serving();
	expect((await get()).status).toBe(200);
});

it("passes on how a request arrived", async () => {
	const arrivals: string[] = [];
	handler = (req, res, arrival) => {
		arrivals.push(arrival);
		res.end();
	};
	await get();
	expect(arrivals).toEqual(["request"]);
});

describe("what never makes a request", () => {
	beforeEach(serving);

	it.each([
		["a request line that does not parse", "GET /a b c\r\n\r\n", 400, "400 Bad request"],
		["a header without a name", "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n: nameless\r\n\r\n", 400, "400 Bad request"],
		[
			"Content-Length beside Transfer-Encoding",
			"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n",
			400,
			"400 Bad request",
		],
		["a head over Node's limit", `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20 * 1024)}\r\n\r\n`, 431, "431 Request Header Fields Too Large"],
		["a CONNECT", "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n", 405, "405 Method Not Allowed"],
	])("%s is answered in JSON on the socket", async (_what, bytes, status, message) => {
		const answer = await exchange(port, bytes, { timeoutMs: 10000 });
		expect([answer.status, json(answer), answer.headers["content-type"], answer.headers.connection]).toEqual([
			status,
			{ message },
			"application/json",
			"close",
		]);
		expect(refused).toEqual([]);
		expect((await get()).status).toBe(200);
	});

	it("a head that never ends is answered 408", async () => {
		const answer = await exchange(port, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: 1\r\n", { timeoutMs: 10000 });
		expect([answer.status, json(answer)]).toEqual([408, { message: "408 Request Timeout" }]);
	});
});
