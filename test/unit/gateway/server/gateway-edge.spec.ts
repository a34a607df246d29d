/** The gateway's edge, pure parts: who the client is, what a body may be, where links point, what a 429 says. */
import type { ServerResponse } from "http";
import { Errors } from "moleculer";
import { invalidBody, jsonTooDeep, MAX_JSON_DEPTH, parseForm, parseJson, parseMultipart } from "../../../../gateway/server/body";
import { clientAddress, normalizeAddress, trustedProxyList } from "../../../../gateway/server/client-address";
import { toHttpError } from "../../../../gateway/server/errors";
import { isValidHost, linkBase, safePath } from "../../../../gateway/server/link-base";
import { writeLimitHeaders } from "../../../../gateway/edge/rate-limit";
import { ApiError, tooManyRequests } from "../../../../lib/api/errors";
import { growingBlockSeconds } from "../../../../lib/api/rate-limiter";
import { loadConfig } from "../../../../config";
import { costRatio } from "../../../support/timing";

const req = (peer: string, forwarded?: string) => ({
	headers: forwarded === undefined ? {} : { "x-forwarded-for": forwarded },
	socket: { remoteAddress: peer },
});

describe("the client address", () => {
	const none = trustedProxyList([]);
	const ingress = trustedProxyList(["10.0.0.0/8", "fd00::/8"]);

	it("is the direct peer when no proxy is trusted, whatever X-Forwarded-For says", () => {
		expect(clientAddress(req("203.0.113.9", "1.2.3.4"), none)).toBe("203.0.113.9");
		expect(clientAddress(req("::ffff:127.0.0.1", "1.2.3.4, 5.6.7.8"), none)).toBe("127.0.0.1");
	});

	it("is the right-most untrusted hop behind a trusted proxy", () => {
		expect(clientAddress(req("10.1.2.3", "198.51.100.7"), ingress)).toBe("198.51.100.7");
		// The client wrote the first hop itself: it is not believed.
		expect(clientAddress(req("10.1.2.3", "1.1.1.1, 198.51.100.7"), ingress)).toBe("198.51.100.7");
		expect(clientAddress(req("10.1.2.3", "198.51.100.7, 10.9.9.9"), ingress)).toBe("198.51.100.7");
		expect(clientAddress(req("fd00::1", "2001:db8::5"), ingress)).toBe("2001:db8::5");
	});

	it("is one list for the same ranges, so every reader of a connection shares its worked-out peer", () => {
		expect(trustedProxyList(["10.0.0.0/8", "fd00::/8"])).toBe(ingress);
		expect(trustedProxyList([])).toBe(none);
		expect(trustedProxyList(["10.0.0.0/8"])).not.toBe(ingress);
	});

	it("falls back to the peer on a malformed or missing header", () => {
		expect(clientAddress(req("10.1.2.3", "not-an-ip"), ingress)).toBe("10.1.2.3");
		expect(clientAddress(req("10.1.2.3"), ingress)).toBe("10.1.2.3");
		expect(clientAddress(req("10.1.2.3", "1.1.1.1, garbage, 10.2.2.2"), ingress)).toBe("10.1.2.3");
	});

	it("reads each request's X-Forwarded-For on a kept-alive connection, whose peer it works out once", () => {
		const socket = { remoteAddress: "10.1.2.3" };
		expect(clientAddress({ headers: { "x-forwarded-for": "198.51.100.7" }, socket }, ingress)).toBe("198.51.100.7");
		expect(clientAddress({ headers: { "x-forwarded-for": "198.51.100.8" }, socket }, ingress)).toBe("198.51.100.8");
		expect(clientAddress({ headers: {}, socket }, ingress)).toBe("10.1.2.3");
		// Another list of trusted proxies (another gateway in the same process) decides afresh.
		expect(clientAddress({ headers: { "x-forwarded-for": "198.51.100.7" }, socket }, none)).toBe("10.1.2.3");
	});

	it("spells IPv4-mapped addresses as IPv4", () => {
		expect(normalizeAddress("::ffff:192.0.2.1")).toBe("192.0.2.1");
		expect(normalizeAddress("2001:db8::1")).toBe("2001:db8::1");
	});

	it("takes TRUSTED_PROXIES as addresses and CIDR blocks, and nothing else", () => {
		expect(loadConfig({ TRUSTED_PROXIES: "10.0.0.0/8, 192.0.2.7,fd00::/8" }).trustedProxies).toEqual(["10.0.0.0/8", "192.0.2.7/32", "fd00::/8"]);
		expect(loadConfig({}).trustedProxies).toEqual([]);
		for (const bad of ["10.0.0.0/33", "example.com", "10.0.0.0/8/1", "::1/129"])
			expect(() => loadConfig({ TRUSTED_PROXIES: bad })).toThrow(/TRUSTED_PROXIES/);
	});
});

