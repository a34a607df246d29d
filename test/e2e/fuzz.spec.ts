/**
 * Seeded fuzzing of every endpoint the gateway routes (read from gateway/routes, so a new
 * endpoint is fuzzed as soon as it is routed): thousands of malformed requests — wrong types,
 * missing and extra fields, huge strings, invalid UTF-8, broken JSON and forms, path traversal,
 * operator objects, negative and huge ids — against the gateway and every service as separate
 * processes over the real NATS (so every parameter also crosses the transporter).
 *
 * For every request: no 5xx and no hang; an error is a GitLab-style JSON body; a rejected
 * request (4xx) and any GET leave the store exactly as it was; no response carries a secret.
 * At the end every process is still up and serving.
 *
 * FUZZ_SEED=<n> replays a run; FUZZ_PER_ROUTE=<n> changes its size (default 60 per route).
 */
import { serviceNames } from "../support/processes";
import { startCluster, type Cluster } from "../support/cluster";
import { createUser, type TestUser } from "../support/fixtures";
import {
	closeRawAgent,
	EXTRA_FIELDS,
	HOSTILE_SEGMENTS,
	HOSTILE_VALUES,
	plausible,
	prng,
	sendRaw,
	type Random,
	type RawReply,
	type RawRequest,
} from "../support/fuzz";
import { gatewayRoutes, pathParams, type GatewayRoute } from "../support/routes";
import { storeDigest } from "../support/store";
import { client } from "../support/http";
import { seedProject, validBody } from "../support/project-fixtures";
import { KeyFactory } from "../support/ssh-keys";

const SEED = Number(process.env.FUZZ_SEED ?? 20170101);
const PER_ROUTE = Number(process.env.FUZZ_PER_ROUTE ?? 60);
/** Past the gateway's 10 s request timeout: only a real hang trips it. */
const REQUEST_TIMEOUT_MS = 15000;

let cluster: Cluster;
let owner: TestUser;
let integrationSecret = "";
const ids: Record<string, string> = {};
const keys = new KeyFactory();

/** A valid body for the route (see validBody), which the fuzz then mutates. */
function goodBody(route: GatewayRoute, rnd: Random): Record<string, unknown> {
	const body = validBody(route, ids, owner, `${rnd.int(1e6)}`);
	if (body) return body;
	const fallback: Record<string, unknown> = {};
	const inPath = new Set(pathParams(route.path));
	for (const [name, rule] of Object.entries(route.params)) if (!inPath.has(name) && !rule?.optional) fallback[name] = plausible(rule, rnd);
	return fallback;
}

function segmentFor(param: string, rnd: Random): string {
	if (rnd.chance(0.35)) return rnd.pick(HOSTILE_SEGMENTS);
	return encodeURIComponent(ids[param] ?? "1");
}

/** Percent-encodes the UTF-8 bytes of any string (encodeURIComponent throws on a lone surrogate). */
function pct(text: string): string {
	let out = "";
	for (const byte of Buffer.from(text, "utf8"))
		out += /[A-Za-z0-9\-_.~]/.test(String.fromCharCode(byte)) ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
	return out;
}

/** A scalar as a form or a text body carries it; null and undefined are empty. */
function scalarText(value: unknown): string {
	return typeof value === "string" || typeof value === "number" || typeof value === "boolean" || typeof value === "bigint" ? String(value) : "";
}

function formEncode(obj: Record<string, unknown>): string {
	const parts: string[] = [];
	const add = (key: string, value: unknown) => {
		if (value && typeof value === "object") {
			const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
			if (!entries.length) parts.push(`${pct(key)}[]=`);
			for (const [k, v] of entries.slice(0, 50)) add(`${key}[${Array.isArray(value) ? "" : k}]`, v);
		} else parts.push(`${pct(key)}=${pct(scalarText(value))}`);
	};
	for (const [k, v] of Object.entries(obj)) add(k, v);
	return parts.join("&");
}

