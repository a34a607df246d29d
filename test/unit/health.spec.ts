/** The probes (middlewares/health.middleware.ts): ready only once every middleware has started, not before. */
import http from "http";
import { ServiceBroker, type Middleware } from "moleculer";
import { HealthMiddleware } from "../../middlewares/health.middleware";

function probe(port: number, path: string): Promise<number> {
	return new Promise((resolve, reject) => {
		http.get({ host: "127.0.0.1", port, path }, res => {
			res.resume();
			res.on("end", () => resolve(res.statusCode ?? 0));
		}).on("error", reject);
	});
}

it("/ready is 503 while a later middleware is still starting (the push channel connecting), 200 once it has, 503 from the stop on", async () => {
	const health = HealthMiddleware(0);
	let entered!: () => void;
	const slowStarted = new Promise<void>(resolve => (entered = resolve));
	let finish!: () => void;
	const gate = new Promise<void>(resolve => (finish = resolve));
	// Stands for the channels middleware, whose start connects and provisions before it returns.
	const slow: Middleware = {
		name: "SlowChannel",
		async started() {
			entered();
			await gate;
		},
	};
	const broker = new ServiceBroker({ logger: false, middlewares: [health, slow, health.readiness] });
	const starting = broker.start();
	try {
		await slowStarted;
		const port = health.port();
		expect(await probe(port, "/live")).toBe(200);
		expect(await probe(port, "/ready")).toBe(503);

		finish();
		await starting;
		expect(await probe(port, "/ready")).toBe(200);

		let readyWhileStopping = 0;
		// Registered after the start, so it stops first (stopped hooks run in reverse): by then /ready must already be 503.
		broker.middlewares.add({
			name: "StopWatcher",
			async stopped() {
				readyWhileStopping = await probe(port, "/ready");
			},
		});
		await broker.stop();
		expect(readyWhileStopping).toBe(503);
	} finally {
		finish();
		await starting.catch(() => undefined);
		if (broker.started) await broker.stop();
	}
});
