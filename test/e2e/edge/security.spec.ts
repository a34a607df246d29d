/**
 * Security, endpoint by endpoint: every route the gateway mounts (read from gateway/routes, so a
 * new endpoint is covered as soon as it is routed), against a private project that has something
 * behind every endpoint, with the gateway and all services as processes over the real NATS.
 *
 * - Without a token: 401 on every API endpoint; without the shared secret: 401 on every internal one.
 * - With another user's token (a stranger to the project): 404 Project Not Found on every project
 *   endpoint; the account endpoints show the stranger only themselves.
 * - With a guest's token: every write refused (403, or 404 for what a guest may not even see).
 * - None of these requests changes any data.
 * - No response carries another user's token, a password or token hash, or an integration secret.
 * - No process prints a token, a password or a secret, even at debug level.
 * - The store keeps no token, password or integration secret in clear.
 * The SSRF guard (loopback, private, link-local, IPv6-mapped targets and names resolving to them)
 * is proven in test/unit/lib/outbound/ssrf-guard.spec.ts, down to a real refused connection.
 */
import fs from "fs";
import path from "path";
import { serviceNames } from "../../support/processes";
import { startCluster, type Cluster } from "../../support/cluster";
import { createUser, type TestUser } from "../../support/fixtures";
import { client, type Reply } from "../../support/http";
import { seedProject, validBody } from "../../support/project-fixtures";
import { gatewayRoutes, type GatewayRoute } from "../../support/routes";
import { KeyFactory } from "../../support/ssh-keys";
import { storeDigest } from "../../support/store";

let cluster: Cluster;
let owner: TestUser;
let guest: TestUser;
let stranger: TestUser;
let ids: Record<string, string>;
let integrationSecret: string;
const keys = new KeyFactory();
const routes = gatewayRoutes();
const replies: { who: string; route: string; reply: Reply }[] = [];

const isProjectRoute = (r: GatewayRoute) => r.kind === "api" && r.path.startsWith("/projects/:id");
const routeName = (r: GatewayRoute) => `${r.method} ${r.fullPath}`;

function fill(r: GatewayRoute): string {
	return r.fullPath.replace(/:([A-Za-z_]+)/g, (_, p: string) => encodeURIComponent(ids[p] ?? "1"));
}

/** The route called as `who` (a token, or null for none) with a valid body, recorded for the leak checks. */
async function call(r: GatewayRoute, who: string, token: string | null, headers: Record<string, string> = {}): Promise<Reply> {
	const body = validBody(r, ids, owner, `${who}${replies.length}`) ?? {};
	const api = client(cluster.url, token ?? undefined);
	const opts =
		r.method === "GET" || r.method === "DELETE"
			? {
					query: Object.fromEntries(
						Object.entries(body)
							.filter(([, v]) => typeof v !== "object")
							.map(([k, v]) => [k, String(v)]),
					),
					headers,
				}
			: { body, headers };
	const reply = await api.request(r.method, fill(r), { ...opts, token });
	replies.push({ who, route: routeName(r), reply });
	return reply;
}

const secrets = () => ({
	[`root's token`]: cluster.rootToken,
	[`owner's token`]: owner.token,
	[`guest's token`]: guest.token,
	[`stranger's token`]: stranger.token,
	[`root's password`]: cluster.rootPassword,
	[`owner's password`]: `password-${owner.username}`,
	[`guest's password`]: `password-${guest.username}`,
	[`the integration secret`]: integrationSecret,
	[`the internal API secret`]: cluster.internalSecret,
});

beforeAll(async () => {
	const backend = serviceNames()
		.filter(s => s !== "api")
		.join(",");
	// Limits are off: here every refusal must be the 401 itself (test/e2e/edge/edge-attacks.spec.ts proves the limits).
	cluster = await startCluster({
		nodes: { api: "api", backend },
		env: { LOG_LEVEL: "debug", RATE_LIMIT_PER_MINUTE: "0", AUTH_FAILURE_LIMIT: "10000" },
		keepAllOutput: true,
	});
	owner = await createUser(cluster.api());
	guest = await createUser(cluster.api());
	stranger = await createUser(cluster.api());
	({ ids, integrationSecret } = await seedProject(cluster, owner, keys, { member: guest, memberLevel: 10 }));
}, 180000);

