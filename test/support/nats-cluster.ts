/**
 * A NATS JetStream cluster of a test's own: three `nats-server` processes on loopback (free
 * client, route and monitoring ports), routed to each other, each with its own store
 * directory, as the Kubernetes StatefulSet runs them. A node is killed and started again on the
 * same ports and directory, as a restarted pod would be. The monitoring port's `/jsz` tells
 * which node leads a stream and whether every replica has caught up.
 */
import fs from "fs";
import os from "os";
import path from "path";
import { freePort, startProcess, stopProcess, type ManagedProcess } from "./processes";
import { waitFor } from "./http";
import { executable, listening } from "./private-servers";

export interface NatsNode {
	name: string;
	port: number;
	routePort: number;
	monitorPort: number;
	dir: string;
	proc?: ManagedProcess;
}

/** A raft group's follower as `/jsz` reports it. */
interface Replica {
	name: string;
	current: boolean;
	offline?: boolean;
}

interface StreamDetail {
	name: string;
	cluster?: { leader?: string; replicas?: Replica[] };
	state: { messages: number; last_seq: number };
}

interface Jsz {
	/** `replicas` only in the leader's answer. */
	meta_cluster?: { leader?: string; replicas?: Replica[] };
	account_details?: { stream_detail?: StreamDetail[] }[];
}

export class NatsCluster {
	private constructor(
		readonly nodes: NatsNode[],
		private readonly root: string,
	) {}

	static async start(size = 3): Promise<NatsCluster> {
		const root = fs.mkdtempSync(path.join(os.tmpdir(), "glv3-nats-cluster-"));
		const nodes: NatsNode[] = [];
		for (let i = 1; i <= size; i++)
			nodes.push({ name: `n${i}`, port: await freePort(), routePort: await freePort(), monitorPort: await freePort(), dir: path.join(root, `n${i}`) });
		const cluster = new NatsCluster(nodes, root);
		try {
			await Promise.all(nodes.map(n => cluster.startNode(n.name)));
			await waitFor("the JetStream metadata leader", async () => !!(await cluster.jsz(nodes[0]))?.meta_cluster?.leader, 30000, 100);
		} catch (err) {
			await cluster.destroy();
			throw err;
		}
		return cluster;
	}

	/** Every node's client URL, comma-separated: what TRANSPORTER gets. */
	get url(): string {
		return this.nodes.map(n => `nats://127.0.0.1:${n.port}`).join(",");
	}

	node(name: string): NatsNode {
		const node = this.nodes.find(n => n.name === name);
		if (!node) throw new Error(`no NATS node ${name}`);
		return node;
	}

	running(name: string): boolean {
		const child = this.node(name).proc?.child;
		return !!child && child.exitCode === null && child.signalCode === null;
	}

	async startNode(name: string): Promise<void> {
		const node = this.node(name);
		const routes = this.nodes.map(n => `nats://127.0.0.1:${n.routePort}`).join(",");
		node.proc = await startProcess({
			name: `nats-${node.name}`,
			command: executable("nats-server"),
			args: [
				...["-a", "127.0.0.1", "-p", String(node.port), "-n", node.name, "-js", "-sd", node.dir, "-m", String(node.monitorPort)],
				...["--cluster_name", "glv3", "--cluster", `nats://127.0.0.1:${node.routePort}`, "--routes", routes],
			],
			env: {},
			ready: async () => (await listening(node.port)) && !!(await this.jsz(node)),
			readyTimeoutMs: 15000,
			pollMs: 50,
		});
	}

	/** SIGKILL by default: the node disappears as a crashed pod does. */
	async stopNode(name: string, signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
		const node = this.node(name);
		if (node.proc) await stopProcess(node.proc, signal, 5000);
		node.proc = undefined;
	}

