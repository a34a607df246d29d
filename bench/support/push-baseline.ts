/**
 * The framework's own floor for scenario 5: the split push pipeline built from Moleculer's parts
 * alone, delivering the same things to the same peers. Five processes, the shape of the split
 * stack's push path:
 * - `front`: a minimal moleculer-web gateway, `POST /api/v3/internal/push` → `push.publish`;
 * - `publisher`: that action in a second process over the same NATS (the transporter), which
 *   sends the body on the `push` channel (@moleculer/channels, JetStream) and answers 202;
 * - `worker <group>`, three of them: one consumer group each on that channel, with the channels
 *   library's defaults (its own "working" signal, stream and consumer as it creates them), making
 *   the same delivery as the project's worker of that group, with the project's own senders
 *   (the two tracker calls, the composed mail over the kept SMTP sessions, the IRC lines).
 * What the project adds is left out: payload validation and the project look-up, integration
 * settings, delivery records (claims and records in a key-value bucket), retry scheduling and
 * dead letters, provisioning, metrics. The gap between the two is what those cost; the floor
 * itself is what the framework and the deliveries cost on this machine.
 *
 * Run as a script by `startPushBaseline`:
 *   node push-baseline.js front     <port> <nats url> <namespace>
 *   node push-baseline.js publisher -      <nats url> <namespace>
 *   node push-baseline.js worker    <group> <nats url> <namespace> <peers: JSON>
 */
import { Middleware as ChannelsMiddleware } from "@moleculer/channels";
import { ServiceBroker, type Context } from "moleculer";
import ApiGateway from "moleculer-web";
import { createMailer } from "../../lib/integrations/emails-on-push/mailer";
import { buildPushEmail } from "../../lib/integrations/emails-on-push/push-email";
import { buildIrcMessages } from "../../lib/integrations/irc-gateway/messages";
import { parseTarget } from "../../lib/integrations/irc-gateway/recipients";
import { IrcPool } from "../../lib/integrations/irc-gateway/sender";
import { planComments } from "../../lib/integrations/task-tracker-comments/scanner";
import { requestJson } from "../../lib/outbound/http";
import { PUSH_CHANNEL, PUSH_GROUPS, type PushGroup } from "../../lib/push/channel";
import type { PushPayload } from "../../lib/push/payload";
import { apiRequest } from "./http";
import { freePort, launch, stopProcess, waitUntilReady, type ManagedProcess } from "../../test/support/processes";

const PUSH_PATH = "/internal/push";

/** Where the baseline's workers deliver: the scenario's peers. */
export interface BaselinePeers {
	trackerUrl: string;
	smtpUrl: string;
	ircUri: string;
	gitlabUrl: string;
	/** What the project's integrations are set to in the same run: the tracker's token, the mail's recipient. */
	trackerApiKey: string;
	mailTo: string;
	/** The project's PUSH_MAX_IN_FLIGHT, so that both pipelines hold as many events at once. */
	maxInFlight: number;
}

export interface PushBaseline {
	url: string;
	procs: ManagedProcess[];
	stop(): Promise<void>;
}

const READY_LINE = "push-baseline ready";
const OUTBOUND_TIMEOUT_MS = 10_000;

/** Starts the five processes (workers first: the channel library creates the stream when a consumer subscribes). */
export async function startPushBaseline(nats: { url: string; namespace: string }, peers: BaselinePeers): Promise<PushBaseline> {
	const port = await freePort();
	const base = `http://127.0.0.1:${port}/api/v3`;
	const procs: ManagedProcess[] = [];
	const env = { PATH: process.env.PATH ?? "", ...(process.env.BENCH_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS } : {}) };
	const start = async (name: string, args: string[], ready: (proc: ManagedProcess) => Promise<boolean>) => {
		const proc = launch({ name, args: [__filename, ...args], env });
		procs.push(proc);
		await waitUntilReady(proc, () => ready(proc), { timeoutMs: 30_000 });
	};
	const printedReady = (proc: ManagedProcess) => Promise.resolve(proc.output.join("").includes(READY_LINE));
	try {
		const names: Record<PushGroup, string> = { "task-tracker-commenter": "tracker", "push-mailer": "mailer", "irc-sender": "irc" };
		for (const group of PUSH_GROUPS) await start(names[group], ["worker", group, nats.url, nats.namespace, JSON.stringify(peers)], printedReady);
		await start("publisher", ["publisher", "-", nats.url, nats.namespace], printedReady);
		// Ready once the gateway has discovered the publisher: an empty push is taken (and ignored by the workers).
		await start(
			"front",
			["front", String(port), nats.url, nats.namespace],
			async () => (await apiRequest(base, "POST", PUSH_PATH, { json: {} })).status === 202,
		);
	} catch (err) {
		for (const p of procs) p.child.kill("SIGKILL");
		throw err;
	}
	return { url: base + PUSH_PATH, procs, stop: async () => void (await Promise.all(procs.map(p => stopProcess(p, "SIGTERM", 5000)))) };
}

