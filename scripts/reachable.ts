/**
 * Whether the servers a launcher needs answer at all, asked before anything starts, so that a
 * server that is not running ends the start at once with its name (not a minute of reconnects).
 */
import net from "net";

const DEFAULT_PORTS: Record<string, number> = { nats: 4222, redis: 6379, rediss: 6379 };

/** host:port of each comma-separated URL (`nats://a:4222,nats://b:4222`). */
export function endpointsOf(urls: string): { host: string; port: number }[] {
	return urls
		.split(",")
		.map(u => new URL(u.trim()))
		.map(u => ({ host: u.hostname.replace(/^\[|\]$/g, ""), port: Number(u.port) || DEFAULT_PORTS[u.protocol.replace(/:$/, "")] || 0 }));
}

function connects(host: string, port: number, timeoutMs: number): Promise<boolean> {
	return new Promise(resolve => {
		const socket = net.connect({ host, port });
		const done = (ok: boolean) => (socket.destroy(), resolve(ok));
		socket.setTimeout(timeoutMs, () => done(false));
		socket.once("connect", () => done(true));
		socket.once("error", () => done(false));
	});
}

/** Whether any of the URLs' servers accepts a connection within `withinMs` (tried every 250 ms). */
export async function reachable(urls: string, withinMs = 3000): Promise<boolean> {
	const deadline = Date.now() + withinMs;
	for (;;) {
		const answers = await Promise.all(endpointsOf(urls).map(e => connects(e.host, e.port, 1000)));
		if (answers.includes(true)) return true;
		if (Date.now() >= deadline) return false;
		await new Promise(r => setTimeout(r, 250));
	}
}
