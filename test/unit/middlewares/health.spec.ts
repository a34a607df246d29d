/** The probes (middlewares/health.middleware.ts): ready only once every middleware has started, not before. */
import http from "http";
import { ServiceBroker, type Middleware } from "moleculer";
import { HealthMiddleware } from "../../../middlewares/health.middleware";

function probe(port: number, path: string): Promise<number> {
	return new Promise((resolve, reject) => {
		http.get({ host: "127.0.0.1", port, path }, res => {
			res.resume();
			res.on("end", () => resolve(res.statusCode ?? 0));
		}).on("error", reject);
	});
}

it("/ready is 503 while a later middleware is still starting (the push channel connecting), 200 once it has, 503 before any other stops", async () => {
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
	// Stands for the middlewares listed between the probes and the readiness mark: the first of them
	// to stop must already see /ready 503 (stopping hooks run in reverse order of the list).
	let readyWhileStopping = 0;
	const stopWatcher: Middleware = {
		name: "StopWatcher",
		async stopping() {
			readyWhileStopping = await probe(health.port(), "/ready");
		},
	};
	const broker = new ServiceBroker({ logger: false, middlewares: [health, slow, stopWatcher, health.readiness] });
	const starting = broker.start();
	try {
		await slowStarted;
		const port = health.port();
		expect(await probe(port, "/live")).toBe(200);
		expect(await probe(port, "/ready")).toBe(503);

		finish();
		await starting;
		expect(await probe(port, "/ready")).toBe(200);

		await broker.stop();
		expect(readyWhileStopping).toBe(503);
	} finally {
		finish();
		await starting.catch(() => undefined);
		if (broker.started) await broker.stop();
	}
});
