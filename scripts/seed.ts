/**
 * `npm run seed -- --builds N`: a demo project with N builds across every state, with traces and
 * artifacts, made against a running service as a CI runner and a user would: the project with
 * root's token on the public API, the builds
 *   - over HTTP (`--via http`, the default without TRANSPORTER): the internal build API with
 *     INTERNAL_API_SECRET, one request per step (create, running, success…, cancel), which works
 *     against `npm start` as is; a few hundred builds a second;
 *   - or over the broker (`--via broker`, the default when TRANSPORTER is set): the seed joins the
 *     cluster as a node of its own and calls `builds.createBatch`, the same transitions in batches
 *     of 500; tens of thousands of builds a minute;
 *   - or straight into the embedded store under DATA_DIR (`--via store`, ./seed-store.ts): records
 *     only, no traces or artifacts; a million builds in about a minute, what the benchmarks use.
 * Artifacts always go up through the internal HTTP API (streamed like a runner's).
 *
 *   npm run seed -- --builds 1000
 *   TRANSPORTER=nats://127.0.0.1:4222 npm run seed -- --builds 100000
 *   npm run seed -- --builds 50 --project 7          add to an existing project
 *
 * Options (defaults from the same environment the service reads, see docs/configuration.md):
 *   --builds N           how many builds (required)
 *   --url URL            the API base (default http://127.0.0.1:$PORT/api/v3)
 *   --token TOKEN        an admin's private token (default GITLAB_ROOT_TOKEN)
 *   --secret SECRET      the internal API secret (default INTERNAL_API_SECRET)
 *   --project ID         seed into this project instead of creating one
 *   --via http|broker|store  how builds are made (see above)
 *   --concurrency N      requests (http) or batches (broker) in flight (default 16 / 2)
 *   --traces EVERY       a trace on every EVERY-th build (default 5; 0: none)
 *   --artifacts EVERY    artifacts on every EVERY-th finished build (default 10; 0: none)
 *   --artifact-bytes N   size of each artifacts file (default 65536)
 */
import crypto from "crypto";
import { ServiceBroker, type BrokerOptions } from "moleculer";
import { config } from "../config";
import { seedIntoStore } from "./seed-store";
import { storedZip } from "./zip";

export interface SeedOptions {
	builds: number;
	url: string;
	token: string;
	secret: string;
	project?: number;
	via?: "http" | "broker" | "store";
	/** For `via: "store"`: the service's DATA_DIR (default: config's). */
	dataDir?: string;
	/** For `via: "broker"`: the transporter and namespace of the cluster (default: config's). */
	transporter?: string;
	namespace?: string;
	concurrency?: number;
	traceEvery?: number;
	artifactsEvery?: number;
	artifactBytes?: number;
	/** Called as builds complete (for a progress bar). */
	onProgress?: (done: number, total: number) => void;
}

export interface SeedResult {
	projectId: number;
	pathWithNamespace: string;
	byStatus: Record<string, number>;
	firstBuildId: number;
	lastBuildId: number;
	seconds: number;
}

/**
 * Builds per `builds.createBatch` call (its limit is 500). The store takes one project's batches in
 * turn, so a call in flight also waits for the one before it: small batches keep every call far
 * inside the request timeout on a slow store too (FerretDB on a busy machine took over 120 s for two
 * of 500), for one more NATS round trip per hundred builds.
 */
const BATCH = 100;

/** The mix of final states: mostly green, some red, a few still going or stopped. */
const STATES = ["success", "success", "failed", "success", "running", "success", "canceled", "success", "failed", "pending"] as const;
const NAMES = ["rspec", "rubocop", "spinach", "jest", "eslint", "build", "deploy"];
const STAGES: Record<string, string> = { rspec: "test", rubocop: "test", spinach: "test", jest: "test", eslint: "test", build: "build", deploy: "deploy" };
const AUTHORS = [
	["Dmitriy Zaporozhets", "dmitriy.zaporozhets@gmail.com"],
	["Ada Lovelace", "ada@example.com"],
	["Grace Hopper", "grace@example.com"],
];

let warnedRateLimit = false;

