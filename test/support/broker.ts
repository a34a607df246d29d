/**
 * All given services on one in-process broker (no transporter), the gateway on a free port.
 * Import this only from test files whose project loads test/support/setup-env.ts first.
 */
import type { AddressInfo } from "net";
import { ServiceBroker, type BrokerOptions, type ServiceSchema } from "moleculer";
import { config } from "../../config";
import { createValidator } from "../../lib/api/validator";
import { client, type Client } from "./http";

export interface LocalStack {
	broker: ServiceBroker;
	url: string;
	/** The same gateway's /api/v4. */
	v4Url: string;
	rootToken: string;
	api(token?: string | null): Client;
	/** A client of /api/v4, root's by default. */
	v4(token?: string | null): Client;
	stop(): Promise<void>;
}

/** Any service schema, whatever its settings, methods and vars (a typed `this` is not the default one). */
export type AnyServiceSchema = ServiceSchema<any, any, any, any>;

export async function startLocal(services: AnyServiceSchema[], options: Partial<BrokerOptions> = {}): Promise<LocalStack> {
	const broker = new ServiceBroker({
		logger: { type: "Console", options: { level: config.logLevel } },
		cacher: "Memory",
		serializer: "JSONExt",
		validator: createValidator(),
		...options,
	});
	const created = services.map(schema => broker.createService(schema));
	await broker.start();
	const api = created.find(s => s.name === "api") as unknown as { server?: { address(): AddressInfo } } | undefined;
	const port = api?.server?.address().port ?? 0;
	const url = `http://127.0.0.1:${port}/api/v3`;
	const v4Url = `http://127.0.0.1:${port}/api/v4`;
	return {
		broker,
		url,
		v4Url,
		rootToken: config.rootToken,
		api: (token = config.rootToken) => client(url, token ?? undefined),
		v4: (token = config.rootToken) => client(v4Url, token ?? undefined),
		stop: () => broker.stop(),
	};
}
