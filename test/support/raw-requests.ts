/**
 * Raw HTTP requests as fast-check arbitraries, built from the gateway's route table
 * (test/support/routes.ts, so a route is fuzzed as soon as it is routed): every method (OPTIONS,
 * HEAD, TRACE and made-up ones too), path segments with valid, invalid, overlong-UTF-8 and lone
 * `%` escapes, query strings, `Expect`, `Content-Encoding`, `Transfer-Encoding`, `Host`, tokens
 * (a known one, so that the fast path of a cached GET is reached, a made-up one, none), and bodies
 * (a valid one for the route, one with a hostile value, broken ones, raw bytes), framed by
 * Content-Length, chunked, or both. Each request prints as the bytes it sends.
 */
import fc from "fast-check";
import type { GatewayRoute } from "./routes";
import { pathParams } from "./routes";

export interface RawRequest {
	method: string;
	/** The request target as sent. */
	target: string;
	bytes: Buffer;
	/** Whether its route changes nothing when it is answered (a GET): the store must stay as it was. */
	reads: boolean;
	route: string;
}

/** What the requests are made for: the seeded records and the credentials. */
export interface RequestWorld {
	routes: GatewayRoute[];
	/** Values of the seeded records for path parameters, by name (test/support/project-fixtures.ts). */
	ids: Record<string, string>;
	/** A token the gateway has seen (its owner is kept), and one of a user with less access. */
	tokens: string[];
	internalSecret: string;
	/** A valid body for a route, or null (test/support/project-fixtures.ts#validBody). */
	validBody(route: GatewayRoute, unique: string): Record<string, unknown> | null;
}

const deep = (depth: number): unknown => {
	let v: unknown = "bottom";
	for (let i = 0; i < depth; i++) v = { a: v };
	return v;
};

/** Values of the wrong type, shape or size for any parameter. */
const HOSTILE_VALUE = fc.oneof(
	fc.constantFrom<unknown>(
		null,
		true,
		-1,
		1.5,
		1e308,
		2 ** 53 + 1,
		"",
		"\u0000",
		"\r\nX-Injected: 1",
		"\uD800",
		"x".repeat(70000),
		"../../../../etc/passwd",
		"${jndi:ldap://127.0.0.1/x}",
		[],
		["a", { $gt: "" }],
		{ $gt: "" },
		{ $where: "this.id > 0" },
		JSON.parse('{"__proto__":{"polluted":true}}'),
		{ constructor: { prototype: { polluted: true } } },
		deep(40),
		deep(2000),
	),
	fc.jsonValue({ maxDepth: 4 }),
);

/** Percent-escapes as a client may send them, right or wrong. */
const ESCAPE = fc.oneof(
	fc.string({ unit: "grapheme", maxLength: 6 }).map(s => encodeURIComponent(s)),
	fc.constantFrom(
		"%ZZ",
		"%",
		"%%",
		"%2",
		"%G1",
		"%C3%28",
		"%E0%A4%A",
		"%C0%AF",
		"%E0%80%AF",
		"%F0%80%80%AF",
		"%ED%A0%80",
		"%FF%FE",
		"%00",
		"%2F",
		"%2e%2e%2f",
		"..",
		"%252F",
	),
	fc.uint8Array({ minLength: 1, maxLength: 4 }).map(bytes => [...bytes].map(b => `%${b.toString(16).padStart(2, "0")}`).join("")),
);

/** One path segment for a `:param`: a seeded record's, a made-up one, or escapes in it. */
function segment(name: string, ids: Record<string, string>) {
	const known = ids[name] !== undefined ? [fc.constant(encodeURIComponent(ids[name]))] : [];
	return fc.oneof(
		{ arbitrary: fc.oneof(...known, ...known, fc.constantFrom("1", "0", "-1", "99999999999999999999", "abc")), weight: 6 },
		{ arbitrary: fc.tuple(fc.stringMatching(/^[A-Za-z0-9_.-]{0,6}$/), ESCAPE, fc.stringMatching(/^[A-Za-z0-9_.-]{0,6}$/)).map(p => p.join("")), weight: 3 },
		{ arbitrary: fc.constantFrom("", ".", "x".repeat(3000)), weight: 1 },
	);
}

const QUERY_KEY = fc.constantFrom("page", "per_page", "scope", "scope[]", "name", "private_token", "sudo", "simple", "limit", "filename", "a[b][c]", "%ZZ");
const QUERY = fc
	.array(fc.tuple(QUERY_KEY, fc.oneof(fc.constantFrom("1", "0", "-1", "two", "running", ""), ESCAPE)), { maxLength: 4 })
	.map(pairs => (pairs.length ? `?${pairs.map(([k, v]) => `${k}=${v}`).join("&")}` : ""));