const BROKEN_BODIES: [string, Buffer][] = [
	["application/json", Buffer.from('{"name":')],
	["application/json", Buffer.from("{'name': 'x'}")],
	["application/json", Buffer.from('{"name":"x"}}')],
	["application/json", Buffer.from("[")],
	["application/json", Buffer.from("")],
	["application/json", Buffer.from("null")],
	["application/json", Buffer.from('"just a string"')],
	["application/json", Buffer.from("12345678901234567890")],
	["application/json", Buffer.from('{"name":"\\ud800"}')],
	["application/json", Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xa0, 0xa1]), Buffer.from('","color":"#fff"}')])],
	["application/json", Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"name":"bom"}')])],
	["application/json; charset=utf-16", Buffer.from('{"name":"x"}', "utf16le")],
	["application/json; charset=koi8-r", Buffer.from('{"name":"x"}')],
	["application/json; charset=nonsense", Buffer.from('{"name":"x"}')],
	["application/x-www-form-urlencoded", Buffer.from("name=%FF%FE&color=%C3%28")],
	["application/x-www-form-urlencoded", Buffer.from("name=%&color=%zz")],
	["application/x-www-form-urlencoded", Buffer.from("a[b][c][d][e][f][g][h][i][j][k]=1&name[$gt]=&name[]=1&name[]=2")],
	["application/x-www-form-urlencoded", Buffer.from("&&&===&")],
	["application/x-www-form-urlencoded", Buffer.from(Array.from({ length: 2000 }, (_, i) => `f${i}=1`).join("&"))],
	["application/x-www-form-urlencoded; charset=latin1", Buffer.from([0x6e, 0x61, 0x6d, 0x65, 0x3d, 0xe9])],
	["multipart/form-data", Buffer.from('--x\r\nContent-Disposition: form-data; name="name"\r\n\r\nv\r\n--x--')],
	["multipart/form-data; boundary=x", Buffer.from("garbage without boundaries")],
	["text/plain", Buffer.from("name=x")],
	["application/xml", Buffer.from("<name>x</name>")],
	["application/octet-stream", Buffer.from([0, 1, 2, 3, 255])],
];

interface Planned {
	route: GatewayRoute;
	mode: string;
	req: RawRequest;
}

function plan(route: GatewayRoute, rnd: Random, token: string): Planned {
	const mode = rnd.pick(["valid", "field", "field", "field", "missing", "extra", "path", "path", "query", "encoding", "encoding", "token"] as const);
	let urlPath =
		"/api/v3" +
		route.fullPath.replace(/:([A-Za-z_]+)/g, (_, p: string) =>
			mode === "path" || rnd.chance(0.1) ? segmentFor(p, rnd) : encodeURIComponent(ids[p] ?? "1"),
		);
	const headers: Record<string, string> = route.kind === "api" ? { "PRIVATE-TOKEN": token } : { "Gitlab-Shared-Secret": cluster.internalSecret };
	let body: Record<string, unknown> = goodBody(route, rnd);
	const fields = Object.keys(body).length ? Object.keys(body) : Object.keys(route.params).filter(p => !pathParams(route.path).includes(p));
	if (mode === "field" && fields.length) body[rnd.pick(fields)] = rnd.pick(HOSTILE_VALUES);
	if (mode === "field" && !fields.length) body.anything = rnd.pick(HOSTILE_VALUES);
	if (mode === "missing") {
		if (rnd.chance(0.3)) body = {};
		else delete body[rnd.pick(fields.length ? fields : ["x"])];
	}
	if (mode === "extra") for (const [k, v] of Object.entries(EXTRA_FIELDS)) if (rnd.chance(0.4)) body[k] = v;
	if (mode === "token") {
		const weird = rnd.pick(["", " ", "x".repeat(20), "a".repeat(5000), "%00", token + " ", `${token}\t`, "null", "[object Object]"]);
		if (route.kind === "api") headers["PRIVATE-TOKEN"] = weird;
		else headers["Gitlab-Shared-Secret"] = weird;
		if (rnd.chance(0.3)) urlPath += `?private_token[]=${encodeURIComponent(token)}&private_token[$gt]=`;
	}

	let payload: Buffer | undefined;
	const sendsBody = !["GET", "DELETE"].includes(route.method) || rnd.chance(0.25);
	if (mode === "encoding") {
		const [type, bytes] = rnd.pick(BROKEN_BODIES);
		headers["Content-Type"] = type;
		payload = bytes;
	} else if (route.stream) {
		headers["Content-Type"] = "application/octet-stream";
		payload = Buffer.from(`fuzz artifact ${rnd.int(1e6)}`);
		urlPath += `?filename=${encodeURIComponent(rnd.pick(["a.zip", "../../escape-fuzz.zip", "%00.zip", "/etc/passwd", "x".repeat(5000), ""]))}`;
	} else if (mode === "query" || !sendsBody) {
		const query = mode === "query" ? { ...body, [rnd.pick(["page", "per_page", "scope", "sort", "name", "id"])]: rnd.pick(HOSTILE_VALUES) } : body;
		const qs = formEncode(query);
		if (qs) urlPath += (urlPath.includes("?") ? "&" : "?") + qs;
	} else if (route.action === "builds.appendTrace" && rnd.chance(0.7)) {
		headers["Content-Type"] = "text/plain";
		payload = Buffer.from(scalarText((body as { text?: unknown }).text));
	} else if (rnd.chance(0.5)) {
		headers["Content-Type"] = "application/json";
		payload = Buffer.from(JSON.stringify(body));
	} else {
		headers["Content-Type"] = "application/x-www-form-urlencoded";
		payload = Buffer.from(formEncode(body));
	}
	return { route, mode, req: { method: route.method, path: urlPath, headers, body: payload } };
}