async function call(
	base: string,
	method: string,
	path: string,
	opts: { headers?: Record<string, string>; json?: unknown; body?: string | Buffer; query?: Record<string, string> } = {},
) {
	const url = new URL(base + path);
	for (const [k, v] of Object.entries(opts.query ?? {})) url.searchParams.set(k, v);
	const headers: Record<string, string> = { ...opts.headers };
	let body: string | Buffer | undefined = opts.body;
	if (opts.json !== undefined) {
		headers["Content-Type"] = "application/json";
		body = JSON.stringify(opts.json);
	}
	for (let attempt = 1; ; attempt++) {
		try {
			const res = await fetch(url, { method, headers, body });
			const text = await res.text();
			// 503 while a service is (re)discovered: wait a little and try again.
			if (res.status === 503 && attempt < 20) {
				await new Promise(r => setTimeout(r, 250 * attempt));
				continue;
			}
			// 429: the gateway's rate limit (per address for the internal API). Wait for its window.
			if (res.status === 429 && attempt < 100) {
				if (!warnedRateLimit) {
					warnedRateLimit = true;
					console.error("\nRate limited by the gateway: waiting for each window. Start the service with RATE_LIMIT_PER_MINUTE=0 to seed faster.");
				}
				const reset = Number(res.headers.get("x-rate-limit-reset"));
				await new Promise(r => setTimeout(r, Math.min(60000, Math.max(250, Number.isFinite(reset) ? reset - Date.now() : 1000))));
				continue;
			}
			let parsed: unknown = text;
			try {
				parsed = JSON.parse(text);
			} catch {
				// not JSON
			}
			return { status: res.status, body: parsed };
		} catch (err) {
			if (attempt >= 5) throw err;
			await new Promise(r => setTimeout(r, 250 * attempt));
		}
	}
}

