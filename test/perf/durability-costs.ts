/**
 * What durability costs, measured on this machine (not a test: `npx tsx test/perf/durability-costs.ts [part…]`):
 *
 * - `records`: the workers' delivery records, claim + complete per delivery, one at a time and
 *   30 at once: Redis (the shared server), a JetStream bucket on the shared single NATS (R1),
 *   and on a three-node cluster started here (R3, as deployed).
 * - `channel`: the in-process channel alone (three groups, each delivery recorded), publishing
 *   5,000 push-sized events one at a time and 50 at once: in memory vs journaled under a
 *   directory (every publish on the disk before it resolves).
 * - `aio`: end to end through the all-in-one process (`npm start`) and its three workers to
 *   real peers: 400 pushes at 10 at a time until every peer has every event. `--root DIR` runs
 *   another checkout's dist/ (e.g. the commit before the journal) for the before/after figure.
 */
import crypto from "crypto";
import fs from "fs";
import os from "os";
import path from "path";
import { performance } from "perf_hooks";
import { Middleware as ChannelsMiddleware } from "@moleculer/channels";
import Redis from "ioredis";
import { ServiceBroker } from "moleculer";
import { connect } from "nats";
import { freePort, launch, stopProcess, waitUntilReady, healthReady, ROOT } from "../support/processes";
import { listenOnIrc, startIrcServer } from "../support/peers/irc-server";
import { startSmtpSink } from "../support/peers/smtp-sink";
import { startTaskTracker } from "../support/peers/task-tracker";
import { generateToken } from "../../lib/crypto/tokens";
import { deliveryKey, RedisDeliveryLog, type DeliveryLog } from "../../lib/push/delivery-log";
import { InProcessChannelAdapter } from "../../lib/push/in-process-channel-adapter";
import { KvDeliveryLog } from "../../lib/push/kv-delivery-log";
import { client, waitFor } from "../support/http";
import { NatsCluster } from "../support/nats-cluster";
import { pushBody } from "../support/push-fixtures";
import { NATS_URL, REDIS_URL } from "../support/servers";

const args = process.argv.slice(2);
const rootArg = args.indexOf("--root");
const otherRoot = rootArg >= 0 ? path.resolve(args[rootArg + 1]) : null;
const parts = args.filter((a, i) => !a.startsWith("--") && (rootArg < 0 || i !== rootArg + 1));
const wanted = (p: string) => !parts.length || parts.includes(p);
const fmt = (n: number) => n.toLocaleString("en-US", { maximumFractionDigits: 1 });
/** A Markdown section: its heading and the head of its table. */
const tableHead = (title: string, columns: string[]) => `\n### ${title}\n\n| ${columns.join(" | ")} |\n|${columns.map(() => "---").join("|")}|`;

async function timed(n: number, concurrency: number, one: (i: number) => Promise<void>): Promise<number> {
	let next = 0;
	const t0 = performance.now();
	await Promise.all(
		Array.from({ length: concurrency }, async () => {
			while (next < n) await one(next++);
		}),
	);
	return (n / (performance.now() - t0)) * 1000;
}

/** A first delivery only records (one write); a later one claims, then records. */
async function measureLog(name: string, make: () => DeliveryLog, run: string) {
	const log = make();
	const key = (i: number, c: string) => deliveryKey(`${run}:`, "g", `${run}-${c}-${i}`, "mail:dev@example.com");
	const first = (c: string) => (i: number) => log.complete(key(i, c));
	const again = (c: string) => async (i: number) => {
		if ((await log.claim(key(i, c))) === "go") await log.complete(key(i, c));
	};
	await timed(50, 5, again("warm"));
	const row = [await timed(300, 1, first("s1")), await timed(3000, 30, first("p1")), await timed(300, 1, again("s2")), await timed(3000, 30, again("p2"))];
	await log.close();
	console.log(`| ${name} | ${fmt(1000 / row[0])} ms | ${fmt(row[1])} | ${fmt(1000 / row[2])} ms | ${fmt(row[3])} |`);
}

async function records() {
	const run = `perf-${process.pid}`;
	const buckets = (r: number) => ({ bucket: `${run}_r${r}_deliveries`, aliveBucket: `${run}_r${r}_workers`, replicas: r });
	const opts = { prefix: `${run}:`, pendingMs: 60_000, doneMs: 600_000 };
	console.log(
		tableHead("Delivery records per delivery: first delivery (record), later delivery (claim + record)", [
			"Store",
			"first, one at a time",
			"first, 30 at once (/s)",
			"later, one at a time",
			"later, 30 at once (/s)",
		]),
	);
	await measureLog("Redis (shared server)", () => new RedisDeliveryLog(REDIS_URL, opts), run);
	await measureLog("JetStream bucket, single NATS (R1)", () => new KvDeliveryLog(NATS_URL, { ...opts, ...buckets(1) }), run);
	const cluster = await NatsCluster.start(3);
	try {
		await measureLog("JetStream bucket, 3-node cluster (R3)", () => new KvDeliveryLog(cluster.url, { ...opts, ...buckets(3) }), run);
	} finally {
		await cluster.destroy();
	}
	const redis = new Redis(REDIS_URL);
	const keys = await redis.keys(`${run}:*`);
	for (let i = 0; i < keys.length; i += 500) await redis.del(...keys.slice(i, i + 500));
	redis.disconnect();
	const nc = await connect({ servers: NATS_URL });
	const jsm = await nc.jetstreamManager();
	for (const b of Object.values(buckets(1)).slice(0, 2)) await jsm.streams.delete(`KV_${b}`).catch(() => undefined);
	await nc.close();
}

