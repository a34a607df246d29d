/**
 * A TCP proxy on a free loopback port to a server's port, which a test cuts and restores: one
 * process given this route to a shared server (Redis) loses it alone, while the others keep theirs.
 */
import net from "net";
import { freePort } from "./processes";

export class TcpProxy {
	private server: net.Server | null = null;
	private readonly sockets = new Set<net.Socket>();

	private constructor(
		readonly port: number,
		private readonly targetPort: number,
	) {}

	static async start(targetPort: number): Promise<TcpProxy> {
		const proxy = new TcpProxy(await freePort(), targetPort);
		await proxy.restore();
		return proxy;
	}

	/** The proxy's address under the target's scheme, e.g. url("redis"). */
	url(scheme: string): string {
		return `${scheme}://127.0.0.1:${this.port}`;
	}

	/** Listens again on the same port (as the server would come back where it was). */
	restore(): Promise<void> {
		if (this.server) return Promise.resolve();
		const server = net.createServer(downstream => {
			const upstream = net.connect(this.targetPort, "127.0.0.1");
			for (const socket of [downstream, upstream]) {
				this.sockets.add(socket);
				socket.once("close", () => (this.sockets.delete(socket), downstream.destroy(), upstream.destroy()));
				socket.on("error", () => socket.destroy());
			}
			downstream.pipe(upstream);
			upstream.pipe(downstream);
		});
		this.server = server;
		return new Promise((resolve, reject) => {
			server.once("error", reject);
			server.listen(this.port, "127.0.0.1", () => resolve());
		});
	}

	/**
	 * Closes every open connection and refuses new ones: the server is gone for whoever uses this
	 * route. (Not resetAndDestroy: with it, one run of a test using this proxy hung at exit, in
	 * Node's clean-up of its handles.)
	 */
	cut(): Promise<void> {
		const server = this.server;
		this.server = null;
		for (const socket of this.sockets) socket.destroy();
		this.sockets.clear();
		return server ? new Promise(resolve => server.close(() => resolve())) : Promise.resolve();
	}
}
