/**
 * The split stack that follows a push through every process (test/e2e/faults/nats-cluster.spec.ts,
 * test/e2e/deploy/tracing.spec.ts): the gateway, accounts, labels, integrations, events and the three
 * workers as separate processes, each worker against a real peer started here (an HTTP task
 * tracker, smtp-server, ngircd with a client listening on #dev), and a project of root's with
 * the three integrations set up through the API, as a new user would.
 */
import { startCluster, type Cluster } from "./cluster";
import { client, waitFor } from "./http";
import { listenOnIrc, startIrcServer, type IrcListener, type IrcServer } from "./peers/irc-server";
import { startSmtpSink, type SmtpSink } from "./peers/smtp-sink";
import { startTaskTracker, type TaskTracker } from "./peers/task-tracker";

const NODES = {
	api: "api",
	accounts: "accounts",
	labels: "labels",
	integrations: "integrations",
	events: "events",
	tracker: "workers/task-tracker-commenter",
	mailer: "workers/push-mailer",
	irc: "workers/irc-sender",
};

/** The workers' peers: started before the stack, so that a spec may start its own servers beside them. */
export class PushPeers {
	private constructor(
		readonly tracker: TaskTracker,
		readonly smtp: SmtpSink,
		readonly irc: IrcServer,
		readonly dev: IrcListener,
	) {}

	/** `tasks`: the task ids the tracker knows. */
	static async start(tasks: string[]): Promise<PushPeers> {
		const [tracker, smtp, irc] = await Promise.all([startTaskTracker(tasks), startSmtpSink(), startIrcServer()]);
		try {
			return new PushPeers(tracker, smtp, irc, await listenOnIrc(irc, "#dev"));
		} catch (err) {
			await Promise.all([tracker.stop(), smtp.stop(), irc.stop()]);
			throw err;
		}
	}

	async stop(): Promise<void> {
		await this.dev.close();
		await Promise.all([this.tracker.stop(), this.smtp.stop(), this.irc.stop()]);
	}
}

export interface PushStackOptions {
	/** The project's name. */
	name: string;
	/** The task tracker integration's `api_key`. */
	trackerKey: string;
	/** The e-mail integration's `recipients`. */
	recipients: string;
	/** Environment for every process, beside the peers' addresses. */
	env: Record<string, string>;
	keepAllOutput?: boolean;
}

/** The stack and its project, once the three integrations are set and events are served. */
export async function startPushStack(
	peers: PushPeers,
	opts: PushStackOptions,
): Promise<{ cluster: Cluster; project: { id: number; path_with_namespace: string } }> {
	const cluster = await startCluster({
		nodes: NODES,
		keepAllOutput: opts.keepAllOutput,
		// The peers listen on 127.0.0.1: outbound calls there are allowed.
		env: { TASK_TRACKER_API_URL: peers.tracker.apiUrl, SMTP_URL: peers.smtp.url, ALLOW_LOCAL_REQUESTS: "true", ...opts.env },
	});
	try {
		const project = (await cluster.api().post("/projects", { body: { name: opts.name } })).body;
		// Every service discovered before the first request that needs it (processes become ready one by one).
		await cluster.waitForRoute("GET", `/projects/${project.id}/services/emails-on-push`);
		const settings: [string, Record<string, string>][] = [
			["task-tracker-comments", { api_key: opts.trackerKey }],
			["emails-on-push", { recipients: opts.recipients }],
			["irc-gateway", { recipients: `irc://127.0.0.1:${peers.irc.port}/#dev` }],
		];
		for (const [slug, form] of settings) {
			const res = await cluster.api().put(`/projects/${project.id}/services/${slug}`, { form });
			if (res.status !== 200) throw new Error(`PUT ${slug}: ${res.status} ${JSON.stringify(res.body)}`);
		}
		const secret = { "Gitlab-Shared-Secret": cluster.internalSecret };
		await waitFor(
			"events to be served",
			async () => (await client(cluster.url).post("/internal/push", { body: {}, headers: secret })).status === 400,
			30000,
		);
		return { cluster, project };
	} catch (err) {
		await cluster.stop();
		throw err;
	}
}