const METHOD = fc.oneof(
	{ arbitrary: fc.constant(null), weight: 8 },
	{ arbitrary: fc.constantFrom("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "PROPFIND", "CONNECT", "get", "G3T"), weight: 2 },
);

/** A body and its headers: what the route takes, with a hostile value, broken, or raw bytes, maybe encoded. */
function body(route: GatewayRoute, world: RequestWorld) {
	const valid = (unique: string) => world.validBody(route, unique) ?? {};
	const json = (value: unknown) => ({ type: "application/json", bytes: Buffer.from(JSON.stringify(value)) });
	return fc.oneof(
		{ arbitrary: fc.constant(null), weight: 2 },
		{ arbitrary: fc.nat().map(n => json(valid(String(n)))), weight: 3 },
		{
			arbitrary: fc.tuple(fc.nat(), fc.string({ maxLength: 12 }), HOSTILE_VALUE).map(([n, key, value]) => {
				const b = valid(String(n));
				const keys = Object.keys(b);
				return json({ ...b, [keys.length ? keys[n % keys.length] : key]: value });
			}),
			weight: 3,
		},
		{
			arbitrary: fc.record({
				type: fc.constantFrom(
					"application/json",
					"application/x-www-form-urlencoded",
					"multipart/form-data; boundary=x",
					"text/plain",
					"application/xml",
					"application/json; charset=utf-16",
					"",
				),
				bytes: fc.oneof(
					fc
						.constantFrom(
							'{"name":',
							"name=%FF%FE&color=%C3%28",
							"a[b][c][d][e][f][g][h][i][j][k]=1",
							'--x\r\nContent-Disposition: form-data; name="n"\r\n\r\nv\r\n--x--',
							"[".repeat(5000),
						)
						.map(s => Buffer.from(s)),
					fc.uint8Array({ maxLength: 64 }).map(a => Buffer.from(a)),
				),
			}),
			weight: 2,
		},
	);
}

/** How the body is framed, and what else the head says. */
const FRAMING = fc.oneof({ arbitrary: fc.constant("length"), weight: 6 }, { arbitrary: fc.constantFrom("chunked", "both", "none"), weight: 3 });
const ENCODING = fc.oneof(
	{ arbitrary: fc.constant(null), weight: 9 },
	{ arbitrary: fc.constantFrom("gzip", "deflate", "br", "identity", "compress", "gzip, gzip"), weight: 1 },
);
const EXPECT = fc.oneof({ arbitrary: fc.constant(null), weight: 9 }, { arbitrary: fc.constantFrom("100-continue", "200-ok", "100-Continue"), weight: 1 });
const HOST = fc.oneof(
	{ arbitrary: fc.constant("127.0.0.1"), weight: 9 },
	{ arbitrary: fc.constantFrom(null, "", "evil.example.com:99999", "[::1]", "a".repeat(300), "host name"), weight: 1 },
);

function chunked(bytes: Buffer): Buffer {
	return Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from("\r\n0\r\n\r\n")]);
}

function credentials(route: GatewayRoute, world: RequestWorld) {
	const token = fc.oneof(
		{ arbitrary: fc.constantFrom(...world.tokens), weight: 4 },
		{ arbitrary: fc.constantFrom(null, "made-up-token-000000", "x".repeat(300), " "), weight: 1 },
	);
	if (route.kind === "api") return token.map(t => (t === null ? [] : [`PRIVATE-TOKEN: ${t}`]));
	return fc
		.oneof({ arbitrary: fc.constant(world.internalSecret), weight: 4 }, { arbitrary: fc.constantFrom(null, "wrong"), weight: 1 })
		.map(s => (s === null ? [] : [`Gitlab-Shared-Secret: ${s}`]));
}

/** A raw request to one of the routes, or to a path no route has. */
export function rawRequest(world: RequestWorld): fc.Arbitrary<RawRequest> {
	const unknown: GatewayRoute = { kind: "api", method: "GET", path: "/no/such/route", fullPath: "/no/such/route", action: null, stream: false, params: {} };
	return fc.constantFrom(...world.routes, unknown).chain(route =>
		fc
			.record({
				method: METHOD,
				segments: fc.tuple(...pathParams(route.path).map(name => segment(name, world.ids))),
				trailingSlash: fc.boolean(),
				query: QUERY,
				credentials: credentials(route, world),
				body: body(route, world),
				framing: FRAMING,
				encoding: ENCODING,
				expect: EXPECT,
				host: HOST,
			})
			.map(r => {
				const method = r.method ?? route.method;
				let i = 0;
				const path = route.fullPath.replace(/:([A-Za-z_]+)/g, () => r.segments[i++]);
				const target = `/api/v3${path}${r.trailingSlash ? "/" : ""}${r.query}`;
				const head = [`${method} ${target} HTTP/1.1`, "Connection: close", ...r.credentials];
				if (r.host !== null) head.push(`Host: ${r.host}`);
				if (r.expect) head.push(`Expect: ${r.expect}`);
				let payload: Buffer = Buffer.alloc(0);
				if (r.body) {
					if (r.body.type) head.push(`Content-Type: ${r.body.type}`);
					if (r.encoding) head.push(`Content-Encoding: ${r.encoding}`);
					if (r.framing === "length" || r.framing === "both") head.push(`Content-Length: ${r.body.bytes.length}`);
					if (r.framing === "chunked" || r.framing === "both") head.push("Transfer-Encoding: chunked");
					payload = r.framing === "chunked" || r.framing === "both" ? chunked(r.body.bytes) : r.framing === "length" ? r.body.bytes : Buffer.alloc(0);
				}
				const bytes = Buffer.concat([Buffer.from(`${head.join("\r\n")}\r\n\r\n`, "latin1"), payload]);
				const described = `${route.method} ${route.fullPath}`;
				return Object.assign(
					{ method, target, bytes, reads: method === "GET" || method === "HEAD", route: described },
					{
						// fast-check prints a failing case with this: the request's bytes, as sent.
						[fc.toStringMethod]: () => `${described}: ${JSON.stringify(bytes.toString("latin1"))}`,
					},
				);
			}),
	);
}
