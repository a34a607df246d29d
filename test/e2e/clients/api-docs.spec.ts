/**
 * The API's own description, served by a gateway that runs apart from the services (over NATS):
 * GET /api/v3/openapi.json is a valid OpenAPI 3.1 document that describes exactly the aliases the
 * running gateway mounts (and, beside a template route, the literal paths it answers: nothing else),
 * with the parameter schemas of the actions behind them; GET /api/v3/docs
 * renders it in headless Chromium (Debian's chromium, driven by playwright-core) from this
 * gateway alone, every route on the page. Neither needs a token.
 */
import fs from "fs";
import os from "os";
import path from "path";
import { ServiceBroker } from "moleculer";
import { chromium, type Browser } from "playwright-core";
import { runCommand } from "../../support/commands";
import { ROOT } from "../../support/processes";
import { gatewayRoutes } from "../../support/routes";
import { NATS_URL } from "../../support/servers";
import { startCluster, type Cluster } from "../../support/cluster";

const CHROMIUM = "/usr/bin/chromium";
const CHROMIUM_FLAGS = [
	"--headless",
	"--no-sandbox",
	"--disable-gpu",
	"--disable-background-networking",
	"--disable-component-update",
	"--disable-sync",
	"--no-first-run",
];
/** Where the screenshot goes (.tmp/ is git-ignored). */
const SCREENSHOT = path.join(ROOT, ".tmp/screenshots/api-docs.png");
const VALIDATOR_CLI = path.join(ROOT, "node_modules/@seriousme/openapi-schema-validator/bin/validate-api-cli.js");

type Doc = {
	openapi: string;
	paths: Record<string, Record<string, { security?: unknown[]; parameters?: { name: string; in: string }[]; "x-moleculer-action"?: string }>>;
};

let cluster: Cluster;
let doc: Doc;
/** "GET /projects/{id}/labels" for every operation of the document. */
let documented: string[];

const openApiPath = (p: string) => p.replace(/[:*]([A-Za-z_][A-Za-z0-9_]*)/g, "{$1}");

/** Whether `path` is `template` with a literal segment for at least one of its `{param}`s, each `{param}` one segment. */
function literalInstance(path: string, template: string): boolean {
	const [p, t] = [path.split("/"), template.split("/")];
	const param = (segment: string) => /^\{[^}]+\}$/.test(segment);
	if (p.length !== t.length) return false;
	if (!t.some((segment, i) => param(segment) && !param(p[i]))) return false;
	return t.every((segment, i) => (param(segment) ? p[i] !== "" : segment === p[i]));
}

beforeAll(async () => {
	// The gateway alone in its process; every service with routes in another (workers have none).
	cluster = await startCluster({ nodes: { api: "api", services: "accounts,labels,deploy-keys,snippets,builds,integrations,events" } });
	// Every action reached the gateway's registry (a route served, not 503).
	await cluster.waitForRoute("GET", "/projects/1/services/emails-on-push");
	await cluster.waitForRoute("GET", "/projects/1/builds");
	const res = await fetch(`${cluster.url}/openapi.json`);
	expect(res.status).toBe(200);
	expect(res.headers.get("content-type")).toBe("application/json");
	doc = (await res.json()) as Doc;
	documented = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map(m => `${m.toUpperCase()} ${p}`));
}, 90000);

afterAll(async () => {
	await cluster?.stop();
});

