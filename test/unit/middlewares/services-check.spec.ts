/** SERVICES that names no service stops start-up, before any service starts (middlewares/services-check.middleware.ts). */
import { ServiceBroker } from "moleculer";
import { serviceNameOf, ServicesCheckMiddleware } from "../../../middlewares/services-check.middleware";

const broker = (requested: string[], services: string[]) => {
	const b = new ServiceBroker({ logger: false, middlewares: [ServicesCheckMiddleware(requested)] });
	for (const name of services) b.createService({ name });
	return b;
};

it("names each SERVICES entry by the service it loads; patterns are not checked", () => {
	expect(["api", "workers/irc-sender", "labels.service", "labels.service.js", "workers/*", "**/*.service.js"].map(serviceNameOf)).toEqual([
		"api",
		"irc-sender",
		"labels",
		"labels",
		null,
		null,
	]);
});

it("refuses to start when an entry loaded no service, and starts when every one did", async () => {
	const typo = broker(["labels", "lables", "workers/irc-sendr"], ["labels"]);
	await expect(typo.start()).rejects.toThrow("SERVICES names lables, workers/irc-sendr: no such service (loaded: labels)");
	expect(typo.services.find(s => s.name === "labels")).toBeDefined();
	await typo.stop().catch(() => undefined);

	const right = broker(["labels", "workers/irc-sender", "workers/*"], ["labels", "irc-sender"]);
	await right.start();
	await right.stop();
	const everything = broker([], ["labels"]);
	await everything.start();
	await everything.stop();
});