const SECRET_FIELDS = /"(password_hash|token_hash|token_enc|encrypted_[a-z_]*|secret_[a-z_]*)"\s*:/;

function problems(p: Planned, reply: RawReply, storeChanged: boolean): string[] {
	const out: string[] = [];
	const text = reply.body.toString("utf8");
	if (reply.status >= 500 || reply.status < 200) out.push(`status ${reply.status}`);
	if (reply.status >= 400 && reply.status !== 431) {
		let parsed: any = null;
		try {
			parsed = JSON.parse(text);
		} catch {
			// reported below
		}
		if (!parsed || typeof parsed !== "object" || !("message" in parsed || "error" in parsed))
			out.push(`error body is not GitLab-style JSON: ${text.slice(0, 120)}`);
	}
	if (storeChanged) out.push(`the store changed on a ${reply.status >= 400 ? "rejected request" : "GET"}`);
	if (SECRET_FIELDS.test(text)) out.push("a stored secret field in the response");
	if (text.includes(integrationSecret)) out.push("an integration secret in the response");
	const legitimateToken = p.route.action === "accounts.me" || p.route.action === "accounts.login";
	if (!legitimateToken && (text.includes(cluster.rootToken) || text.includes(owner.token))) out.push("a private token in the response");
	return out;
}

beforeAll(async () => {
	const backend = serviceNames()
		.filter(s => s !== "api")
		.join(",");
	cluster = await startCluster({ nodes: { api: "api", backend }, env: { RATE_LIMIT_PER_MINUTE: "0" } });
	owner = await createUser(cluster.api());
	const seeded = await seedProject(cluster, owner, keys);
	Object.assign(ids, seeded.ids);
	integrationSecret = seeded.integrationSecret;
}, 180000);

afterAll(async () => {
	closeRawAgent();
	keys.cleanup();
	await cluster?.stop();
});