describe("GET /api/v3/openapi.json", () => {
	async function validate(document: unknown): Promise<{ valid: boolean; errors?: unknown }> {
		const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "glv3-openapi-")), "openapi.json");
		fs.writeFileSync(file, JSON.stringify(document));
		// The validator is ESM-only: its own CLI, in a process of its own.
		const run = await runCommand(process.execPath, [VALIDATOR_CLI, file], { timeoutMs: 60000 });
		fs.rmSync(path.dirname(file), { recursive: true, force: true });
		if (!run.stdout.trim()) throw new Error(`openapi validator: ${run.stderr}`);
		return JSON.parse(run.stdout);
	}

	it("is a valid OpenAPI 3.1 document (and the validator does refuse a broken one)", async () => {
		expect(doc.openapi).toBe("3.1.0");
		expect(await validate(doc)).toEqual({ valid: true });
		const broken = JSON.parse(JSON.stringify(doc));
		delete broken.info;
		broken.paths["/user"].get.responses = "none";
		expect((await validate(broken)).valid).toBe(false);
	}, 120000);

	it("describes exactly the aliases the running gateway mounts", async () => {
		// The gateway's own list of what it routes (moleculer-web's api.listAliases), asked over NATS.
		const observer = new ServiceBroker({
			namespace: cluster.namespace,
			nodeID: `docs-observer-${process.pid}`,
			transporter: { type: "NATS", options: { url: NATS_URL } },
			serializer: "JSONExt",
			logger: false,
		});
		await observer.start();
		try {
			await observer.waitForServices("api", 10000);
			const aliases = await observer.call<{ methods: string; fullPath: string }[], Record<string, never>>("api.listAliases", {});
			const mounted = aliases.map(a => `${a.methods} ${openApiPath(a.fullPath.replace(/^\/api\/v3/, ""))}`).sort();
			expect(mounted.length).toBeGreaterThan(40);
			// Every alias is documented; an operation beyond them is a URL a mounted template answers
			// (OpenAPI describes a URL by its most literal path): the same method, the same action.
			expect(mounted.filter(m => !documented.includes(m))).toEqual([]);
			const operation = (route: string) => {
				const [method, p] = route.split(" ");
				return doc.paths[p][method.toLowerCase()];
			};
			const unmounted = documented.filter(d => !mounted.includes(d));
			const unexplained = unmounted.filter(d => {
				const [method, p] = d.split(" ");
				return !mounted.some(m => {
					const [mountedMethod, template] = m.split(" ");
					if (mountedMethod !== method || !literalInstance(p, template)) return false;
					return operation(m)["x-moleculer-action"] === operation(d)["x-moleculer-action"];
				});
			});
			expect(unexplained).toEqual([]);
			expect(unmounted).toContain("PUT /api/v4/projects/{id}/integrations/slack");
			expect(unmounted).toContain("GET /api/v4/projects/{id}/jobs/{job_id}/artifacts/keep");
		} finally {
			await observer.stop();
		}
	});

	it("gives each route the action behind it, its path parameters, its parameters, and who may call it", () => {
		const routes = gatewayRoutes();
		expect(routes.length).toBeGreaterThan(40);
		for (const route of routes) {
			const op = doc.paths[openApiPath(route.fullPath)]?.[route.method.toLowerCase()];
			expect([route.method, route.fullPath, !!op]).toEqual([route.method, route.fullPath, true]);
			if (route.action) expect(op["x-moleculer-action"]).toBe(route.action);
			const named = (op.parameters ?? []).map(p => `${p.in}:${p.name}`);
			for (const p of route.fullPath.match(/:([A-Za-z_]+)/g) ?? []) expect(named).toContain(`path:${p.slice(1)}`);
			const security = JSON.stringify(op.security);
			if (route.kind !== "api") expect(security).toBe('[{"sharedSecret":[]}]');
			else if (route.auth === "none") expect(security).toBe("[]");
			else if (route.auth === "optional") expect(security).toMatch(/^\[\{\},\{"privateToken":\[\]\}/);
			else expect(security).toMatch(/^\[\{"privateToken":\[\]\}/);
		}
		// A body's parameters with their types and bounds, from the action's fastest-validator schema.
		const createProject = doc.paths["/projects"].post as any;
		const body = createProject.requestBody.content["application/json"].schema;
		expect(body.required).toEqual(["name"]);
		expect(body.properties.name).toEqual({ type: "string", maxLength: 255 });
		// An optional field sent as null in JSON is not sent (docs/api.md#parameters).
		expect(body.properties.visibility_level.type).toEqual(["integer", "null"]);
		// A list's paging and its headers.
		const builds = doc.paths["/projects/{id}/builds"].get as any;
		expect(builds.parameters.map((p: { name: string }) => p.name)).toEqual(["id", "scope", "page", "per_page"]);
		expect(Object.keys(builds.responses["200"].headers)).toContain("X-Total");
		expect(builds.responses["401"]).toEqual({ $ref: "#/components/responses/Unauthorized" });
	});

	it("needs no token, and neither does the page; each request counts against the address", async () => {
		for (const p of ["/openapi.json", "/docs", "/docs/assets/swagger-ui-bundle.js"]) {
			const first = await fetch(`${cluster.url}${p}`);
			const second = await fetch(`${cluster.url}${p}`);
			expect([p, first.status, second.status]).toEqual([p, 200, 200]);
			const remaining = [first, second].map(res => Number(res.headers.get("ratelimit-remaining")));
			expect([p, remaining[0] > 0, remaining[1]]).toEqual([p, true, remaining[0] - 1]);
		}
		// Built once for the services as they are: the same bytes again.
		const [a, b] = await Promise.all([1, 2].map(() => fetch(`${cluster.url}/openapi.json`).then(res => res.text())));
		expect(b).toBe(a);
		expect(JSON.parse(a)).toEqual(doc);
		expect((await fetch(`${cluster.url}/docs/assets/..%2F..%2Fpackage.json`)).status).toBe(404);
		expect((await fetch(`${cluster.url}/docs/assets/index.html`)).status).toBe(404);
	});
});