describe("multipart bodies", () => {
	const TYPE = "multipart/form-data; boundary=XyZ";
	const part = (name: string, value: string, extra = "") => `--XyZ\r\nContent-Disposition: form-data; name="${name}"${extra}\r\n\r\n${value}\r\n`;

	it("give their text fields as a form would, nested names and UTF-8 included; file parts are not read", async () => {
		const body = Buffer.from(
			part("name", "ünïcode bug") +
				part("color", "#ff0000") +
				part("labels[]", "a") +
				part("labels[]", "b") +
				part("code", "secret file bytes", '; filename="x.rb"\r\nContent-Type: application/octet-stream') +
				part("__proto__[admin]", "true") +
				"--XyZ--\r\n",
		);
		expect(await parseMultipart(body, TYPE)).toEqual({ name: "ünïcode bug", color: "#ff0000", labels: ["a", "b"] });
	});

	it("answer 400 in GitLab's words without a boundary or with parts that do not parse", async () => {
		const invalid = (message: string) => expect.objectContaining({ code: 400, data: { body: { message } } });
		await expect(parseMultipart(Buffer.from(part("name", "x") + "--XyZ--"), "multipart/form-data")).rejects.toEqual(
			invalid("400 Bad Request - a multipart body needs a boundary in its Content-Type"),
		);
		await expect(parseMultipart(Buffer.from('--XyZ\r\nContent-Disposition: form-data; name="name"\r\n\r\nno end'), TYPE)).rejects.toEqual(
			invalid("400 Bad Request - the multipart body does not parse"),
		);
	});
});

describe("JSON bodies", () => {
	it("refuse nesting deeper than MAX_JSON_DEPTH before parsing, strings aside", () => {
		expect(jsonTooDeep("[".repeat(MAX_JSON_DEPTH) + "]".repeat(MAX_JSON_DEPTH), MAX_JSON_DEPTH)).toBe(false);
		expect(jsonTooDeep("[".repeat(MAX_JSON_DEPTH + 1) + "]".repeat(MAX_JSON_DEPTH + 1), MAX_JSON_DEPTH)).toBe(true);
		expect(jsonTooDeep(JSON.stringify({ a: "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[", b: '\\"{{{{' }), 2)).toBe(false);
		expect(() => parseJson("[".repeat(10_000) + "]".repeat(10_000))).toThrow(ApiError);
	});

	it("refuse __proto__ keys, however they are spelled", () => {
		for (const text of [
			'{"__proto__":{"admin":true}}',
			'{"a":{"__proto__":1}}',
			'{"\\u005f_proto__":{"x":1}}',
			'[1,{"a":[[{"b":null}],{"\\u005F\\u005Fproto\\u005F\\u005F":null}]}]',
		])
			expect(() => parseJson(text)).toThrow(expect.objectContaining({ code: 400 }));
		expect(parseJson('{"constructor":{"prototype":1},"proto":2}')).toEqual({ constructor: { prototype: 1 }, proto: 2 });
		expect(parseJson('{"title":"\\u00e9t\\u00e9","tags":["__proto__"]}')).toEqual({ title: "été", tags: ["__proto__"] });
	});

	it("take an object's fields only: an array, a string, a number or null names no parameter, as Grape reads it", () => {
		for (const text of ["[]", '[{"name":"bug"}]', '"bug"', "42", "true", "null"]) expect(parseJson(text)).toEqual({});
		expect(parseJson('{"name":"bug"}')).toEqual({ name: "bug" });
	});

	it("cost about what JSON.parse costs, whatever the shape of the body (no per-value callback)", () => {
		// One 1 MiB body of many small values and one escape: the check must walk it, not call back per value.
		const bodies = ['{"a":"\\u0041","b":[' + "0,".repeat(500_000) + "0]}", '{"b":[' + "{},".repeat(250_000) + "{}]}"];
		for (const body of bodies) {
			const ratio = costRatio(
				() => parseJson(body),
				() => JSON.parse(body),
			);
			// A reviver made this ×16–48; the depth scan and the walk add about one parse.
			expect(ratio).toBeLessThan(6);
		}
	});

	it("answer 400 in GitLab's words for what does not parse, and {} for nothing", () => {
		let thrown: unknown;
		try {
			parseJson('{"title": "x",');
		} catch (err) {
			thrown = err;
		}
		expect(toHttpError(thrown as ApiError)).toEqual({
			status: 400,
			body: {
				message:
					"400 Bad Request - the body is not valid JSON: expected a property name in double quotes, found the end of the body (line 1, column 15)",
			},
			unexpected: false,
		});
		expect(toHttpError(invalidBody("why"))).toEqual({ status: 400, body: { message: "400 Bad Request - why" }, unexpected: false });
		expect(parseJson("  ")).toEqual({});
	});

	it("parse forms without prototypes and within qs' bounds", () => {
		const form = parseForm("a[b][c][d][e][f][g][h]=1&__proto__[x]=1&name=bug");
		expect(form.name).toBe("bug");
		expect(({} as Record<string, unknown>).x).toBeUndefined();
		expect(JSON.stringify(form.a).split("{").length - 1).toBeLessThanOrEqual(6);
	});
});

