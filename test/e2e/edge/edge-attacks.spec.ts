/**
 * The edge under attack, as an attacker would try it, against `npm start`'s shape (one process,
 * memory cacher and counters) and the split stack (gateway and services as processes over NATS,
 * Redis for the cache and the counters). Bounded and loopback only. Source addresses are loopback
 * aliases: 127.0.0.2 is the trusted proxy (its X-Forwarded-For is believed), any other is a client.
 *
 * - login: a flood of wrong passwords meets 429s while other requests go on being answered; per
 *   address and per account (that hashing runs off the event loop, and that an unknown login asks
 *   the same work as a wrong password, is proven without a clock in test/unit/lib/crypto/crypto.spec.ts);
 * - the request limit counts verified users, and otherwise addresses: made-up tokens, spoofed
 *   X-Forwarded-For and wrong shared secrets buy nothing;
 * - no read-only user can grow the cache (RSS, Redis keys);
 * - malformed input (Host, deep JSON, broken encodings, __proto__) is a 4xx, changes nothing;
 * - slow clients, oversized announced bodies and too many connections are cut.
 */
import Redis from "ioredis";
import { rssBytes } from "../../support/processes";
import { generateToken } from "../../../lib/crypto/tokens";
import { startCluster, type Cluster } from "../../support/cluster";
import { addMember, createProject, createUser, type TestUser } from "../../support/fixtures";
import { openConnection, requestFrom, trickle, type RawReply } from "../../support/raw-http";
import { REDIS_URL } from "../../support/servers";
import { storeDigest } from "../../support/store";

const PROXY = "127.0.0.2";
const LIMIT_PER_MINUTE = 100;
const AUTH_FAILURES = 5;
const MAX_CONNECTIONS = 40;
const IDLE_TIMEOUT_MS = 3000;
const HEADERS_TIMEOUT_MS = 2000;
const BODY_TIMEOUT_MS = 4000;
/** Login guesses a second in the flood. */
const ATTACK_RATE = 50;

const ENV = {
	TRUSTED_PROXIES: `${PROXY}/32`,
	RATE_LIMIT_PER_MINUTE: String(LIMIT_PER_MINUTE),
	AUTH_FAILURE_LIMIT: String(AUTH_FAILURES),
	PASSWORD_HASH_CONCURRENCY: "1",
	PASSWORD_HASH_QUEUE: "4",
	MAX_CONNECTIONS: String(MAX_CONNECTIONS),
	HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
	IDLE_TIMEOUT_MS: String(IDLE_TIMEOUT_MS),
	BODY_TIMEOUT_MS: String(BODY_TIMEOUT_MS),
	CACHE_MAX_ENTRIES: "100",
	MAX_ARTIFACT_BYTES: "10mb",
};

const sleep = (ms: number) => new Promise(r => setTimeout(r, ms));
let addressCounter = 0;
/** A fresh client address, for the trusted proxy to write into X-Forwarded-For. */
const forwardedFor = () => `203.0.${Math.floor(++addressCounter / 250) % 250}.${addressCounter % 250}`;

