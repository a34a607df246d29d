/**
 * Kubernetes probes on HEALTH_PORT: `/live` answers 200 until the broker is down, `/ready` 200
 * only while it is started (and, in a cluster, connected to the transporter), 503 otherwise.
 *
 * "Started" is when every middleware's start has finished, the push channel's too (connected,
 * stream and consumers provisioned: up to 15 s on JetStream), so a rolling update sends no push to
 * a node that cannot publish it yet. That moment is the `readiness` part, listed last in the
 * broker's middlewares (moleculer runs `started` hooks in list order, and `stopping` in reverse,
 * so `/ready` turns 503 before anything else stops).
 *
 * "Connected" follows the NATS client's own status: it reconnects without end, so the transit
 * never hears of a lost connection, while every call meanwhile fails.
 */
import http from "http";
import type { AddressInfo } from "net";
import type { Middleware, ServiceBroker } from "moleculer";

type State = "starting" | "up" | "stopping" | "down";

/** The NATS transporter's client (nats.js), whose status events say when it loses and regains the server. */
interface StatusSource {
	status(): AsyncIterable<{ type: string }>;
}

function natsClientOf(broker: ServiceBroker): StatusSource | null {
	const client = (broker.transit?.tx as { client?: Partial<StatusSource> } | undefined)?.client;
	return client && typeof client.status === "function" ? (client as StatusSource) : null;
}

export function HealthMiddleware(port: number): Middleware & { port(): number; readiness: Middleware } {
	let state: State = "starting";
	let server: http.Server | undefined;
	let transporterAway = false;
	const startedAt = Date.now();

	const body = (broker: ServiceBroker) => {
		const connected = broker.transit ? broker.transit.connected && !transporterAway : true;
		return { state, connected, uptime: Math.round((Date.now() - startedAt) / 1000), timestamp: new Date().toISOString() };
	};

	return {
		name: "Health",
		port: () => (server?.address() as AddressInfo | null)?.port ?? port,
		created(broker: ServiceBroker) {
			server = http.createServer((req, res) => {
				const info = body(broker);
				const path = (req.url ?? "").split("?")[0];
				let ok: boolean;
				if (path === "/live") ok = state !== "down";
				else if (path === "/ready") ok = state === "up" && info.connected;
				else {
					res.writeHead(404, { "Content-Type": "application/json" }).end('{"message":"404 Not Found"}');
					return;
				}
				res.writeHead(ok ? 200 : 503, { "Content-Type": "application/json" }).end(JSON.stringify(info));
			});
			server.on("error", err => broker.fatal(`Health server cannot listen on HEALTH_PORT ${port}: ${err.message}`, err));
			server.listen(port);
		},
		readiness: {
			name: "HealthReadiness",
			started(broker: ServiceBroker) {
				if (state === "starting") state = "up";
				const client = natsClientOf(broker);
				if (client)
					void (async () => {
						for await (const event of client.status()) {
							if (event.type === "disconnect") transporterAway = true;
							else if (event.type === "reconnect") transporterAway = false;
						}
					})().catch(() => undefined);
				return Promise.resolve();
			},
			// Last in the list, so the first to hear of a stop.
			stopping() {
				state = "stopping";
				return Promise.resolve();
			},
		},
		stopped() {
			state = "down";
			return new Promise<void>(resolve => (server ? server.close(() => resolve()) : resolve()));
		},
	};
}