describe("GET /api/v3/docs in headless Chromium", () => {
	let browser: Browser;
	beforeAll(async () => {
		if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (npm test does, through .ci/peers)`);
		browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });
	}, 60000);
	afterAll(async () => {
		await browser?.close();
	});

	it("renders every route of the document from the gateway alone, and saves a screenshot", async () => {
		const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
		const requested: string[] = [];
		const problems: string[] = [];
		page.on("request", r => requested.push(r.url()));
		page.on("pageerror", err => problems.push(`page error: ${err.message}`));
		page.on("console", m => m.type() === "error" && problems.push(`console: ${m.text()}`));
		const res = await page.goto(`${cluster.url}/docs`);
		expect(res?.status()).toBe(200);
		expect(res?.headers()["content-security-policy"]).toContain("default-src 'none'");
		await page.waitForSelector(".opblock", { timeout: 30000 });
		await expect(page.locator(".info .title").innerText()).resolves.toContain("GitLab API v3 service");

		// Swagger UI virtualizes a list of 150 tags and operations or more (swagger-ui-dist 5.35):
		// only those near the viewport are in the page, so it is read while scrolled through.
		const shown = new Set<string>();
		for (let atBottom = false; !atBottom;) {
			const blocks = await page.$$eval(".opblock", all =>
				all.map(b => {
					const method = b.querySelector(".opblock-summary-method")?.textContent?.trim();
					return `${method} ${b.querySelector(".opblock-summary-path")?.getAttribute("data-path")}`;
				}),
			);
			blocks.forEach(b => shown.add(b));
			atBottom = await page.evaluate<boolean>("window.scrollY + window.innerHeight >= document.documentElement.scrollHeight - 1");
			await page.evaluate("window.scrollBy(0, window.innerHeight / 2)");
			// Two frames: the virtualizer hears the scroll, then React renders what came into view.
			await page.evaluate("new Promise(resolve => requestAnimationFrame(() => requestAnimationFrame(resolve)))");
		}
		expect([...shown].sort()).toEqual([...documented].sort());
		for (const route of gatewayRoutes()) expect([...shown]).toContain(`${route.method} ${openApiPath(route.fullPath)}`);

		// Nothing came from anywhere but this gateway: no CDN, no validator badge, no fonts.
		const origin = new URL(cluster.url).origin;
		expect(requested.filter(u => !u.startsWith(`${origin}/`) && !u.startsWith("data:"))).toEqual([]);
		expect(problems).toEqual([]);

		fs.mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
		await page.screenshot({ path: SCREENSHOT, fullPage: true });
		expect(fs.statSync(SCREENSHOT).size).toBeGreaterThan(10000);
		await page.close();
	}, 60000);
});