async function channelRun(dir: string | undefined, concurrency: number) {
	const adapter = new InProcessChannelAdapter({ maxInFlight: 10, maxRetries: 3, deadLettering: { enabled: false } }, { push: ["a", "b", "c"] }, { dir });
	const broker = new ServiceBroker({ logger: false, middlewares: [ChannelsMiddleware({ adapter, context: false } as never)] });
	let done = 0;
	for (const group of ["a", "b", "c"])
		broker.createService({
			name: `w-${group}`,
			channels: {
				push: {
					group,
					handler: async (event: { id: string }) => {
						const key = deliveryKey("perf:", group, event.id, "target");
						if ((await adapter.deliveryLog.claim(key)) === "go") await adapter.deliveryLog.complete(key);
						done++;
					},
				},
			},
		});
	await broker.start();
	const push = pushBody();
	const n = 5000;
	const t0 = performance.now();
	const published = await timed(n, concurrency, async () => {
		await broker.sendToChannel("push", { id: crypto.randomUUID(), received_at: new Date().toISOString(), push });
	});
	while (done < 3 * n) await new Promise(r => setTimeout(r, 5));
	const delivered = (n / (performance.now() - t0)) * 1000;
	await broker.stop();
	return { published, delivered };
}

async function channel() {
	console.log(
		tableHead("In-process channel: 5,000 push events, three groups, each delivery recorded", [
			"Channel",
			"publishes/s, 1 at a time",
			"events/s through 3 groups",
			"publishes/s, 50 at once",
			"events/s through 3 groups",
		]),
	);
	for (const durable of [false, true]) {
		const dir = durable ? fs.mkdtempSync(path.join(os.tmpdir(), "glv3-perf-journal-")) : undefined;
		try {
			const one = await channelRun(dir, 1);
			const many = await channelRun(dir, 50);
			const kind = durable ? "journaled (fdatasync per batch)" : "in memory";
			const row = [kind, fmt(one.published), fmt(one.delivered), fmt(many.published), fmt(many.delivered)];
			console.log(`| ${row.join(" | ")} |`);
		} finally {
			if (dir) fs.rmSync(dir, { recursive: true, force: true });
		}
	}
}

async function allInOne(root: string) {
	const [tracker, smtp, irc] = await Promise.all([startTaskTracker(["1"]), startSmtpSink(), startIrcServer()]);
	const listener = await listenOnIrc(irc, "#dev");
	const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "glv3-perf-aio-"));
	const [port, health, metrics] = [await freePort(), await freePort(), await freePort()];
	const token = generateToken();
	const proc = launch({
		name: "all-in-one",
		args: [path.join(root, "node_modules/moleculer/bin/moleculer-runner.js"), "--config", path.join(root, "dist/moleculer.config.js")],
		cwd: root,
		env: {
			PATH: process.env.PATH ?? "",
			NODE_ENV: "production",
			SERVICEDIR: path.join(root, "dist/services"),
			DATA_DIR: dataDir,
			PORT: String(port),
			HEALTH_PORT: String(health),
			METRICS_PORT: String(metrics),
			GITLAB_ROOT_TOKEN: token,
			GITLAB_ROOT_PASSWORD: "perf-root-password",
			INTERNAL_API_SECRET: "perf-internal-secret-0123456789abcdef",
			RATE_LIMIT_PER_MINUTE: "0",
			TASK_TRACKER_API_URL: tracker.apiUrl,
			SMTP_URL: smtp.url,
			ALLOW_LOCAL_REQUESTS: "true",
			IRC_MESSAGE_INTERVAL_MS: "0",
			LOG_LEVEL: "warn",
			LOG_FORMAT: "text",
		},
	});
	try {
		await waitUntilReady(proc, healthReady(health));
		const url = `http://127.0.0.1:${port}/api/v3`;
		const api = client(url, token);
		await waitFor("the gateway", async () => (await api.get("/user")).status === 200, 30000);
		const project = (await api.post("/projects", { body: { name: "perf" } })).body;
		await api.put(`/projects/${project.id}/services/task-tracker-comments`, { form: { api_key: "t" } });
		await api.put(`/projects/${project.id}/services/emails-on-push`, { form: { recipients: "dev@example.com" } });
		await api.put(`/projects/${project.id}/services/irc-gateway`, { form: { recipients: `irc://127.0.0.1:${irc.port}/#dev` } });
		const n = 400;
		const t0 = performance.now();
		const posted = await timed(n, 10, async i => {
			const res = await client(url).post("/internal/push", {
				body: pushBody({ projectId: project.id, path: project.path_with_namespace, commits: [{ message: `see #1 perf ${i}` }] }),
				headers: { "Gitlab-Shared-Secret": "perf-secret" },
			});
			if (res.status !== 202) throw new Error(`push ${i}: ${res.status} ${res.text}`);
		});
		await waitFor(
			"every event at every peer",
			() => Promise.resolve(smtp.messages.length >= n && listener.messages.length >= 2 * n && tracker.comments.get("1")!.length >= n),
			120000,
			5,
		);
		const through = (n / (performance.now() - t0)) * 1000;
		console.log(`| ${root === ROOT ? "this checkout" : root} | ${fmt(posted)} | ${fmt(through)} |`);
	} finally {
		await stopProcess(proc, "SIGTERM");
		await listener.close();
		await Promise.all([tracker.stop(), smtp.stop(), irc.stop()]);
		fs.rmSync(dataDir, { recursive: true, force: true });
	}
}

(async () => {
	if (wanted("records")) await records();
	if (wanted("channel")) await channel();
	if (wanted("aio")) {
		console.log(
			tableHead("All-in-one process, 400 pushes at 10 at a time, three workers, real peers", ["Code", "pushes answered 202/s", "events/s at every peer"]),
		);
		await allInOne(otherRoot ?? ROOT);
	}
	process.exit(0);
})().catch(err => {
	console.error(err);
	process.exit(1);
});