/** The channels library on the same NATS, as its documentation sets it up (connection options: see docs/architecture.md#channel-adapters). */
function channels(natsUrl: string) {
	const servers = natsUrl.split(",").map(u => new URL(u).host);
	return ChannelsMiddleware({ adapter: { type: "NATS", options: { nats: { connectionOptions: { servers } } } } } as never);
}

/** One consumer group's delivery of one push, as the project's worker of that group makes it. */
function deliveryFor(group: PushGroup, peers: BaselinePeers): (push: PushPayload) => Promise<void> {
	if (group === "task-tracker-commenter")
		return async push => {
			for (const item of planComments(push)) {
				const task = encodeURIComponent(item.taskId);
				const call = (method: string, path: string, json?: unknown) =>
					requestJson({
						method,
						url: `${peers.trackerUrl}${path}`,
						headers: { Authorization: `Bearer ${peers.trackerApiKey}` },
						json,
						timeoutMs: OUTBOUND_TIMEOUT_MS,
						allowLocal: true,
					});
				await call("GET", `/tasks/${task}`);
				await call("POST", `/tasks/${task}/stories`, { data: { text: item.text } });
			}
		};
	if (group === "push-mailer") {
		const mailer = createMailer({ smtpUrl: peers.smtpUrl, dataDir: "", timeoutMs: OUTBOUND_TIMEOUT_MS, poolSize: 16 });
		const options = { gitlabUrl: peers.gitlabUrl, mailFrom: "gitlab@localhost", disableDiffs: false, sendFromCommitterEmail: false };
		return async push => {
			const mail = buildPushEmail(push, options);
			if (mail) await mailer.send({ ...mail, to: peers.mailTo }, "");
		};
	}
	const pool = new IrcPool({ nick: "gitlab", timeoutMs: OUTBOUND_TIMEOUT_MS, intervalMs: 0, allowLocal: true, idleMs: 600_000 });
	const target = parseTarget(peers.ircUri)!;
	return push => pool.send(target, buildIrcMessages(push, { gitlabUrl: peers.gitlabUrl, colorize: false }));
}

async function serve([role, arg, natsUrl, namespace, peersJson]: string[]): Promise<void> {
	const broker = new ServiceBroker({
		nodeID: `push-baseline-${role}-${arg}-${process.pid}`,
		namespace,
		// The project's serializer (moleculer.config.ts); the workers need no transporter.
		transporter: role === "worker" ? null : (natsUrl as never),
		serializer: "JSONExt",
		logger: false,
		middlewares: role === "front" ? [] : [channels(natsUrl)],
	});
	if (role === "front")
		broker.createService({
			name: "api",
			mixins: [ApiGateway as never],
			settings: {
				port: Number(arg),
				ip: "127.0.0.1",
				path: "/api/v3",
				logRequest: null,
				logResponse: null,
				routes: [{ path: "/internal", bodyParsers: { json: { limit: "1mb" } }, aliases: { "POST /push": "push.publish" } }],
			},
		});
	if (role === "publisher")
		broker.createService({
			name: "push",
			actions: {
				async publish(ctx: Context<Record<string, unknown>, { $statusCode?: number }>) {
					const channels = broker as unknown as { sendToChannel(name: string, payload: unknown): Promise<void> };
					await channels.sendToChannel(PUSH_CHANNEL, { push: ctx.params });
					ctx.meta.$statusCode = 202;
					return {};
				},
			},
		});
	if (role === "worker") {
		const group = arg as PushGroup;
		const peers = JSON.parse(peersJson) as BaselinePeers;
		const deliver = deliveryFor(group, peers);
		broker.createService({
			name: group,
			channels: {
				[PUSH_CHANNEL]: {
					group,
					maxInFlight: peers.maxInFlight,
					// The readiness probe's empty pushes carry no commits: nothing to deliver.
					handler: (event: { push?: PushPayload }) => (event.push?.commits ? deliver(event.push) : undefined),
				},
			},
		} as never);
	}
	await broker.start();
	process.stdout.write(`${READY_LINE}\n`);
	const stop = () => void broker.stop().finally(() => process.exit(0));
	process.once("SIGTERM", stop);
	process.once("SIGINT", stop);
}

if (require.main === module) void serve(process.argv.slice(2));
