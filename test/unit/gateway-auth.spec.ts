import type { IncomingMessage } from "http";
import { extractToken } from "../../gateway/auth";

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
