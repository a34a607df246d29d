/**
 * A node restarted under the same node ID stays in the registry (middlewares/node-liveness.middleware.ts):
 * its INFO counts as a heartbeat, so the heartbeat check does not drop it between the old
 * process's last heartbeat and the new one's first. Moleculer's own registry and heartbeat check,
 * fed the INFO packets the transit would hand it.
 */
import { ServiceBroker } from "moleculer";
import { NodeLivenessMiddleware } from "../../../middlewares/node-liveness.middleware";

const HEARTBEAT_TIMEOUT = 15;

/** An INFO packet's payload, as a node with one action sends it. */
const info = (instanceID: string) => ({
	sender: "builds-1",
	instanceID,
	seq: 1,
	services: [{ name: "builds", settings: {}, metadata: {}, actions: { "builds.list": { name: "builds.list" } }, events: {} }],
	ipList: [],
	hostname: "h",
	client: { type: "nodejs", version: "0.15.2", langVersion: process.version },
	config: {},
	metadata: {},
});

interface RegistryInternals {
	processNodeInfo(payload: object): void;
	nodes: { get(id: string): { available: boolean; lastHeartbeatTime: number } | undefined };
	discoverer: { checkRemoteNodes(): void };
}

/** A broker whose registry knows `builds-1`, last heard from longer ago than the timeout; then `builds-1` restarts. */
async function restartedNode(middlewares: ReturnType<typeof NodeLivenessMiddleware>[]) {
	const broker = new ServiceBroker({ logger: false, heartbeatTimeout: HEARTBEAT_TIMEOUT, middlewares });
	await broker.start();
	const registry = broker.registry as unknown as RegistryInternals;
	registry.processNodeInfo(info("first-process"));
	const node = registry.nodes.get("builds-1")!;
	// The old process's last heartbeat, then the kill and the restart took longer than the timeout
	// (never 0, which Moleculer reads as "no heartbeat yet").
	const longAgo = Math.round(process.uptime()) - HEARTBEAT_TIMEOUT - 5;
	node.lastHeartbeatTime = longAgo === 0 ? -1 : longAgo;
	// The new process connects and announces itself; its first heartbeat is an interval away.
	registry.processNodeInfo(info("second-process"));
	registry.discoverer.checkRemoteNodes();
	const found = { available: node.available, listed: broker.registry.getServiceList({ onlyAvailable: true }).some(s => s.name === "builds") };
	await broker.stop();
	return found;
}

it("keeps a node that restarted under its node ID, and its services, through the heartbeat check", async () => {
	expect(await restartedNode([NodeLivenessMiddleware()])).toEqual({ available: true, listed: true });
});

it("without it, Moleculer's check drops the restarted node though it has just announced itself", async () => {
	expect(await restartedNode([])).toEqual({ available: false, listed: false });
});