it(`answers ${PER_ROUTE} malformed requests per routed endpoint without a 5xx, a hang, a data change or a leak (seed ${SEED})`, async () => {
	// State-making internal routes first, destructive ones last: fixtures live as long as possible.
	const rank = (r: GatewayRoute) => (r.kind !== "api" ? 0 : r.method === "GET" ? 1 : r.method === "DELETE" ? 3 : 2);
	const routes = gatewayRoutes().sort((a, b) => rank(a) - rank(b));
	expect(routes.length).toBeGreaterThan(20);
	const rnd = prng(SEED);
	const failures: string[] = [];
	const statuses: Record<string, number> = {};
	const perRoute: Record<string, Record<number, number>> = {};
	let sent = 0;

	// The digest sees a write and ignores a refused one (or this test would prove nothing).
	const before = storeDigest(cluster.dataDir);
	const refused = await client(cluster.url, owner.token).post(`/projects/${ids.id}/labels`, { body: { name: "bug", color: "#000000" } });
	expect(refused.status).toBe(409);
	expect(storeDigest(cluster.dataDir)).toBe(before);
	const accepted = await client(cluster.url, owner.token).post(`/projects/${ids.id}/labels`, { body: { name: "digest-check", color: "#000000" } });
	expect(accepted.status).toBe(200);
	expect(storeDigest(cluster.dataDir)).not.toBe(before);

	let digest = storeDigest(cluster.dataDir);
	for (const route of routes) {
		for (let i = 0; i < PER_ROUTE; i++) {
			const planned = plan(route, rnd, rnd.chance(0.6) ? cluster.rootToken : owner.token);
			let reply: RawReply;
			try {
				reply = await sendRaw(cluster.port, planned.req, REQUEST_TIMEOUT_MS);
			} catch (err) {
				sent++;
				// Node refuses a request head over its 16 KiB limit (431) and closes at once, which a
				// client still writing sees as a reset: the server's answer to it, not a failure.
				const head = planned.req.path.length + Object.entries(planned.req.headers).reduce((n, [k, v]) => n + k.length + v.length + 4, 0);
				if (head > 16 * 1024 && /ECONNRESET|EPIPE/.test((err as Error).message)) continue;
				failures.push(`#${sent} ${planned.mode} ${planned.req.method} ${planned.req.path.slice(0, 200)}: ${(err as Error).message}`);
				continue;
			}
			sent++;
			statuses[reply.status] = (statuses[reply.status] ?? 0) + 1;
			const byRoute = (perRoute[`${route.method} ${route.fullPath}`] ??= {});
			byRoute[reply.status] = (byRoute[reply.status] ?? 0) + 1;
			const after = storeDigest(cluster.dataDir);
			const mustNotChange = reply.status >= 400 || route.method === "GET";
			const found = problems(planned, reply, mustNotChange && after !== digest);
			digest = after;
			if (found.length)
				failures.push(
					`#${sent - 1} [${route.method} ${route.fullPath}] ${planned.mode} ${planned.req.method} ${planned.req.path.slice(0, 160)} ` +
						`(${planned.req.headers["Content-Type"] ?? "no body"}: ${(planned.req.body ?? Buffer.alloc(0)).toString("utf8").slice(0, 160)}) ` +
						`→ ${reply.status} ` +
						`${reply.body.toString("utf8").slice(0, 200)}: ${found.join("; ")}`,
				);
		}
	}
	// Printed so that a run shows what it covered (and, with the seed, can be replayed).
	console.log(
		`fuzz seed ${SEED}: ${sent} requests over ${routes.length} routes; statuses ${JSON.stringify(statuses)}\n` +
			Object.entries(perRoute)
				.map(([r, s]) => `  ${r}: ${JSON.stringify(s)}`)
				.join("\n"),
	);
	expect(failures.slice(0, 40)).toEqual([]);
	expect(sent).toBeGreaterThanOrEqual(routes.length * PER_ROUTE);

	for (const [name, node] of cluster.nodes) expect([name, node.child.exitCode, node.child.signalCode]).toEqual([name, null, null]);
	const me = await cluster.api().get("/user");
	expect(me.status).toBe(200);
	const logs = cluster.logs("api") + cluster.logs("backend");
	expect(logs).not.toMatch(/Unexpected error|UnhandledPromiseRejection|uncaughtException/);
}, 600000);
