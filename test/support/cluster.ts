/**
 * Runs services as separate Node processes joined by the real NATS, as production does:
 * moleculer-runner on the compiled dist/, one process per entry, Redis as cacher. Data in the
 * embedded store under a scratch DATA_DIR that every process shares, or, in the e2e-mongo project
 * (E2E_STORE=mongo), in MongoDB (MONGO_URI) on a wire-protocol server the cluster starts
 * (test/support/mongo-server.ts). Artifacts and traces under that DATA_DIR, or, in the e2e-s3
 * project (E2E_ARTIFACTS=s3), in a bucket of an S3 server the cluster starts (test/support/s3-server.ts);
 * `stored` shows what the store holds either way.
 */
import fs from "fs";
import os from "os";
import path from "path";
import { freePort, nodeSeesAll, SERVICE_DIR, startServiceProcess, stopProcess, type ServiceProcess } from "./processes";
import { generateToken } from "../../lib/crypto/tokens";
import { deletePushChannel } from "../../lib/push/provisioning";
import { client, waitFor, type Client } from "./http";
import { dropDatabase, startMongoServer, type MongoServer } from "./mongo-server";
import { S3Server } from "./s3-server";
import { NATS_URL, REDIS_URL, requireServers, uniqueNamespace } from "./servers";
import { bucketStore, filesystemStore, type StoredFiles } from "./stored-files";

/** A running node of the cluster (spawned by the launcher the benchmarks share). */
export type NodeProcess = ServiceProcess;

export interface ClusterOptions {
	/** Process name → SERVICES value, e.g. { api: "api", accounts: "accounts", labels: "labels" }. */
	nodes: Record<string, string>;
	/** Extra environment for every process. */
	env?: Record<string, string>;
	/** Use Redis as cacher (default true). */
	redis?: boolean;
	/** Join the processes over NATS (default true); false runs `npm start`'s shape: no transporter, memory cacher. */
	nats?: boolean;
	/** Keep every line each process prints (default: the latest 500 chunks), e.g. to scan logs for secrets. */
	keepAllOutput?: boolean;
	/**
	 * GITLAB_URL is the gateway's own address, as a deployment sets it to the address its clients
	 * use (python-gitlab warns when the web_url it reads has another base than its own).
	 */
	ownGitlabUrl?: boolean;
}