describe.each([
	["all-in-one", { all: "" }, false],
	["split over NATS and Redis", { api: "api", accounts: "accounts", labels: "labels", builds: "builds", events: "events" }, true],
] as const)("%s", (_shape, nodes, split) => {
	let cluster: Cluster;
	let port: number;
	let root: string;
	const serverErrors: string[] = [];

	/** Every reply is checked for 5xx: an attack may be refused, never crash the service. */
	const req = async (path: string, opts: Parameters<typeof requestFrom>[2] = {}) => {
		const reply = await requestFrom(port, `/api/v3${path}`, opts);
		if (reply.status >= 500) serverErrors.push(`${opts.method ?? "GET"} ${path.slice(0, 80)} → ${reply.status} ${reply.text.slice(0, 200)}`);
		return reply;
	};
	const login = (login: string, password: string, from: { address?: string; forwarded?: string } = {}) =>
		req("/session", {
			method: "POST",
			body: { login, password },
			localAddress: from.forwarded ? PROXY : from.address,
			headers: from.forwarded ? { "X-Forwarded-For": from.forwarded } : {},
		});

	beforeAll(async () => {
		cluster = await startCluster({ nodes: { ...nodes }, nats: split, env: ENV });
		port = cluster.port;
		root = cluster.rootToken;
	}, 120000);

	afterAll(async () => {
		await cluster?.stop();
	});

	afterEach(() => {
		expect(serverErrors.splice(0)).toEqual([]);
	});

	describe("login", () => {
		it("a flood of wrong passwords meets 429s while other requests are answered", async () => {
			const measurer = await createUser(cluster.api());
			// Root signs in once from a machine of its own: that address stays open to it.
			const home = forwardedFor();
			expect((await login("root", cluster.rootPassword, { forwarded: home })).status).toBe(201);

			// GET /user over one kept-alive connection, as a client in the middle of its work would.
			const probe = async (n: number) => {
				const statuses: number[] = [];
				for (let i = 0; i < n; i++) statuses.push((await cluster.api(measurer.token).get("/user")).status);
				return statuses;
			};
			const quiet = await probe(40);

			// 30 loops of guesses from ever new addresses, together ATTACK_RATE a second (five times what the
			// whole service could check before, when each guess held the event loop for ~40 ms): root's
			// password, and logins that do not exist (a hash each, unless refused first).
			const statuses = new Map<number, number>();
			const retryAfter = new Set<string>();
			let flooding = true;
			const loop = async (i: number) => {
				await sleep(i * (1000 / ATTACK_RATE));
				while (flooding) {
					const name = i % 2 ? "root" : `nobody-${generateToken()}`;
					const started = Date.now();
					const reply = await login(name, `guess-${generateToken()}`, { forwarded: forwardedFor() });
					statuses.set(reply.status, (statuses.get(reply.status) ?? 0) + 1);
					if (reply.status === 429) retryAfter.add(String(reply.headers["retry-after"]));
					await sleep(Math.max(0, (30 * 1000) / ATTACK_RATE - (Date.now() - started)));
				}
			};
			const loops = Array.from({ length: 30 }, (_, i) => loop(i));
			await sleep(300);
			const flooded = await probe(40);
			flooding = false;
			await Promise.all(loops);

			// Every probe is answered during the flood; how fast is the bench's business, not a test's
			// (test/unit/lib/crypto/crypto.spec.ts proves the hashing runs off the event loop).
			expect(quiet).toEqual(Array(40).fill(200));
			expect(flooded).toEqual(Array(40).fill(200));
			expect([...statuses.keys()].sort()).toEqual([401, 429]);
			expect([...retryAfter].every(v => /^\d+$/.test(v) && Number(v) >= 1)).toBe(true);

			// Root's account is blocked for new addresses (the flood's guesses, and at most a full run more,
			// lead there), but not from the one it signs in from.
			let guesses = 0;
			let blocked: RawReply;
			do blocked = await login("root", `guess-${generateToken()}`, { forwarded: forwardedFor() });
			while (blocked.status === 401 && ++guesses < AUTH_FAILURES);
			expect([blocked.status, blocked.body]).toEqual([429, { message: "429 Too Many Requests" }]);
			const elsewhere = await login("root", cluster.rootPassword, { forwarded: forwardedFor() });
			expect([elsewhere.status, elsewhere.body]).toEqual([429, { message: "429 Too Many Requests" }]);
			expect(Number(elsewhere.headers["retry-after"])).toBeGreaterThanOrEqual(1);
			expect((await login("root", cluster.rootPassword, { forwarded: home })).status).toBe(201);
		}, 90000);

		it("per address: after the limit, 429 with Retry-After even for a right password; other addresses sign in", async () => {
			const user = await createUser(cluster.api());
			const attacker = forwardedFor();
			for (let i = 0; i < AUTH_FAILURES; i++) expect((await login(`nobody-${i}-${generateToken()}`, "wrong", { forwarded: attacker })).status).toBe(401);
			const blocked = await login(user.username, `password-${user.username}`, { forwarded: attacker });
			expect([blocked.status, blocked.body]).toEqual([429, { message: "429 Too Many Requests" }]);
			expect(Number(blocked.headers["retry-after"])).toBeGreaterThanOrEqual(1);
			expect((await login(user.username, `password-${user.username}`, { forwarded: forwardedFor() })).status).toBe(201);
		});

		it("per account: wrong passwords from many addresses block the account, a success ends the run", async () => {
			const user = await createUser(cluster.api());
			for (let i = 0; i < AUTH_FAILURES - 1; i++) expect((await login(user.username, "wrong", { forwarded: forwardedFor() })).status).toBe(401);
			// A success from a new address ends the run of failures...
			const known = forwardedFor();
			expect((await login(user.username, `password-${user.username}`, { forwarded: known })).status).toBe(201);
			for (let i = 0; i < AUTH_FAILURES; i++) expect((await login(user.username, "wrong", { forwarded: forwardedFor() })).status).toBe(401);
			// ...and a full run blocks the account, from everywhere it never signed in from.
			expect((await login(user.username, `password-${user.username}`, { forwarded: forwardedFor() })).status).toBe(429);
			expect((await login(user.username, `password-${user.username}`, { forwarded: known })).status).toBe(201);
		});

		it("an unknown login is answered as a wrong password is: nothing tells which usernames exist", async () => {
			const user = await createUser(cluster.api());
			const unknown = await login(`nobody-${generateToken()}`, "guess", { forwarded: forwardedFor() });
			const wrong = await login(user.username, "guess", { forwarded: forwardedFor() });
			const shown = (r: RawReply) => [r.status, r.body, r.headers["content-type"], r.headers["content-length"]];
			expect(shown(unknown)).toEqual([401, { message: "401 Unauthorized" }, "application/json", "30"]);
			expect(shown(unknown)).toEqual(shown(wrong));
			// The same scrypt work for both (their time tells nothing either): test/unit/lib/crypto/crypto.spec.ts.
		});
	});

	describe("the request limit", () => {
		it("counts made-up tokens against the address, and verified users against themselves", async () => {
			const client = "127.0.0.5";
			const statuses: number[] = [];
			for (let i = 0; i < LIMIT_PER_MINUTE + 5; i++)
				statuses.push((await req("/user", { localAddress: client, headers: { "PRIVATE-TOKEN": generateToken() } })).status);
			expect(statuses.slice(0, LIMIT_PER_MINUTE).every(s => s === 401)).toBe(true);
			expect(statuses.slice(LIMIT_PER_MINUTE)).toEqual([429, 429, 429, 429, 429]);
			const limited = await req("/user", { localAddress: client, headers: { "PRIVATE-TOKEN": generateToken() } });
			expect(limited.body).toEqual({ message: "429 Too Many Requests" });
			expect(Number(limited.headers["retry-after"])).toBeGreaterThanOrEqual(1);
			expect(limited.headers["ratelimit-limit"]).toBe(String(LIMIT_PER_MINUTE));
			expect(limited.headers["ratelimit-remaining"]).toBe("0");
			// Seconds since the epoch, within the minute.
			const reset = Number(limited.headers["ratelimit-reset"]);
			expect(reset).toBeGreaterThan(Date.now() / 1000);
			expect(reset).toBeLessThanOrEqual(Date.now() / 1000 + 61);

			// A real user on the same address has a budget of its own.
			const user = await createUser(cluster.api());
			const mine = await req("/user", { localAddress: client, headers: { "PRIVATE-TOKEN": user.token } });
			expect(mine.status).toBe(200);
			expect(mine.headers["ratelimit-remaining"]).toBe(String(LIMIT_PER_MINUTE - 1));
		});

		it("believes X-Forwarded-For only from the trusted proxy", async () => {
			const spoofer = "127.0.0.6";
			const statuses: number[] = [];
			for (let i = 0; i < LIMIT_PER_MINUTE + 3; i++)
				statuses.push((await req("/user", { localAddress: spoofer, headers: { "X-Forwarded-For": forwardedFor() } })).status);
			expect(statuses.slice(LIMIT_PER_MINUTE)).toEqual([429, 429, 429]);
			// Through the proxy, each forwarded client counts on its own.
			for (let i = 0; i < 5; i++) expect((await req("/user", { localAddress: PROXY, headers: { "X-Forwarded-For": forwardedFor() } })).status).toBe(401);
		});

		it("limits wrong shared secrets per address, never the right one, from that address too", async () => {
			const guesser = "127.0.0.7";
			const statuses: number[] = [];
			for (let i = 0; i < AUTH_FAILURES + 2; i++)
				statuses.push((await req("/internal/dead-letters", { localAddress: guesser, headers: { "Gitlab-Shared-Secret": `guess-${i}` } })).status);
			expect(statuses).toEqual([...Array(AUTH_FAILURES).fill(401), 429, 429]);
			// Another runner behind the same address (a shared NAT) is not stopped by the guesser's mistakes.
			for (const address of [guesser, "127.0.0.8"]) {
				const right = await req("/internal/dead-letters", { localAddress: address, headers: { "Gitlab-Shared-Secret": cluster.internalSecret } });
				expect([address, right.status]).toEqual([address, 200]);
			}
			const wrong = await req("/internal/dead-letters", { localAddress: guesser, headers: { "Gitlab-Shared-Secret": "guess-again" } });
			expect(wrong.status).toBe(429);
		});
	});

	describe("the cache", () => {
		it("cannot be grown by a read-only user: invalid pages are 400s, valid ones bounded by the limit", async () => {
			const owner = await createUser(cluster.api());
			const reader = await createUser(cluster.api());
			const project = await createProject(cluster.api(owner.token));
			await addMember(cluster.api(owner.token), project.id, reader.id, 20);
			for (const name of ["a", "b", "c"])
				expect((await cluster.api(owner.token).post(`/projects/${project.id}/labels`, { body: { name, color: "#00ff00" } })).status).toBe(200);
			const as = { headers: { "PRIVATE-TOKEN": reader.token }, localAddress: "127.0.0.9" };
			const redis = split ? new Redis(REDIS_URL) : null;
			const cacheKeys = async () => (redis ? (await redis.keys(`MOL-${cluster.namespace}-*`)).filter(k => !/accounts\./.test(k)) : []);
			const pid = cluster.nodes.get(split ? "api" : "all")!.child.pid;
			try {
				const keysBefore = await cacheKeys();
				const rssBefore = rssBytes(pid)!;
				const huge = "1" + "0".repeat(900 * 1024);
				for (let i = 0; i < 20; i++) {
					const reply = await req(`/projects/${project.id}/labels`, { ...as, body: { page: huge + i } });
					expect([reply.status, reply.body]).toEqual([400, { error: "page is invalid" }]);
				}
				// 20 bodies of 900 KB went through this process: its memory did not keep them.
				expect(rssBytes(pid)! - rssBefore).toBeLessThan(64 * 1024 * 1024);
				// Nor over rounds of ten more: how much a round adds depends on when the collector runs, but a
				// process that kept them would add at least their 9 MB every round.
				const growth: number[] = [];
				for (let round = 0; round < 2; round++) {
					const before = rssBytes(pid)!;
					for (let i = 0; i < 10; i++) {
						const reply = await req(`/projects/${project.id}/labels`, { ...as, body: { page: `${huge}${round}${i}` } });
						expect([reply.status, reply.body]).toEqual([400, { error: "page is invalid" }]);
					}
					growth.push(rssBytes(pid)! - before);
				}
				expect(Math.min(...growth)).toBeLessThan(8 * 1024 * 1024);
				for (let i = 0; i < 30; i++) {
					const reply = await req(`/projects/${project.id}/labels?page=1x${generateToken()}`, as);
					expect([reply.status, reply.body]).toEqual([400, { error: "page is invalid" }]);
				}
				expect(await cacheKeys()).toEqual(keysBefore);

				// Valid, distinct pages: each may be cached, but the user's limit stops them.
				const statuses: number[] = [];
				for (let page = 1; page <= 80; page++) statuses.push((await req(`/projects/${project.id}/labels?page=${page}&per_page=1`, as)).status);
				const served = statuses.filter(s => s === 200).length;
				expect(served).toBe(LIMIT_PER_MINUTE - 70);
				expect(statuses.filter(s => s !== 200).every(s => s === 429)).toBe(true);
				const added = (await cacheKeys()).filter(k => !keysBefore.includes(k));
				expect(added.length).toBeLessThanOrEqual(served);
				for (const key of added) expect(key.length).toBeLessThan(400);
			} finally {
				redis?.disconnect();
			}
		}, 60000);
	});

	describe("malformed input", () => {
		let owner: TestUser;
		let projectId: number;
		let as: { headers: Record<string, string>; localAddress: string };

		beforeAll(async () => {
			owner = await createUser(cluster.api());
			projectId = (await createProject(cluster.api(owner.token))).id;
			as = { headers: { "PRIVATE-TOKEN": owner.token }, localAddress: "127.0.0.10" };
			expect((await cluster.api(owner.token).post(`/projects/${projectId}/labels`, { body: { name: "kept", color: "#0000ff" } })).status).toBe(200);
		});

		it("a Host that is no host: the list still answers, its links use GITLAB_URL", async () => {
			for (const host of ["a b", "x:99999", "["]) {
				const reply = await req(`/projects/${projectId}/labels?page=1&per_page=1`, { ...as, headers: { ...as.headers, Host: host } });
				expect([host, reply.status]).toEqual([host, 200]);
				expect(reply.headers.link).toContain(`<http://localhost/api/v3/projects/${projectId}/labels?page=1&per_page=1>; rel="first"`);
			}
			const normal = await req(`/projects/${projectId}/labels?page=1&per_page=1`, { ...as, headers: { ...as.headers, Host: `127.0.0.1:${port}` } });
			expect(normal.headers.link).toContain(`<http://127.0.0.1:${port}/api/v3/projects/${projectId}/labels?page=1&per_page=1>`);
		});

		it("deep JSON, broken encodings and __proto__ are 4xx in GitLab's form and change nothing", async () => {
			const before = storeDigest(cluster.dataDir);
			const post = (body: string | Buffer, headers: Record<string, string> = {}) => {
				const all = { ...as.headers, "Content-Type": "application/json", ...headers };
				return req(`/projects/${projectId}/labels`, { ...as, method: "POST", body, headers: all });
			};

			const deep = '{"name":"deep","color":"#ffffff","x":' + "[".repeat(10_000) + "]".repeat(10_000) + "}";
			expect(await post(deep).then(r => [r.status, r.body])).toEqual([
				400,
				{ message: "400 Bad Request - the JSON body nests arrays and objects more than 32 deep" },
			]);
			const deepQuery = await req(`/projects/${projectId}/labels?page${"[a]".repeat(2000)}=1`, as);
			expect([deepQuery.status, deepQuery.body]).toEqual([400, { error: "page is invalid" }]);
			for (const encoding of ["gzip", "br", "deflate"])
				expect(await post(Buffer.from("definitely not compressed"), { "Content-Encoding": encoding }).then(r => [encoding, r.status, r.body])).toEqual([
					encoding,
					400,
					{ message: `400 Bad Request - the body does not decode as ${encoding}` },
				]);
			expect(await post('{"name":"x","color":"#fff"}', { "Content-Encoding": "compress" }).then(r => [r.status, r.body])).toEqual([
				415,
				{ message: "415 Unsupported Media Type" },
			]);
			expect(await post('{"name":"x","color":"#fff"}', { "Content-Type": "application/json; charset=latin1" }).then(r => r.status)).toBe(415);
			for (const body of ['{"name":"proto","color":"#fff","__proto__":{"admin":true}}', '{"name":"proto","color":"#fff","\\u005f_proto__":{"id":"1"}}'])
				expect(await post(body).then(r => [r.status, r.body])).toEqual([400, { message: "400 Bad Request - the JSON body has a __proto__ key" }]);

			expect(storeDigest(cluster.dataDir)).toBe(before);
			const labels = await req(`/projects/${projectId}/labels`, as);
			expect(labels.body.map((l: { name: string }) => l.name)).toEqual(["kept"]);
		});

		it("a project reference longer than any is an unknown project, not a parameter error", async () => {
			const long = "x".repeat(600);
			const signedIn = await req(`/projects/${long}/labels`, as);
			expect([signedIn.status, signedIn.body]).toEqual([404, { message: "404 Project Not Found" }]);
			if (split) return; // snippets (anonymous reads) runs in the all-in-one shape only here
			const anonymous = await req(`/projects/${long}/snippets`, { localAddress: as.localAddress });
			expect([anonymous.status, anonymous.body]).toEqual([401, { message: "401 Unauthorized" }]);
		});

		it("OPTIONS answers the path's methods and runs no action, whatever method it names", async () => {
			const before = storeDigest(cluster.dataDir);
			const options = (path: string, headers: Record<string, string> = {}) =>
				req(path, { ...as, method: "OPTIONS", headers: { ...as.headers, ...headers } }).then(r => [r.status, r.headers.allow, r.text]);
			// A preflight naming DELETE, with the owner's token and the label's name: nothing is deleted.
			expect(await options(`/projects/${projectId}/labels?name=kept`, { "Access-Control-Request-Method": "DELETE" })).toEqual([
				204,
				"OPTIONS, GET, HEAD, POST, PUT, DELETE",
				"",
			]);
			expect(await options(`/projects/${projectId}/labels/`)).toEqual([204, "OPTIONS, GET, HEAD, POST, PUT, DELETE", ""]);
			expect(await options("/user")).toEqual([204, "OPTIONS, GET, HEAD", ""]);
			expect(await options("/session")).toEqual([204, "OPTIONS, POST", ""]);
			const unknown = await req("/no/such/route", { ...as, method: "OPTIONS" });
			expect([unknown.status, unknown.body]).toEqual([404, { error: "404 Not Found" }]);

			expect(storeDigest(cluster.dataDir)).toBe(before);
			const labels = await req(`/projects/${projectId}/labels`, as);
			expect(labels.body.map((l: { name: string }) => l.name)).toEqual(["kept"]);
		});
	});

	describe("slow and oversized clients", () => {
		const head = (extra: string) => `POST /api/v3/projects/1/labels HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${extra}\r\n`;

		it("headers that never finish are cut", async () => {
			const slowloris = [...("GET /api/v3/user HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: " + "a".repeat(200))];
			const outcome = await trickle(port, slowloris, 50);
			expect(outcome.closed).toBe(true);
			expect(outcome.written).toBeLessThan(slowloris.length);
		}, 30000);

		it("a body that stops coming is cut", async () => {
			const outcome = await trickle(port, [head("Content-Length: 100\r\n") + "{", "", "", "", "", ""], IDLE_TIMEOUT_MS);
			expect(outcome.closed).toBe(true);
		}, 30000);

		it("a body that keeps trickling in is answered 408 at BODY_TIMEOUT_MS, and the connection closed", async () => {
			// A byte well within the idle timeout each time: the connection never goes idle, and the whole
			// body would take 30 s. It is cut at the body's deadline, long before its end.
			const gapMs = IDLE_TIMEOUT_MS / 6;
			const body = '{"name":"' + "x".repeat(58) + '"}';
			const chunks = [head(`Content-Length: ${body.length}\r\nPRIVATE-TOKEN: ${root}\r\n`), ...body];
			const outcome = await trickle(port, chunks, gapMs, IDLE_TIMEOUT_MS * 3);
			expect(outcome.closed).toBe(true);
			expect(/^HTTP\/1\.1 (\d{3})/.exec(outcome.received)?.[1]).toBe("408");
			expect(outcome.received).toContain('{"message":"408 Request Timeout"}');
			expect(outcome.written).toBeLessThan(Buffer.byteLength(chunks.join("")));
		}, 60000);

		it("an announced body larger than the route takes is refused at once, and the connection closed", async () => {
			for (const [what, request] of [
				["api", head("Content-Length: 1000000000000\r\n")],
				["unrouted", "POST /api/v3/nothing/here HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000000000000\r\n\r\n"],
				[
					"artifacts",
					"PUT /api/v3/internal/builds/1/artifacts?filename=a.zip HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
						`Gitlab-Shared-Secret: ${cluster.internalSecret}\r\nContent-Length: 20000000\r\n\r\n`,
				],
				["expect 100-continue", head("Content-Length: 1000000000000\r\nExpect: 100-continue\r\n")],
			] as const) {
				// The headers, then a little of the body, then silence: the answer must not wait for the rest.
				const outcome = await trickle(port, [request, "x".repeat(1000)], 200, IDLE_TIMEOUT_MS * 3);
				expect([what, outcome.closed]).toEqual([what, true]);
				const status = /^HTTP\/1\.1 (\d{3})/.exec(outcome.received)?.[1];
				expect([what, status]).toEqual([what, "413"]);
				expect(outcome.received).not.toContain("100 Continue");
			}
		}, 60000);

		it("connections past MAX_CONNECTIONS are closed on arrival; freed places are reused", async () => {
			// Earlier tests' clients may still hold a kept-alive connection or two: count what we get.
			const attempts = await Promise.all(Array.from({ length: MAX_CONNECTIONS + 5 }, () => openConnection(port)));
			const open = attempts.filter(s => s !== null);
			try {
				expect(open.length).toBeLessThanOrEqual(MAX_CONNECTIONS);
				expect(open.length).toBeGreaterThanOrEqual(MAX_CONNECTIONS - 5);
				expect(await openConnection(port)).toBeNull();
				for (const socket of open.splice(0, 5)) socket.destroy();
				await sleep(100);
				const again = await openConnection(port);
				expect(again).not.toBeNull();
				again!.destroy();
			} finally {
				for (const socket of open) socket.destroy();
			}
		}, 30000);
	});

	describe("afterwards", () => {
		it("it is still up and serving", async () => {
			expect((await req("/user", { headers: { "PRIVATE-TOKEN": root }, localAddress: "127.0.0.11" })).status).toBe(200);
		});
	});
});
