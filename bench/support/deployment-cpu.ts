import { cpuAccount, serverPid } from "../../test/support/cpu";
import { NATS_URL, REDIS_URL } from "./stack";

/**
 * A CPU account of a deployment under load: its processes, `others` (named), this process (the
 * load generator) and, for a deployment of several processes, the NATS and Redis it uses.
 */
export function deploymentCpuAccount(processes: { name: string; child: { pid?: number } }[], others: Record<string, number | undefined> = {}) {
	return cpuAccount({
		...Object.fromEntries(processes.map(p => [p.name, p.child.pid])),
		...others,
		loadGenerator: process.pid,
		...(processes.length > 1 ? { nats: serverPid("nats-server", NATS_URL), redis: serverPid("redis-server", REDIS_URL) } : {}),
	});
}