export class Cluster {
	readonly nodes = new Map<string, NodeProcess>();
	readonly namespace = uniqueNamespace("e2e");
	readonly dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "glv3-e2e-"));
	/** The cluster's MongoDB server and database, in the e2e-mongo project; none where the data is in the embedded store. */
	private mongo?: MongoServer;
	mongoUri = "";
	/** The cluster's S3 server and bucket, in the e2e-s3 project; none where artifacts are files under DATA_DIR. */
	s3?: S3Server;
	bucket = "";
	/** What the artifact store holds. */
	stored: StoredFiles = filesystemStore(this.dataDir);
	readonly rootToken = generateToken();
	readonly rootPassword = "root-password-123";
	readonly internalSecret = "e2e-internal-secret-" + generateToken() + generateToken();
	port = 0;
	baseEnv: Record<string, string> = {};

	constructor(private readonly opts: ClusterOptions) {}

	get url(): string {
		return `http://127.0.0.1:${this.port}/api/v3`;
	}

	/** A client for the gateway, acting as root unless another token is given. */
	api(token: string | null = this.rootToken): Client {
		return client(this.url, token ?? undefined);
	}

	async start(): Promise<this> {
		const nats = this.opts.nats !== false;
		const redis = nats && this.opts.redis !== false;
		await requireServers(...(nats ? (["nats"] as const) : []), ...(redis ? (["redis"] as const) : []));
		this.port = await freePort();
		if (process.env.E2E_STORE === "mongo") {
			this.mongo = await startMongoServer();
			this.mongoUri = this.mongo.database(this.namespace);
		}
		if (process.env.E2E_ARTIFACTS === "s3") {
			this.s3 = await S3Server.start();
			this.bucket = await this.s3.createBucket();
			this.stored = bucketStore(this.s3.objects(this.bucket));
		}
		this.baseEnv = {
			PATH: process.env.PATH ?? "",
			NODE_ENV: "production",
			SERVICEDIR: SERVICE_DIR,
			...(nats ? { TRANSPORTER: NATS_URL } : {}),
			...(redis ? { CACHER: REDIS_URL } : {}),
			NAMESPACE: this.namespace,
			DATA_DIR: this.dataDir,
			...(this.mongoUri ? { MONGO_URI: this.mongoUri } : {}),
			...(this.s3 ? this.s3.env(this.bucket) : {}),
			PORT: String(this.port),
			GITLAB_ROOT_TOKEN: this.rootToken,
			GITLAB_ROOT_PASSWORD: this.rootPassword,
			SECRETS_KEY: "e2e-secrets-key-0123456789",
			INTERNAL_API_SECRET: this.internalSecret,
			LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "warn",
			LOG_FORMAT: "text",
			...(this.opts.ownGitlabUrl ? { GITLAB_URL: `http://127.0.0.1:${this.port}` } : {}),
			...this.opts.env,
		};
		await Promise.all(Object.entries(this.opts.nodes).map(([name, services]) => this.spawnNode(name, services)));
		await this.waitForGatewayToSeeAll();
		await waitFor("the gateway to reach accounts", async () => (await this.api().get("/user")).status === 200, 30000);
		return this;
	}

	async spawnNode(name: string, services: string, env: Record<string, string> = {}): Promise<NodeProcess> {
		const nodeEnv = { ...this.baseEnv, NODE_ID: `${name}-${this.namespace}`, ...env };
		return startServiceProcess(
			{ name, services, env: nodeEnv, maxOutputChunks: this.opts.keepAllOutput ? Infinity : 500 },
			// Registered before the wait, so that stop() also ends a node that never became ready.
			node => this.nodes.set(name, node),
		);
	}

	/** Ready processes are not yet known to each other: the gateway must see every node before a test counts on it. */
	async waitForGatewayToSeeAll(): Promise<void> {
		const gateway = [...this.nodes.values()].find(n => n.services === "" || n.services.split(",").includes("api"));
		if (gateway && !(await nodeSeesAll(Number(gateway.env.METRICS_PORT), this.nodes.size)))
			throw new Error(`the gateway did not see all ${this.nodes.size} nodes within 30 s`);
	}

	/** Waits until a route stops answering 503 (its service has been discovered). */
	async waitForRoute(method: string, routePath: string, token: string | null = this.rootToken): Promise<void> {
		await waitFor(`${method} ${routePath} to be served`, async () => (await this.api(token).request(method, routePath)).status !== 503, 30000);
	}

	logs(name: string): string {
		return this.nodes.get(name)?.output.join("") ?? "";
	}

	async kill(name: string, signal: NodeJS.Signals = "SIGKILL"): Promise<number | null> {
		const node = this.nodes.get(name);
		if (!node) return null;
		// A process that does not stop within the graceful window is killed.
		const code = await stopProcess(node, signal, 15000);
		this.nodes.delete(name);
		return code;
	}

	async stop(): Promise<void> {
		await Promise.all([...this.nodes.keys()].map(name => this.kill(name, "SIGTERM")));
		fs.rmSync(this.dataDir, { recursive: true, force: true });
		// Dropped first: a server the cluster did not start (TEST_MONGO_URL) keeps its databases.
		if (this.mongo) await dropDatabase(this.mongoUri).finally(() => this.mongo!.stop());
		await this.s3?.stop();
		// The durable `push` channel's streams of this namespace (created when events or a worker ran).
		await deletePushChannel(NATS_URL, REDIS_URL, this.namespace).catch(() => undefined);
	}
}

export async function startCluster(opts: ClusterOptions): Promise<Cluster> {
	const cluster = new Cluster(opts);
	try {
		return await cluster.start();
	} catch (err) {
		await cluster.stop();
		throw err;
	}
}
