/**
 * The real NATS and Redis of this test run: its own, which test/support/global-setup.js started on
 * free loopback ports (or the ones TEST_NATS_URL and TEST_REDIS_URL name). A test that needs one
 * fails loudly when it is not there; it never skips.
 */
import net from "net";

export const NATS_URL = process.env.TEST_NATS_URL ?? "nats://127.0.0.1:4222";
export const REDIS_URL = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

function reachable(port: number): Promise<boolean> {
	return new Promise(resolve => {
		const socket = net.connect(port, "127.0.0.1");
		socket.setTimeout(1000);
		socket.once("connect", () => (socket.destroy(), resolve(true)));
		socket.once("error", () => resolve(false));
		socket.once("timeout", () => (socket.destroy(), resolve(false)));
	});
}

export async function requireServers(...which: ("nats" | "redis")[]): Promise<void> {
	for (const name of which) {
		const url = new URL(name === "nats" ? NATS_URL : REDIS_URL);
		const port = Number(url.port);
		if (!(await reachable(port))) throw new Error(`${name} is not reachable on 127.0.0.1:${port} (${url.href}); test/support/global-setup.js starts it`);
	}
}

/** A namespace no other test run uses, so runs over the shared NATS and Redis never meet. */
export function uniqueNamespace(prefix: string): string {
	return `${prefix}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
}
