import type { IncomingMessage } from "http";
import { extractToken, OWNER_KEPT_MS, RecentTokens } from "../../../../gateway/edge/auth";
import { hashToken } from "../../../../lib/crypto/tokens";

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

describe("recent tokens", () => {
	it("hash a token and name its look-up once, and keep no more than their bound", () => {
		const named: string[] = [];
		const recent = new RecentTokens(hash => (named.push(hash), `accounts.resolveToken:"${hash}"`), 2);
		const first = recent.lookup("abcdefghij1234567890");
		expect(first).toEqual({ hash: hashToken("abcdefghij1234567890"), key: `accounts.resolveToken:"${hashToken("abcdefghij1234567890")}"` });
		expect(recent.lookup("abcdefghij1234567890")).toBe(first);
		expect(named).toHaveLength(1);

		recent.lookup("second-token-000000a");
		recent.lookup("third-token-0000000b"); // pushes out the oldest
		expect(recent.lookup("abcdefghij1234567890")).not.toBe(first);
		expect(recent.lookup("abcdefghij1234567890")).toEqual(first);
		expect(named).toHaveLength(4);
	});

	it("keep a token's owner once it is resolved, for OWNER_KEPT_MS, and lose it with the token", () => {
		const recent = new RecentTokens(hash => `accounts.resolveToken:"${hash}"`, 2);
		const owner = { id: 7, username: "jane", is_admin: false };
		const found = recent.lookup("abcdefghij1234567890");
		expect(recent.ownerOf(found, 1_000)).toBeUndefined(); // never resolved: nothing kept
		recent.keepOwner(found, owner, 1_000);
		expect(recent.ownerOf(recent.lookup("abcdefghij1234567890"), 1_000 + OWNER_KEPT_MS - 1)).toBe(owner);
		expect(recent.ownerOf(found, 1_000 + OWNER_KEPT_MS)).toBeUndefined();
		recent.keepOwner(found, owner, 50_000);
		recent.lookup("second-token-000000a");
		recent.lookup("third-token-0000000b"); // pushes out the oldest, with its owner
		expect(recent.ownerOf(recent.lookup("abcdefghij1234567890"), 50_000)).toBeUndefined();
	});

	it("push out the least recently used look-up: a token in use stays, with its owner, while made-up ones come and go", () => {
		const named: string[] = [];
		const recent = new RecentTokens(hash => (named.push(hash), `accounts.resolveToken:"${hash}"`), 3);
		const owner = { id: 7, username: "jane", is_admin: false };
		const real = recent.lookup("real-token-00000000000");
		recent.keepOwner(real, owner, 1_000);
		for (let i = 0; i < 5; i++) {
			recent.lookup(`made-up-${i}-a-0000000000`);
			recent.lookup(`made-up-${i}-b-0000000000`); // the two of the round before go
			expect(recent.lookup("real-token-00000000000")).toBe(real);
		}
		expect(recent.ownerOf(real, 1_001)).toBe(owner);
		expect(named).toHaveLength(11);
		// Once three other tokens were used after it, the real one goes, its owner with it.
		for (const token of ["made-up-4-b-0000000000", "other-token-a-00000000", "other-token-b-00000000"]) recent.lookup(token);
		expect(named).toHaveLength(13);
		const again = recent.lookup("real-token-00000000000");
		expect(again).not.toBe(real);
		expect(recent.ownerOf(again, 1_001)).toBeUndefined();
		expect(named).toHaveLength(14);
	});

	it("forget the owners of the look-ups a change of access cleans: those it names, every one for a pattern", () => {
		const recent = new RecentTokens(hash => `accounts.resolveToken:"${hash}"`);
		const owner = { id: 7, username: "jane", is_admin: false };
		const [a, b] = ["token-a-000000000000", "token-b-000000000000"].map(t => recent.lookup(t));
		for (const found of [a, b]) recent.keepOwner(found, owner, 0);
		recent.forgetOwners([a.key!, 'accounts.projectAccess:"1"|7|false'], []);
		expect([recent.ownerOf(a, 1), recent.ownerOf(b, 1)]).toEqual([undefined, owner]);
		recent.forgetOwners([], ['accounts.projectAccess:"1"|*']);
		expect(recent.ownerOf(b, 1)).toBeUndefined();
	});

	it("name no look-up when there is no cache to read", () => {
		expect(new RecentTokens(() => null).lookup("abcdefghij1234567890")).toEqual({ hash: hashToken("abcdefghij1234567890"), key: null });
	});
});
