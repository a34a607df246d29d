/**
 * An INFO packet from a known node counts as a sign of life, as a heartbeat does.
 *
 * Moleculer's registry times a remote node out on heartbeats alone. A node that restarts under the
 * same node ID (a process restarted in place, as `restart: always` or a supervisor does) announces
 * itself with INFO as soon as it connects, but sends its first heartbeat only one interval later.
 * Counted from the old process's last heartbeat, that gap can pass the timeout: the peers then
 * declare the node gone and drop its services while it is serving, and each answers 503 until the
 * next heartbeat brings it back (docs/architecture.md#restarted-nodes).
 */
import type { Middleware, ServiceBroker } from "moleculer";

/** The part of a registry node this middleware touches. */
interface RegistryNode {
	local?: boolean;
	lastHeartbeatTime: number;
}

/** What Moleculer's heartbeat check compares (whole seconds of the process's uptime). */
const uptimeSeconds = () => Math.round(process.uptime());

export function NodeLivenessMiddleware(): Middleware {
	return {
		name: "NodeLiveness",
		created(broker: ServiceBroker) {
			// `$node.updated`: an INFO from a node the registry holds as available (a restart among them).
			broker.localBus.on("$node.updated", ({ node }: { node: RegistryNode }) => {
				if (!node.local) node.lastHeartbeatTime = uptimeSeconds();
			});
		},
	};
}
