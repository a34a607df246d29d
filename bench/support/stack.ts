/**
 * A deployment of the service for a benchmark: one or more moleculer-runner processes over the
 * shared loopback NATS (a namespace of its own) or none, with the Redis or the memory cacher, a
 * fresh DATA_DIR, a known root token, and the rate limit high enough never to trigger (so its
 * cost is measured but it does not refuse the load).
 */
import fs from "fs";
import os from "os";
import path from "path";
import Redis from "ioredis";
import { generateToken } from "../../lib/crypto/tokens";
import { apiRequest, expectStatus, type ApiReply } from "./http";
import { freePort, startServiceProcess, stopProcess, type ServiceProcess } from "../../test/support/processes";

export const NATS_URL = "nats://127.0.0.1:4222";
export const REDIS_URL = "redis://127.0.0.1:6379";

export interface StackOptions {
	/** Process name → SERVICES value; "" runs every service in one process (the all-in-one `npm start`). */
	nodes: Record<string, string>;
	/** Join the processes over the shared NATS (default: no transporter, for a single all-in-one process). */
	nats?: boolean;
	/** Redis cacher and rate-limit store on the shared Redis (default: in memory). */
	redis?: boolean;
	env?: Record<string, string>;
	/** Readiness poll interval in ms (start-up timing polls often). */
	pollMs?: number;
	/** Reuse a data directory (e.g. to time restarts); default: a fresh one, removed on stop. */
	dataDir?: string;
	/** Root's token; a restart on an existing data directory must pass the one root was created with. */
	rootToken?: string;
}

/** The deployments' internal API secret: long enough that the gateway does not limit it as a guessable one (docs/configuration.md#limits). */
export const BENCH_INTERNAL_SECRET = "bench-internal-secret-0123456789abcdef";

export class Stack {
	readonly processes: ServiceProcess[] = [];
	readonly rootToken: string;
	readonly namespace = `bench-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
	readonly dataDir: string;
	private readonly ownDataDir: boolean;
	port = 0;

	constructor(private readonly opts: StackOptions) {
		this.ownDataDir = !opts.dataDir;
		this.rootToken = opts.rootToken ?? generateToken();
		this.dataDir = opts.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), "glv3-bench-"));
	}

	get url(): string {
		return `http://127.0.0.1:${this.port}/api/v3`;
	}

	async start(): Promise<this> {
		this.port = await freePort();
		const env: Record<string, string> = {
			NODE_ENV: "production",
			NAMESPACE: this.namespace,
			DATA_DIR: this.dataDir,
			PORT: String(this.port),
			GITLAB_ROOT_TOKEN: this.rootToken,
			GITLAB_ROOT_PASSWORD: "bench-root-password",
			SECRETS_KEY: "bench-secrets-key-0123456789",
			INTERNAL_API_SECRET: BENCH_INTERNAL_SECRET,
			RATE_LIMIT_PER_MINUTE: String(1e9),
			LOG_LEVEL: "warn",
			LOG_FORMAT: "text",
			...(this.opts.nats ? { TRANSPORTER: NATS_URL } : {}),
			...(this.opts.redis ? { CACHER: REDIS_URL } : {}),
			// Profiling: BENCH_NODE_OPTIONS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles every process started here.
			...(process.env.BENCH_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS } : {}),
			...this.opts.env,
		};
		for (const [name, services] of Object.entries(this.opts.nodes)) {
			this.processes.push(await startServiceProcess({ name, services, env: { ...env, NODE_ID: `${name}-${this.namespace}` }, pollMs: this.opts.pollMs }));
		}
		if (this.processes.some(p => p.services === "" || p.services.split(",").includes("api"))) await this.waitServed();
		return this;
	}

	/** Until the gateway reaches accounts (services over NATS are discovered a moment after /ready). */
	private async waitServed(): Promise<void> {
		const deadline = Date.now() + 30000;
		let last: ApiReply | null;
		while ((last = await apiRequest(this.url, "GET", "/user", { token: this.rootToken }).catch(() => null))?.status !== 200) {
			if (Date.now() > deadline) throw new Error(`the gateway did not reach accounts within 30 s (GET /user: ${last?.status ?? "no answer"})`);
			await new Promise(r => setTimeout(r, 100));
		}
	}

	request(method: string, path: string, opts: { token?: string; json?: unknown } = {}): Promise<ApiReply> {
		return apiRequest(this.url, method, path, { token: this.rootToken, ...opts });
	}

	expect(status: number, method: string, path: string, opts: { token?: string; json?: unknown } = {}): Promise<ApiReply> {
		return expectStatus(status, this.url, method, path, { token: this.rootToken, ...opts });
	}

	/** Waits until a route no longer answers 503 (its service has been discovered over NATS). */
	async waitForRoute(path: string): Promise<void> {
		const deadline = Date.now() + 30000;
		while ((await this.request("GET", path)).status === 503) {
			if (Date.now() > deadline) throw new Error(`GET ${path} still 503 after 30 s`);
			await new Promise(r => setTimeout(r, 100));
		}
	}

	/** Stops one process and starts it again with the same settings (to read its memory at rest, say). */
	async restart(name: string): Promise<ServiceProcess> {
		const i = this.processes.findIndex(p => p.name === name);
		if (i < 0) throw new Error(`no process ${name} in this stack`);
		const old = this.processes[i];
		await stopProcess(old, "SIGTERM");
		this.processes[i] = await startServiceProcess({ name, services: old.services, env: old.env, pollMs: this.opts.pollMs });
		return this.processes[i];
	}

	async stop(): Promise<void> {
		await Promise.all(this.processes.map(p => stopProcess(p, "SIGTERM")));
		if (this.opts.redis) await dropCacheKeys(this.namespace);
		if (this.ownDataDir) fs.rmSync(this.dataDir, { recursive: true, force: true });
	}
}

/** Removes this stack's cache entries from the shared Redis (only its own namespace's keys). */
async function dropCacheKeys(namespace: string): Promise<void> {
	const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
	try {
		await redis.connect();
		let cursor = "0";
		do {
			const [next, keys] = await redis.scan(cursor, "MATCH", `MOL-${namespace}-*`, "COUNT", 500);
			if (keys.length) await redis.del(...keys);
			cursor = next;
		} while (cursor !== "0");
	} finally {
		redis.disconnect();
	}
}
