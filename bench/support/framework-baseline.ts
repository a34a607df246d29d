/**
 * The framework's own floor for scenario 1: a minimal moleculer-web gateway with one action that
 * returns the same data as the endpoint under test (no auth, no cache, no validation, no metrics),
 * either in the gateway's process (the all-in-one shape's limit) or in a second process over the
 * same NATS (the split shape's limit). Same serializer as the project (JSONExt), so what remains
 * is the framework and the transporter.
 *
 * Run as a script by `startFrameworkBaseline`:
 *   node framework-baseline.js local   <port> <body file>
 *   node framework-baseline.js gateway <port> <body file> <nats url> <namespace>
 *   node framework-baseline.js action  -      <body file> <nats url> <namespace>
 */
import fs from "fs";
import { ServiceBroker } from "moleculer";
import ApiGateway from "moleculer-web";
import { answers200, freePort, startProcess, type ManagedProcess } from "../../test/support/processes";
import path from "path";

export const BASELINE_PATH = "/api/v3/projects/1/labels";

export interface FrameworkBaseline {
	url: string;
	procs: ManagedProcess[];
}

/** Starts the baseline: one process (`nats` unset) or a gateway and an action process over `nats`. */
export async function startFrameworkBaseline(body: Buffer, tmpDir: string, nats?: { url: string; namespace: string }): Promise<FrameworkBaseline> {
	const port = await freePort();
	const bodyFile = path.join(tmpDir, `framework-body-${port}`);
	fs.writeFileSync(bodyFile, body);
	const url = `http://127.0.0.1:${port}${BASELINE_PATH}`;
	const procs: ManagedProcess[] = [];
	const launch = (role: string, ready: () => Promise<boolean>) =>
		startProcess({
			name: `framework-${role}`,
			args: [__filename, role, role === "action" ? "-" : String(port), bodyFile, ...(nats ? [nats.url, nats.namespace] : [])],
			env: { PATH: process.env.PATH ?? "" },
			ready,
		});
	try {
		if (!nats) procs.push(await launch("local", () => answers200(url)));
		else {
			procs.push(await launch("action", () => Promise.resolve(true)));
			procs.push(await launch("gateway", () => answers200(url)));
		}
	} catch (err) {
		for (const p of procs) p.child.kill("SIGKILL");
		throw err;
	}
	return { url, procs };
}

async function serve([role, port, bodyFile, natsUrl, namespace]: string[]): Promise<void> {
	const data = JSON.parse(fs.readFileSync(bodyFile, "utf8"));
	const broker = new ServiceBroker({
		nodeID: `framework-${role}-${process.pid}`,
		namespace: namespace ?? "",
		transporter: (natsUrl ?? null) as never,
		serializer: "JSONExt",
		logger: false,
	});
	if (role !== "gateway") broker.createService({ name: "labels", actions: { list: () => data } });
	if (role !== "action")
		broker.createService({
			name: "api",
			mixins: [ApiGateway as never],
			settings: {
				port: Number(port),
				ip: "127.0.0.1",
				path: "/api/v3",
				logRequest: null,
				logResponse: null,
				routes: [{ path: "", aliases: { "GET /projects/:id/labels": "labels.list" } }],
			},
		});
	await broker.start();
}

if (require.main === module) void serve(process.argv.slice(2));