/** The answer's body, of the shape the API documents for it, once its status is the one expected. */
async function must<T = unknown>(expected: number, what: string, reply: Promise<{ status: number; body: unknown }>): Promise<T> {
	const res = await reply;
	if (res.status !== expected) throw new Error(`${what}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
	return res.body as T;
}

function sha(i: number): string {
	return crypto.createHash("sha1").update(`seed commit ${i}`).digest("hex");
}

/**
 * A real zip of about `n` bytes (`unzip -l` lists it): a short report and a binary file of
 * pseudo-random bytes (ruby-gitlab wants at least one non-ASCII byte in a download).
 */
export function artifactBytes(n: number, seed: number): Buffer {
	const buf = crypto.createHash("sha256").update(String(seed)).digest();
	const report = Buffer.from(`Demo artifacts of seeded build ${seed}\n`);
	const files = (binary: Buffer) => [
		{ name: "report.txt", data: report },
		{ name: "coverage/data.bin", data: binary },
	];
	const binary = Buffer.alloc(Math.max(0, n - storedZip(files(Buffer.alloc(0))).length));
	for (let i = 0; i < binary.length; i += buf.length) buf.copy(binary, i, 0, Math.min(buf.length, binary.length - i));
	return storedZip(files(binary));
}

function traceText(name: string, status: string, i: number): string {
	const lines = [`Running with gitlab-ci-multi-runner (build ${i})`, `$ ${name === "jest" ? "npx jest" : `bundle exec ${name}`}`];
	for (let k = 0; k < 5; k++) lines.push(`  example ${k + 1} … ok`);
	lines.push(status === "failed" ? "ERROR: Build failed: exit code 1" : "Build succeeded");
	return lines.join("\n") + "\n";
}

export async function seedBuilds(opts: SeedOptions): Promise<SeedResult> {
	const started = Date.now();
	const base = opts.url.replace(/\/+$/, "");
	const user = { "PRIVATE-TOKEN": opts.token };
	const internal = { "Gitlab-Shared-Secret": opts.secret };
	const me = await must<{ id: number }>(200, "GET /user (is the token right?)", call(base, "GET", "/user", { headers: user }));
	let project: { id: number; path_with_namespace: string };
	if (opts.project)
		project = await must<typeof project>(200, `GET /projects/${opts.project}`, call(base, "GET", `/projects/${opts.project}`, { headers: user }));
	else {
		// Time plus a random tail: two seeds in the same second must not collide on the project path.
		const name = `builds-demo-${new Date().toISOString().replace(/\D/g, "").slice(0, 14)}-${crypto.randomBytes(3).toString("hex")}`;
		project = await must<typeof project>(
			201,
			"POST /projects",
			call(base, "POST", "/projects", { headers: user, json: { name, visibility_level: 20, public_builds: true, description: "Seeded builds" } }),
		);
	}
	const traceEvery = opts.traceEvery ?? 5;
	const artifactsEvery = opts.artifactsEvery ?? 10;
	const size = opts.artifactBytes ?? 65536;
	const byStatus: Record<string, number> = {};
	let first = Number.MAX_SAFE_INTEGER;
	let last = 0;
	let done = 0;

	/** What build `i` is: the same plan whichever way it is made. */
	const plan = (i: number) => {
		const status = STATES[i % STATES.length];
		const name = NAMES[i % NAMES.length];
		const [author_name, author_email] = AUTHORS[i % AUTHORS.length];
		const commitNo = Math.floor(i / NAMES.length);
		const body = {
			project_id: project.id,
			name,
			stage: STAGES[name],
			ref: commitNo % 20 === 0 ? `v1.${commitNo / 20}` : commitNo % 3 === 0 ? "feature/seed" : "master",
			tag: commitNo % 20 === 0,
			user_id: me.id,
			commit: {
				id: sha(commitNo),
				title: `Seeded commit ${commitNo}`,
				message: `Seeded commit ${commitNo}\n\nMade by npm run seed.`,
				author_name,
				author_email,
				created_at: new Date(Date.UTC(2016, 0, 1) + commitNo * 60000).toISOString(),
			},
		};
		return {
			status,
			name,
			body,
			coverage: status === "success" ? 70 + (i % 30) : undefined,
			trace: traceEvery && i % traceEvery === 0 && status !== "pending" ? traceText(name, status, i) : undefined,
			artifacts: artifactsEvery && (status === "success" || status === "failed") && Math.floor(i / STATES.length) % artifactsEvery === 0,
		};
	};
	const uploadArtifacts = (id: number, i: number, name: string) =>
		must(
			200,
			"PUT artifacts",
			call(base, "PUT", `/internal/builds/${id}/artifacts`, {
				headers: { ...internal, "Content-Type": "application/octet-stream" },
				query: { filename: `${name}-artifacts.zip` },
				body: artifactBytes(size, i),
			}),
		);
	const record = (status: string, id: number) => {
		byStatus[status] = (byStatus[status] ?? 0) + 1;
		first = Math.min(first, id);
		last = Math.max(last, id);
		opts.onProgress?.(++done, opts.builds);
	};

	const one = async (i: number) => {
		const p = plan(i);
		const build = await must<{ id: number }>(201, "POST /internal/builds", call(base, "POST", "/internal/builds", { headers: internal, json: p.body }));
		const id = build.id;
		const put = (s: string, coverage?: number) =>
			must(
				200,
				`PUT /internal/builds/${id}`,
				call(base, "PUT", `/internal/builds/${id}`, { headers: internal, json: coverage === undefined ? { status: s } : { status: s, coverage } }),
			);
		if (p.status !== "pending" && p.status !== "canceled") await put("running");
		if (p.trace)
			await must(
				200,
				"PATCH trace",
				call(base, "PATCH", `/internal/builds/${id}/trace`, { headers: { ...internal, "Content-Type": "text/plain" }, body: p.trace }),
			);
		if (p.status === "success" || p.status === "failed") {
			if (p.artifacts) await uploadArtifacts(id, i, p.name);
			await put(p.status, p.coverage);
		}
		if (p.status === "canceled") await must(201, "POST cancel", call(base, "POST", `/projects/${project.id}/builds/${id}/cancel`, { headers: user }));
		record(p.status, id);
	};

	if (opts.via === "store") {
		if (traceEvery || artifactsEvery) throw new Error("--via store writes build records only: pass --traces 0 --artifacts 0");
		await seedIntoStore(opts.dataDir ?? config.dataDir, project.id, opts.builds, plan, record);
	} else if ((opts.via ?? "http") === "http") {
		// A fixed pool of workers taking the next index: bounded concurrency, creation roughly in order.
		let next = 0;
		const workers = Array.from({ length: Math.max(1, Math.min(opts.concurrency ?? 16, opts.builds)) }, async () => {
			while (next < opts.builds) await one(next++);
		});
		await Promise.all(workers);
	} else {
		const broker = new ServiceBroker({
			namespace: opts.namespace ?? config.namespace,
			nodeID: `seed-${process.pid}-${Date.now().toString(36)}`,
			transporter: (opts.transporter ?? config.transporter) as BrokerOptions["transporter"],
			serializer: "JSONExt",
			logger: false,
			requestTimeout: 120000,
		});
		await broker.start();
		try {
			await broker.waitForServices(["builds", "accounts"], 30000);
			let next = 0;
			const workers = Array.from({ length: Math.max(1, opts.concurrency ?? 2) }, async () => {
				while (next < opts.builds) {
					const from = next;
					next = Math.min(opts.builds, next + BATCH);
					const plans = Array.from({ length: next - from }, (_, k) => plan(from + k));
					const { ids } = await broker.call<{ ids: number[] }, object>("builds.createBatch", {
						project_id: project.id,
						builds: plans.map(p => ({ ...p.body, status: p.status, coverage: p.coverage, trace: p.trace })),
					});
					for (const [k, p] of plans.entries()) {
						if (p.artifacts) await uploadArtifacts(ids[k], from + k, p.name);
						record(p.status, ids[k]);
					}
				}
			});
			await Promise.all(workers);
		} finally {
			await broker.stop();
		}
	}
	return {
		projectId: project.id,
		pathWithNamespace: project.path_with_namespace,
		byStatus,
		firstBuildId: first,
		lastBuildId: last,
		seconds: (Date.now() - started) / 1000,
	};
}

/** `[#####·····]  45%  4,500/10,000 builds  812/s  ETA 7s` on a terminal, a line every 10% otherwise. */
export function progressBar(stream: NodeJS.WriteStream = process.stderr) {
	const started = Date.now();
	let lastDecile = -1;
	return (done: number, total: number) => {
		const fraction = total ? done / total : 1;
		const rate = done / Math.max(0.001, (Date.now() - started) / 1000);
		const eta = rate > 0 ? Math.ceil((total - done) / rate) : 0;
		const text = `${Math.round(fraction * 100)
			.toString()
			.padStart(3)}%  ${done.toLocaleString("en-US")}/${total.toLocaleString("en-US")} builds  ${Math.round(rate)}/s  ETA ${eta}s`;
		if (stream.isTTY) {
			const width = 30;
			const filled = Math.round(fraction * width);
			stream.write(`\r[${"#".repeat(filled)}${"·".repeat(width - filled)}] ${text}${done === total ? "\n" : ""}`);
		} else {
			const decile = Math.floor(fraction * 10);
			if (decile !== lastDecile || done === total) {
				lastDecile = decile;
				stream.write(`${text}\n`);
			}
		}
	};
}

function parseArgs(argv: string[]): SeedOptions {
	const get = (name: string) => {
		const i = argv.indexOf(`--${name}`);
		return i >= 0 ? argv[i + 1] : undefined;
	};
	const known = new Set(["builds", "url", "token", "secret", "project", "via", "concurrency", "traces", "artifacts", "artifact-bytes"]);
	for (let i = 0; i < argv.length; i += 2)
		if (!argv[i].startsWith("--") || !known.has(argv[i].slice(2))) throw new Error(`unknown argument ${argv[i]} (see the header of scripts/seed.ts)`);
	const int = (name: string, fallback?: number, min = 0) => {
		const raw = get(name);
		if (raw === undefined) return fallback;
		if (!/^\d+$/.test(raw) || Number(raw) < min) throw new Error(`--${name} must be an integer of at least ${min}`);
		return Number(raw);
	};
	const builds = int("builds", undefined, 1);
	if (builds === undefined) throw new Error("--builds N is required, e.g. npm run seed -- --builds 1000");
	const token = get("token") ?? config.rootToken;
	const secret = get("secret") ?? config.internalApiSecret;
	if (!token) throw new Error("no token: pass --token or set GITLAB_ROOT_TOKEN as for the service");
	if (!secret) throw new Error("no internal API secret: pass --secret or set INTERNAL_API_SECRET as for the service (the internal API is off without it)");
	const via = get("via") ?? (config.transporter ? "broker" : "http");
	if (via !== "http" && via !== "broker" && via !== "store") throw new Error("--via must be http, broker or store");
	if (via === "store" && config.mongoUri) throw new Error("--via store writes into the embedded store; with MONGO_URI set the data is in MongoDB");
	if (via === "broker" && !config.transporter) throw new Error("--via broker needs TRANSPORTER (and NAMESPACE) set as for the service");
	return {
		builds,
		via,
		url: get("url") ?? `http://127.0.0.1:${config.port}/api/v3`,
		token,
		secret,
		project: int("project"),
		concurrency: int("concurrency", via === "broker" ? 2 : 16, 1),
		traceEvery: int("traces", via === "store" ? 0 : 5),
		artifactsEvery: int("artifacts", via === "store" ? 0 : 10),
		artifactBytes: int("artifact-bytes", 65536),
	};
}

async function main(): Promise<void> {
	const opts = parseArgs(process.argv.slice(2));
	const via =
		opts.via === "broker"
			? `the broker (${config.transporter}${config.namespace ? `, namespace ${config.namespace}` : ""})`
			: opts.via === "store"
				? `the embedded store in DATA_DIR=${config.dataDir}`
				: opts.url;
	console.error(`Seeding ${opts.builds.toLocaleString("en-US")} builds through ${via} …`);
	const result = await seedBuilds({ ...opts, onProgress: progressBar() });
	const counts = Object.entries(result.byStatus)
		.map(([s, n]) => `${s} ${n}`)
		.join(", ");
	const ids = `ids ${result.firstBuildId}–${result.lastBuildId}`;
	console.log(`Project ${result.projectId} (${result.pathWithNamespace}): ${opts.builds} builds (${counts}), ${ids}, in ${result.seconds.toFixed(1)} s.`);
	console.log("Try (T: the token the seed used):");
	console.log(`  curl -H "PRIVATE-TOKEN: $T" '${opts.url}/projects/${result.projectId}/builds?scope[]=running&scope[]=failed&per_page=5'`);
	console.log(`  curl -OJ -H "PRIVATE-TOKEN: $T" ${opts.url}/projects/${result.projectId}/builds/<id>/artifacts`);
}

if (require.main === module) {
	main().catch(err => {
		console.error(`seed failed: ${(err as Error).message}`);
		process.exit(1);
	});
}