describe("pagination links", () => {
	const opts = { gitlabUrl: "http://localhost", gitlabUrlSet: false, scheme: "http" as const };

	it("use a well-formed Host and percent-encode the path", () => {
		expect(linkBase("127.0.0.1:3000", "/api/v3/projects/1/builds?page=2", opts)).toBe("http://127.0.0.1:3000/api/v3/projects/1/builds");
		expect(linkBase("[::1]:8080", "/api/v3/x", opts)).toBe("http://[::1]:8080/api/v3/x");
		expect(safePath('/api/v3/a b/"<x>')).toBe("/api/v3/a%20b/%22%3Cx%3E");
	});

	it("never copy a malformed Host: GITLAB_URL instead", () => {
		for (const host of ["a b", "x:99999", "[", "x:0", "a_b.example", "", "-a.example", "evil.example/path"]) {
			expect([host, isValidHost(host)]).toEqual([host, false]);
			expect(linkBase(host, "/api/v3/x", opts)).toBe("http://localhost/api/v3/x");
		}
	});

	it("use GITLAB_URL whenever it is configured", () => {
		expect(linkBase("127.0.0.1:3000", "/api/v3/x", { ...opts, gitlabUrl: "https://gitlab.example.com", gitlabUrlSet: true })).toBe(
			"https://gitlab.example.com/api/v3/x",
		);
	});
});

describe("rate-limit answers", () => {
	it("carry their times in seconds", () => {
		const headers: Record<string, string> = {};
		const res = { headersSent: false, setHeader: (k: string, v: string) => (headers[k] = v) } as unknown as ServerResponse;
		const before = Math.floor(Date.now() / 1000);
		writeLimitHeaders(res, 100, { remainingPoints: 7, msBeforeNext: 30_500 });
		expect(headers["RateLimit-Limit"]).toBe("100");
		expect(headers["RateLimit-Remaining"]).toBe("7");
		const reset = Number(headers["RateLimit-Reset"]);
		expect(reset).toBeGreaterThanOrEqual(before + 30);
		expect(reset).toBeLessThanOrEqual(before + 32);
		expect(headers["X-Rate-Limit-Reset"]).toBe(headers["RateLimit-Reset"]);
		expect(toHttpError(tooManyRequests(30_500))).toEqual({
			status: 429,
			body: { message: "429 Too Many Requests" },
			headers: { "Retry-After": "31" },
			unexpected: false,
		});
		expect(toHttpError(tooManyRequests(10)).headers).toEqual({ "Retry-After": "1" });
	});

	it("block for longer each time, within bounds", () => {
		expect([1, 2, 3, 4, 7, 100].map(n => growingBlockSeconds(n, 60, 3600))).toEqual([60, 120, 240, 480, 3600, 3600]);
	});
});

describe("parameter errors", () => {
	it("name each parameter once, with the first rule it broke", () => {
		const err = new Errors.ValidationError("x", "VALIDATION_ERROR", [
			{ type: "enumValue", field: "scope", message: "" },
			{ type: "array", field: "scope", message: "" },
			{ type: "enumValue", field: "scope[1]", message: "" },
			{ type: "number", field: "page", message: "" },
		]);
		expect(toHttpError(err).body).toEqual({ error: "scope does not have a valid value, page is invalid" });
	});
});
