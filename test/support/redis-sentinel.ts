/**
 * Redis run highly available, as an operator runs it: a primary, a replica of it, and three Redis
 * Sentinels (Debian's `redis-sentinel`) that watch the primary under one name and promote the
 * replica when it fails, all on free loopback ports of a test's own. The machine's shared Redis is
 * never touched. The Sentinels notice a primary gone after a second (`down-after-milliseconds`), so
 * a failover takes a few seconds.
 */
import fs from "fs";
import os from "os";
import path from "path";
import Redis from "ioredis";
import { executable, listening } from "./private-servers";
import { freePort, startProcess, stopProcess, type ManagedProcess } from "./processes";

export const SENTINEL_NAME = "gitlab-cache";

interface Server {
	port: number;
	proc: ManagedProcess | null;
}

export class SentinelGroup {
	readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), "glv3-sentinel-"));
	/** The two Redis servers; the first starts as the primary. */
	readonly redis: Server[] = [];
	readonly sentinels: Server[] = [];

	static async start(): Promise<SentinelGroup> {
		const group = new SentinelGroup();
		try {
			const primary = { port: await freePort(), proc: null };
			const replica = { port: await freePort(), proc: null };
			group.redis.push(primary, replica);
			await group.startRedis(primary);
			await group.startRedis(replica, primary.port);
			await group.untilReplicated(replica.port);
			for (let i = 0; i < 3; i++) {
				const sentinel = { port: await freePort(), proc: null };
				group.sentinels.push(sentinel);
				await group.startSentinel(sentinel, primary.port);
			}
			await group.untilSentinelsSee(primary.port);
		} catch (err) {
			await group.stop();
			throw err;
		}
		return group;
	}

	/** REDIS_SENTINELS for the service: every Sentinel. */
	get sentinelList(): string {
		return this.sentinels.map(s => `127.0.0.1:${s.port}`).join(",");
	}

	private async startRedis(server: Server, replicaOf?: number): Promise<void> {
		const dir = path.join(this.dir, `redis-${server.port}`);
		fs.mkdirSync(dir, { recursive: true });
		server.proc = await startProcess({
			name: `redis-server:${server.port}`,
			command: executable("redis-server"),
			args: [
				...["--bind", "127.0.0.1", "--port", String(server.port), "--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no"],
				...(replicaOf ? ["--replicaof", "127.0.0.1", String(replicaOf)] : []),
			],
			env: {},
			ready: () => listening(server.port),
			readyTimeoutMs: 10000,
			pollMs: 50,
		});
	}

	private async startSentinel(sentinel: Server, primaryPort: number): Promise<void> {
		const conf = path.join(this.dir, `sentinel-${sentinel.port}.conf`);
		// A Sentinel rewrites its own file as it learns the group: one file each, writable.
		fs.writeFileSync(
			conf,
			[
				`port ${sentinel.port}`,
				"bind 127.0.0.1",
				`dir ${this.dir}`,
				`sentinel monitor ${SENTINEL_NAME} 127.0.0.1 ${primaryPort} 2`,
				`sentinel down-after-milliseconds ${SENTINEL_NAME} 1000`,
				`sentinel failover-timeout ${SENTINEL_NAME} 10000`,
				`sentinel parallel-syncs ${SENTINEL_NAME} 1`,
				"",
			].join("\n"),
		);
		sentinel.proc = await startProcess({
			name: `redis-sentinel:${sentinel.port}`,
			command: executable("redis-sentinel"),
			args: [conf],
			env: {},
			ready: () => listening(sentinel.port),
			readyTimeoutMs: 10000,
			pollMs: 50,
		});
	}

	/** The port of the primary the Sentinels name now. */
	async primaryPort(): Promise<number> {
		const client = new Redis({ port: this.sentinels[0].port, host: "127.0.0.1", lazyConnect: true, maxRetriesPerRequest: 1 });
		try {
			await client.connect();
			const [, port] = (await client.call("SENTINEL", "get-master-addr-by-name", SENTINEL_NAME)) as [string, string];
			return Number(port);
		} finally {
			client.disconnect();
		}
	}

	/** A client of one of the two Redis servers (by port), for looking into it. */
	client(port: number): Redis {
		return new Redis({ port, host: "127.0.0.1", maxRetriesPerRequest: 1 });
	}

	/** Kills the primary (SIGKILL: a crash, not a shutdown); answers its port. */
	async killPrimary(): Promise<number> {
		const port = await this.primaryPort();
		const server = this.redis.find(r => r.port === port)!;
		if (server.proc) await stopProcess(server.proc, "SIGKILL", 5000);
		server.proc = null;
		return port;
	}

	/** Starts a killed server again on its port; the Sentinels make it a replica of the new primary. */
	async restart(port: number): Promise<void> {
		await this.startRedis(this.redis.find(r => r.port === port)!);
	}

	/** Waits until the Sentinels name a primary other than `port` and it answers as one. */
	async untilFailedOver(from: number, timeoutMs = 30000): Promise<number> {
		const deadline = Date.now() + timeoutMs;
		while (Date.now() < deadline) {
			const port = await this.primaryPort().catch(() => from);
			if (port !== from && (await this.role(port)) === "master") return port;
			await new Promise(r => setTimeout(r, 100));
		}
		throw new Error(`the Sentinels did not fail the primary on ${from} over within ${timeoutMs} ms`);
	}

	async role(port: number): Promise<string | null> {
		const client = new Redis({ port, host: "127.0.0.1", lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
		try {
			await client.connect();
			return ((await client.call("ROLE")) as [string])[0];
		} catch {
			return null;
		} finally {
			client.disconnect();
		}
	}

	private async untilReplicated(port: number): Promise<void> {
		const deadline = Date.now() + 10000;
		const client = this.client(port);
		try {
			while (Date.now() < deadline) {
				if (/master_link_status:up/.test(await client.info("replication"))) return;
				await new Promise(r => setTimeout(r, 50));
			}
		} finally {
			client.disconnect();
		}
		throw new Error(`the replica on ${port} did not catch up with its primary`);
	}

	/** Every Sentinel knows the primary and its replica (what a failover needs). */
	private async untilSentinelsSee(primaryPort: number): Promise<void> {
		const deadline = Date.now() + 20000;
		for (const sentinel of this.sentinels) {
			const client = new Redis({ port: sentinel.port, host: "127.0.0.1", maxRetriesPerRequest: 1 });
			try {
				for (;;) {
					const replicas = (await client.call("SENTINEL", "replicas", SENTINEL_NAME)) as unknown[];
					const master = (await client.call("SENTINEL", "master", SENTINEL_NAME)) as string[];
					const others = Number(master[master.indexOf("num-other-sentinels") + 1]);
					if (replicas.length === 1 && others === 2) break;
					if (Date.now() > deadline) throw new Error(`the Sentinel on ${sentinel.port} does not see the group of ${primaryPort} whole`);
					await new Promise(r => setTimeout(r, 100));
				}
			} finally {
				client.disconnect();
			}
		}
	}

	async stop(): Promise<void> {
		for (const server of [...this.sentinels, ...this.redis]) if (server.proc) await stopProcess(server.proc, "SIGKILL", 5000);
		fs.rmSync(this.dir, { recursive: true, force: true });
	}
}
