import type { IncomingMessage } from "http";
import { extractToken, rateLimitKey } from "../../gateway/auth";
import { hashToken } from "../../lib/crypto";

const req = (over: Partial<{ headers: Record<string, string>; query: Record<string, unknown>; body: unknown; originalUrl: string; remote: string }>) =>
	({
		headers: over.headers ?? {},
		query: over.query ?? {},
		body: over.body,
		originalUrl: over.originalUrl ?? "/api/v3/user",
		url: "/user",
		socket: { remoteAddress: over.remote ?? "10.0.0.9" },
	}) as unknown as IncomingMessage & { query: Record<string, unknown> };

describe("extractToken", () => {
	it("reads the header, Bearer, the query and a form body, in that order", () => {
		expect(extractToken(req({ headers: { "private-token": "aaa" }, query: { private_token: "bbb" } }))).toBe("aaa");
		expect(extractToken(req({ headers: { authorization: "Bearer ccc" } }))).toBe("ccc");
		expect(extractToken(req({ query: { private_token: "ddd" } }))).toBe("ddd");
		expect(extractToken(req({ body: { private_token: "eee" } }))).toBe("eee");
		expect(extractToken(req({ headers: { authorization: "Basic xyz" } }))).toBeNull();
		expect(extractToken(req({ query: { private_token: ["a", "b"] } }))).toBeNull();
		expect(extractToken(req({}))).toBeNull();
	});
});

describe("rateLimitKey", () => {
	it("keys by the token's hash, never the token", () => {
		const key = rateLimitKey(req({ headers: { "private-token": "abcdefghij1234567890" } }));
		expect(key).toBe(`t:${hashToken("abcdefghij1234567890")}`);
		expect(key).not.toContain("abcdefghij1234567890");
	});
	it("keys anonymous callers by address, first forwarded hop first", () => {
		expect(rateLimitKey(req({}))).toBe("ip:10.0.0.9");
		expect(rateLimitKey(req({ headers: { "x-forwarded-for": "203.0.113.7, 10.0.0.1" } }))).toBe("ip:203.0.113.7");
	});
	it("does not limit the internal API", () => {
		expect(rateLimitKey(req({ originalUrl: "/api/v3/internal/builds" }))).toBeNull();
		expect(rateLimitKey(req({ originalUrl: "/api/v3/internalx" }))).toBe("ip:10.0.0.9");
	});
});