	/** The monitoring endpoint `/jsz` of one node (with stream details), or null when it does not answer. */
	async jsz(node: NatsNode): Promise<Jsz | null> {
		const res = await fetch(`http://127.0.0.1:${node.monitorPort}/jsz?streams=1`, { signal: AbortSignal.timeout(2000) }).catch(() => null);
		if (!res?.ok) return null;
		return (await res.json()) as Jsz;
	}

	private async streamOn(node: NatsNode, name: string): Promise<StreamDetail | null> {
		return (await this.jsz(node))?.account_details?.flatMap(a => a.stream_detail ?? []).find(s => s.name === name) ?? null;
	}

	/** A stream as its leader sees it (only the leader knows whether the other replicas are current). */
	async stream(name: string): Promise<StreamDetail | null> {
		for (const node of this.nodes.filter(n => this.running(n.name))) {
			const leader = (await this.streamOn(node, name))?.cluster?.leader;
			if (leader && this.running(leader)) return this.streamOn(this.node(leader), name);
		}
		return null;
	}

	/** The node that leads a stream (its raft group's leader). */
	async leaderOf(stream: string): Promise<string> {
		return waitFor(`a leader of ${stream}`, async () => (await this.stream(stream))?.cluster?.leader, 30000, 100);
	}

	/** The metadata group as each running node sees it, and the last lines of its log: what a timeout reports. */
	private async describe(): Promise<string> {
		const views = await Promise.all(
			this.nodes.map(async n => {
				if (!this.running(n.name)) return `${n.name}: down`;
				const meta = (await this.jsz(n))?.meta_cluster;
				const log = this.node(n.name).proc?.output.join("").split("\n").slice(-8).join("\n    ");
				return `${n.name}: meta ${JSON.stringify(meta ?? null)}\n    ${log ?? ""}`;
			}),
		);
		return views.join("\n");
	}

	private async waitOrDescribe(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
		try {
			await waitFor(what, check, timeoutMs, 200);
		} catch (err) {
			throw new Error(`${(err as Error).message}\n${await this.describe()}`, { cause: err });
		}
	}

	/** The metadata leader every running node names, if it is running itself. */
	private async agreedMetaLeader(): Promise<NatsNode | null> {
		const leaders = await Promise.all(this.nodes.filter(n => this.running(n.name)).map(async n => (await this.jsz(n))?.meta_cluster?.leader));
		return !!leaders[0] && this.running(leaders[0]) && leaders.every(l => l === leaders[0]) ? this.node(leaders[0]) : null;
	}

	/** Until the running nodes agree on a JetStream metadata leader that is running (stream and consumer management works). */
	async waitForMetaLeader(timeoutMs = 30000): Promise<void> {
		await this.waitOrDescribe("a JetStream metadata leader", async () => !!(await this.agreedMetaLeader()), timeoutMs);
	}

	/**
	 * Until the whole cluster is healthy again after a restart, as an operator waits before touching
	 * the next node: the stream has a leader and every other replica is current, and so is every
	 * member of the metadata group (a node restarted a moment ago may still be catching up on it,
	 * and losing another node then leaves the group without a quorum that can elect a leader).
	 */
	async waitForReplicas(stream: string, timeoutMs = 30000): Promise<void> {
		const current = (replicas: Replica[] | undefined) =>
			!!replicas && replicas.length === this.nodes.length - 1 && replicas.every(r => r.current && !r.offline);
		await this.waitOrDescribe(
			`every replica of ${stream} and of the metadata group to be current`,
			async () => {
				const s = await this.stream(stream);
				if (!s?.cluster?.leader || !current(s.cluster.replicas)) return false;
				const metaLeader = await this.agreedMetaLeader();
				return !!metaLeader && current((await this.jsz(metaLeader))?.meta_cluster?.replicas);
			},
			timeoutMs,
		);
	}

	async destroy(): Promise<void> {
		await Promise.all(this.nodes.map(n => this.stopNode(n.name, "SIGTERM")));
		fs.rmSync(this.root, { recursive: true, force: true });
	}
}