afterAll(async () => {
	keys.cleanup();
	await cluster?.stop();
});

it("covers every routed endpoint", () => {
	expect(routes.length).toBeGreaterThan(20);
	expect(routes.filter(isProjectRoute).length).toBeGreaterThan(15);
	expect(routes.filter(r => r.kind !== "api").length).toBeGreaterThan(3);
});

describe("without a token, or without the shared secret", () => {
	it("answers 401 on every endpoint and changes nothing", async () => {
		const before = storeDigest(cluster.dataDir);
		const wrong: string[] = [];
		for (const r of routes) {
			// Signing in is how one gets a token: without credentials it is refused as well.
			const reply =
				r.action === "accounts.login"
					? await client(cluster.url).post("/session", { token: null, body: { login: owner.username, password: "not-the-password" } })
					: await call(r, "anonymous", null);
			if (reply.status !== 401 || JSON.stringify(reply.body) !== JSON.stringify({ message: "401 Unauthorized" }))
				wrong.push(`${routeName(r)} → ${reply.status} ${reply.text.slice(0, 100)}`);
		}
		expect(wrong).toEqual([]);
		expect(storeDigest(cluster.dataDir)).toBe(before);
	});

	it("answers 401 on the internal API to a user's token and to a wrong secret", async () => {
		const wrong: string[] = [];
		for (const r of routes.filter(x => x.kind !== "api")) {
			for (const [who, headers] of [
				["owner", {}],
				["wrong secret", { "Gitlab-Shared-Secret": cluster.internalSecret + "x" }],
			] as const) {
				const reply = await call(r, who, who === "owner" ? owner.token : null, headers);
				if (reply.status !== 401) wrong.push(`${who}: ${routeName(r)} → ${reply.status}`);
			}
		}
		expect(wrong).toEqual([]);
	});
});

describe("with another user's token", () => {
	it("answers 404 Project Not Found on every endpoint of a private project, and changes nothing", async () => {
		const before = storeDigest(cluster.dataDir);
		const wrong: string[] = [];
		for (const r of routes.filter(isProjectRoute)) {
			const reply = await call(r, "stranger", stranger.token);
			if (reply.status !== 404 || JSON.stringify(reply.body) !== JSON.stringify({ message: "404 Project Not Found" }))
				wrong.push(`${routeName(r)} → ${reply.status} ${reply.text.slice(0, 100)}`);
		}
		expect(wrong).toEqual([]);
		expect(storeDigest(cluster.dataDir)).toBe(before);
	});

	it("shows a user only themselves, and lets only admins create users", async () => {
		const me = await call(
			routes.find(r => r.action === "accounts.me")!,
			"stranger",
			stranger.token,
		);
		expect([me.status, me.body.id, me.body.username]).toEqual([200, stranger.id, stranger.username]);
		const other = await call(
			routes.find(r => r.action === "accounts.getUser")!,
			"stranger",
			stranger.token,
		);
		expect(other.status).toBe(200);
		expect(other.body.private_token).toBeUndefined();
		const before = storeDigest(cluster.dataDir);
		const create = await call(
			routes.find(r => r.action === "accounts.createUser")!,
			"stranger",
			stranger.token,
		);
		expect([create.status, create.body]).toEqual([403, { message: "403 Forbidden" }]);
		expect(storeDigest(cluster.dataDir)).toBe(before);
	});
});

