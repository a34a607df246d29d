/**
 * Building blocks of the malformed-request fuzz test: a seeded random source, hostile values,
 * plausible values from a parameter rule, and a raw HTTP sender (no URL normalisation, any bytes).
 * The routes come from ./routes, the store digest from ./store.
 */
import http from "http";

// ---------- seeded randomness ----------

/** mulberry32: small, fast, and the same sequence for the same seed on every machine. */
export function prng(seed: number) {
	let a = seed >>> 0;
	const next = () => {
		a = (a + 0x6d2b79f5) >>> 0;
		let t = a;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
	return {
		next,
		int: (max: number) => Math.floor(next() * max),
		pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)],
		chance: (p: number) => next() < p,
	};
}
export type Random = ReturnType<typeof prng>;

// ---------- hostile values ----------

const deep = (depth: number): unknown => {
	let v: unknown = "bottom";
	for (let i = 0; i < depth; i++) v = { a: v };
	return v;
};

/** Values of the wrong type, shape or size for any parameter. */
export const HOSTILE_VALUES: readonly unknown[] = [
	null,
	true,
	false,
	0,
	-1,
	-0.5,
	1.5,
	1e308,
	-1e308,
	2 ** 53 + 1,
	1e20, // past any 64-bit integer
	"",
	" ",
	"\u0000",
	"nul\u0000byte",
	"\r\nX-Injected: 1",
	"\uFFFD\uFFFE",
	"\uD800",
	"emoji 😀 and RTL \u202Etxt",
	"x".repeat(300),
	"x".repeat(70000),
	"../../../../../../etc/passwd",
	"..\\..\\..\\windows\\win.ini",
	"%2e%2e%2f%2e%2e%2fetc%2fpasswd",
	"/absolute/path",
	"<script>alert(1)</script>",
	"'; DROP TABLE users; --",
	"${jndi:ldap://127.0.0.1/x}",
	"NaN",
	"Infinity",
	"-0",
	"1e3",
	"0x1f",
	"٣",
	"true",
	"null",
	[],
	[1, 2, 3],
	["a", { $gt: "" }],
	new Array(5000).fill(1),
	{},
	{ $gt: "" },
	{ $ne: null },
	{ $where: "this.id > 0" },
	{ $regex: ".*" },
	{ $in: [1, 2, 3] },
	{ __proto__: { polluted: true } },
	JSON.parse('{"__proto__":{"polluted":true}}'),
	{ constructor: { prototype: { polluted: true } } },
	deep(40),
	deep(2000),
];

/** Path segments (already percent-encoded where they must be) for any `:param`. */
export const HOSTILE_SEGMENTS: readonly string[] = [
	"-1",
	"0",
	"00001",
	"1.5",
	"1e3",
	"0x10",
	"99999999999999999999",
	"9007199254740993",
	"NaN",
	"Infinity",
	"null",
	"undefined",
	"abc",
	"%20",
	"%00",
	"%FF%FE",
	"%C3%28",
	"%E2%82",
	"%",
	"%zz",
	"..",
	"..%2F..%2F..%2Fetc%2Fpasswd",
	"%2e%2e%2f%2e%2e%2f",
	"....%2F%2F",
	"%2Fetc%2Fpasswd",
	encodeURIComponent("../../x"),
	encodeURIComponent('{"$gt":""}'),
	"%5B%24gt%5D",
	encodeURIComponent("x".repeat(3000)),
	encodeURIComponent("😀"),
	encodeURIComponent("a\u0000b"),
	"constructor",
	"__proto__",
	"hasOwnProperty",
];

/** Extra body fields a client has no business sending. */
export const EXTRA_FIELDS: Record<string, unknown> = {
	$set: { is_admin: true },
	_id: "forged",
	id: 1,
	project_id: 1,
	creator_id: 1,
	user_id: 1,
	is_admin: true,
	admin: true,
	access_level: 50,
	private_token: "forgedToken123456789",
	token_hash: "0".repeat(64),
	password_hash: "x",
	state: "blocked",
	created_at: "1970-01-01T00:00:00Z",
	unknown_field: "x",
};

/** A plausible value for a parameter from its fastest-validator rule (to get past the other fields). */
export function plausible(rule: any, rnd: Random): unknown {
	const r = typeof rule === "string" ? { type: rule.split("|")[0] } : (rule ?? { type: "any" });
	switch (r.type) {
		case "number":
			return r.min ?? 1;
		case "boolean":
			return rnd.chance(0.5);
		case "email":
			return `fuzz${rnd.int(1e6)}@example.com`;
		case "url":
			return "http://example.com/hook";
		case "enum":
			return r.values?.[0];
		case "equal":
			return r.value;
		case "array":
			return [];
		case "object":
			return {};
		default:
			return `fuzz-${rnd.int(1e6)}`;
	}
}

// ---------- raw HTTP ----------

export interface RawRequest {
	method: string;
	/** Sent exactly as given (no normalisation of `..` or percent-encoding). */
	path: string;
	headers: Record<string, string>;
	body?: Buffer;
}

export interface RawReply {
	status: number;
	headers: http.IncomingHttpHeaders;
	body: Buffer;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

export function sendRaw(port: number, req: RawRequest, timeoutMs: number): Promise<RawReply> {
	return new Promise((resolve, reject) => {
		const headers = { ...req.headers, ...(req.body ? { "Content-Length": String(req.body.length) } : {}) };
		const r = http.request({ host: "127.0.0.1", port, method: req.method, path: req.path, headers, agent }, res => {
			const chunks: Buffer[] = [];
			res.on("data", c => chunks.push(c));
			res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
			res.on("error", reject);
		});
		r.setTimeout(timeoutMs, () => r.destroy(new Error(`no answer within ${timeoutMs} ms`)));
		r.on("error", reject);
		r.end(req.body);
	});
}

export function closeRawAgent(): void {
	agent.destroy();
}
