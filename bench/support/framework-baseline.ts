/**
 * The framework's own floor for scenario 1: a minimal moleculer-web gateway with one action that
 * returns the same data as the endpoint under test (no auth, no cache, no validation, no metrics),
 * either in the gateway's process (the all-in-one shape's limit) or in a second process over the
 * same NATS (the split shape's limit). Same serializer as the project (JSONExt), so what remains
 * is the framework and the transporter; the split one can also run with a binary serializer
 * (Notepack, MessagePack), to measure what the serializer costs on the hop.
 *
 * Run as a script by `startFrameworkBaseline`:
 *   node framework-baseline.js local   <port> <body file> - - <serializer>
 *   node framework-baseline.js gateway <port> <body file> <nats url> <namespace> <serializer>
 *   node framework-baseline.js action  -      <body file> <nats url> <namespace> <serializer>
 */
import fs from "fs";
import { ServiceBroker } from "moleculer";
import ApiGateway from "moleculer-web";
import { answers200, freePort, startProcess, type ManagedProcess } from "../../test/support/processes";
import path from "path";

const BASELINE_PATH = "/api/v3/projects/1/labels";

/** The project's serializer (moleculer.config.ts), and a binary one to compare it with. */
export type BaselineSerializer = "JSONExt" | "Notepack";

export interface FrameworkBaseline {
	url: string;
	procs: ManagedProcess[];
}

/** Starts the baseline: one process (`nats` unset) or a gateway and an action process over `nats`. */
export async function startFrameworkBaseline(
	body: Buffer,
	tmpDir: string,
	nats?: { url: string; namespace: string },
	serializer: BaselineSerializer = "JSONExt",
): Promise<FrameworkBaseline> {
	const port = await freePort();
	const bodyFile = path.join(tmpDir, `framework-body-${port}`);
	fs.writeFileSync(bodyFile, body);
	const url = `http://127.0.0.1:${port}${BASELINE_PATH}`;
	const procs: ManagedProcess[] = [];
	const launch = (role: string, ready: () => Promise<boolean>) =>
		startProcess({
			name: `framework-${role}`,
			args: [__filename, role, role === "action" ? "-" : String(port), bodyFile, nats?.url ?? "-", nats?.namespace ?? "-", serializer],
			// BENCH_NODE_OPTIONS profiles the baselines too, as it does the stack's processes (support/stack.ts).
			env: { PATH: process.env.PATH ?? "", ...(process.env.BENCH_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS } : {}) },
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

async function serve([role, port, bodyFile, natsUrl, namespace, serializer]: string[]): Promise<void> {
	const data = JSON.parse(fs.readFileSync(bodyFile, "utf8"));
	const given = (arg: string) => (arg === "-" ? null : arg);
	const broker = new ServiceBroker({
		nodeID: `framework-${role}-${process.pid}`,
		namespace: given(namespace) ?? "",
		transporter: given(natsUrl) as never,
		serializer: serializer as BaselineSerializer,
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
