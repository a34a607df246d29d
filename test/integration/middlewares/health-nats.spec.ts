/**
 * `/ready` follows the transporter (middlewares/health.middleware.ts): over a NATS of this test's
 * own, it turns 503 when the server goes away, though the client keeps reconnecting and the broker
 * still counts itself connected, and 200 again when the server is back.
 */
import http from "http";
import { ServiceBroker } from "moleculer";
import { HealthMiddleware } from "../../../middlewares/health.middleware";
import { waitFor } from "../../support/http";
import { PrivateServer } from "../../support/private-servers";

function ready(port: number): Promise<{ status: number; connected: boolean }> {
	return new Promise((resolve, reject) => {
		http.get({ host: "127.0.0.1", port, path: "/ready" }, res => {
			let text = "";
			res.on("data", chunk => (text += chunk));
			res.on("end", () => resolve({ status: res.statusCode ?? 0, connected: (JSON.parse(text) as { connected: boolean }).connected }));
		}).on("error", reject);
	});
}

let nats: PrivateServer;
let broker: ServiceBroker;

beforeAll(async () => {
	nats = await PrivateServer.nats();
});

afterAll(async () => {
	// A broker stops by flushing to its server: bring it back if a failed test left it away.
	if (nats && !nats.running) await nats.start();
	await broker?.stop();
	await nats?.destroy();
});

it("is 503 while the NATS server is away and 200 once the client has reconnected", async () => {
	const health = HealthMiddleware(0);
	broker = new ServiceBroker({
		logger: false,
		transporter: { type: "NATS", options: { url: nats.url, reconnectTimeWait: 100 } },
		middlewares: [health, health.readiness],
	});
	await broker.start();
	const port = health.port();
	expect(await ready(port)).toEqual({ status: 200, connected: true });

	await nats.stop();
	await waitFor("/ready to turn 503", async () => (await ready(port)).status === 503, 20000, 50);
	expect(await ready(port)).toEqual({ status: 503, connected: false });
	// The broker itself never heard of it: its client is still reconnecting.
	expect(broker.transit!.connected).toBe(true);

	await nats.start();
	await waitFor("/ready to turn 200 again", async () => (await ready(port)).status === 200, 20000, 50);
	expect(await ready(port)).toEqual({ status: 200, connected: true });
});