describe("with a guest's token", () => {
	it("refuses every write on the project (403, or 404 for what a guest cannot see) and changes nothing", async () => {
		const before = storeDigest(cluster.dataDir);
		const wrong: string[] = [];
		for (const r of routes.filter(x => isProjectRoute(x) && x.method !== "GET")) {
			const reply = await call(r, "guest", guest.token);
			// A snippet the guest cannot see is, to them, one that does not exist, whose DELETE the
			// spec answers with 200 and nothing done (a 404 would reveal that it exists).
			const noOpDelete = r.action === "snippets.remove" && reply.status === 200 && reply.text === "{}";
			if (reply.status !== 403 && reply.status !== 404 && !noOpDelete) wrong.push(`${routeName(r)} → ${reply.status} ${reply.text.slice(0, 100)}`);
		}
		expect(wrong).toEqual([]);
		expect(storeDigest(cluster.dataDir)).toBe(before);
	});

	it("reads only what a guest may: builds, their traces and artifacts, and integration settings are refused", async () => {
		const before = storeDigest(cluster.dataDir);
		const statuses: Record<string, number> = {};
		for (const r of routes.filter(x => isProjectRoute(x) && x.method === "GET")) statuses[routeName(r)] = (await call(r, "guest", guest.token)).status;
		expect(Object.values(statuses).every(s => s === 200 || s === 403 || s === 404)).toBe(true);
		for (const refused of ["/builds/:build_id", "/builds/:build_id/trace", "/builds/:build_id/artifacts", "/services/:slug"])
			expect([refused, statuses[`GET /projects/:id${refused}`]]).toEqual([refused, 403]);
		// The owner's private snippet is hidden from everyone else in the project.
		expect(statuses["GET /projects/:id/snippets/:snippet_id"]).toBe(404);
		expect(statuses["GET /projects/:id/labels"]).toBe(200);
		expect(storeDigest(cluster.dataDir)).toBe(before);
	});
});

describe("secrets", () => {
	it("never come back in a response: no other user's token, no hash, no integration secret", async () => {
		// Everything above, plus every read as the owner and as root.
		for (const r of routes.filter(x => x.method === "GET")) {
			await call(r, "owner", r.kind === "api" ? owner.token : null, r.kind === "api" ? {} : { "Gitlab-Shared-Secret": cluster.internalSecret });
			if (r.kind === "api") await call(r, "root", cluster.rootToken);
		}
		const own: Record<string, string> = { anonymous: "", stranger: stranger.token, guest: guest.token, owner: owner.token, root: cluster.rootToken };
		const leaks: string[] = [];
		for (const { who, route, reply } of replies) {
			for (const [what, value] of Object.entries(secrets())) {
				if (value === own[who]) continue; // GET /user and POST /session show the caller's own token, as GitLab 8 does
				if (reply.text.includes(value)) leaks.push(`${what} in ${who}'s ${route}`);
			}
			if (/"(password_hash|token_hash|token_enc)"/.test(reply.text)) leaks.push(`a stored credential field in ${who}'s ${route}`);
		}
		expect(leaks).toEqual([]);
		const settings = await client(cluster.url, owner.token).get(`/projects/${ids.id}/services/pipeline-service-a`);
		expect(settings.status).toBe(200);
		expect(settings.body.properties.token).toBeUndefined();
	});

	it("never appear in any process's output, even at debug level", () => {
		const output = [...cluster.nodes.keys()].map(name => cluster.logs(name)).join("\n");
		expect(output.length).toBeGreaterThan(10000); // debug logging did happen
		const found = Object.entries(secrets())
			.filter(([, value]) => output.includes(value))
			.map(([what]) => what);
		expect(found).toEqual([]);
	});

	it("are not kept in clear in the store", () => {
		const found: string[] = [];
		const walk = (dir: string) => {
			for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
				const abs = path.join(dir, entry.name);
				if (entry.isDirectory()) walk(abs);
				else {
					const text = fs.readFileSync(abs).toString("latin1");
					for (const [what, value] of Object.entries(secrets()))
						if (what !== "the internal API secret" && text.includes(value)) found.push(`${what} in ${path.relative(cluster.dataDir, abs)}`);
				}
			}
		};
		walk(cluster.dataDir);
		expect(found).toEqual([]);
	});
});
