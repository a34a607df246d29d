/**
 * A push worker's start on JetStream (middlewares/channels.middleware.ts): the streams it reads are
 * provisioned before it subscribes, with this project's settings, and its start logs no error
 * about them (the channels library would add them again with its own settings, which the server
 * refuses).
 */
import { ServiceBroker } from "moleculer";
import { config } from "../../../config";
import { deletePushChannel } from "../../../lib/push/provisioning";
import { PUSH_CHANNEL } from "../../../lib/push/channel";
import { ChannelsMiddlewares } from "../../../middlewares/channels.middleware";
import { NATS_URL, REDIS_URL, requireServers, uniqueNamespace } from "../../support/servers";

const namespace = uniqueNamespace("streams");

beforeAll(() => requireServers("nats"));
afterAll(() => deletePushChannel(NATS_URL, REDIS_URL, namespace));

it("starts a consumer of provisioned streams without logging an error", async () => {
	const errors: string[] = [];
	const broker = new ServiceBroker({
		namespace,
		logger: { type: "Console", options: { level: "error" } },
		middlewares: ChannelsMiddlewares({ ...config, channels: NATS_URL, transporter: "", namespace }),
	});
	const spy = jest.spyOn(console, "error").mockImplementation((...args: unknown[]) => void errors.push(args.map(String).join(" ")));
	try {
		broker.createService({ name: "mailer", channels: { [PUSH_CHANNEL]: { group: "push-mailer", handler: () => undefined } } });
		await broker.start();
		await broker.stop();
	} finally {
		spy.mockRestore();
	}
	expect(errors).toEqual([]);
});
