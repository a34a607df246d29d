/**
 * 5. Push fan-out: push events posted to `POST /internal/push` at a fixed concurrency, each
 * delivered by all three workers to real peers in this process (an HTTP task tracker: GET +
 * POST comment; smtp-server: one mail; ngircd: two IRC lines). Measures events per second
 * through all three workers (a burst of events posted at concurrency 10), checks that none is
 * lost or delivered twice, and the end-to-end latency of each delivery (POST sent → peer
 * received it) with one event at a time, so that it is not queueing behind the burst.
 *
 * Case: the split deployment (gateway, accounts, integrations, events and the three workers as
 * seven processes, JetStream on the shared NATS, Redis cacher and delivery records). Baseline:
 * the all-in-one process with the in-process channel. IRC pacing is off in both
 * (IRC_MESSAGE_INTERVAL_MS=0; ngircd runs without flood penalties), so the figures show the
 * pipeline, not the deliberate one-line-a-second of production.
 */
import crypto from "crypto";
import { performance } from "perf_hooks";
import { deletePushChannel } from "../../lib/push/provisioning";
import type { BenchContext, Row, Scenario } from "../scenario";
import { listenOnIrc, startIrcServer, type IrcListener } from "../../test/support/peers/irc-server";
import { startSmtpSink, type SmtpSink } from "../../test/support/peers/smtp-sink";
import { startTaskTracker, type TaskTracker } from "../../test/support/peers/task-tracker";
import { NATS_URL, REDIS_URL, type Stack } from "../support/stack";
import { single, summarize } from "../support/stats";

const SECRET = "bench-internal-secret";
const CONCURRENCY = 10;

interface Peers {
	tracker: TaskTracker;
	smtp: SmtpSink;
	irc: IrcListener;
	ircPort: number;
}

interface Measured {
	eventsPerSecond: number;
	latencies: number[];
	perWorker: Record<string, number>;
	lost: number;
	duplicates: number;
}

const sha = (s: string) => crypto.createHash("sha1").update(s).digest("hex");

/** A GitLab-shaped push of one commit whose message carries the marker `e<i>x` and mentions task #1. */
function payload(projectId: number, path: string, run: string, i: number) {
	const id = sha(`${run}:${i}`);
	const [namespace, name] = path.split("/");
	return {
		object_kind: "push",
		before: sha(`${run}:${i}:before`),
		after: id,
		ref: "refs/heads/master",
		user_id: 1,
		user_name: "Bench",
		user_email: "bench@example.com",
		project_id: projectId,
		project: { name, namespace, path_with_namespace: path, web_url: `http://gitlab.example.com/${path}` },
		commits: [
			{
				id,
				message: `push e${i}x for #1`,
				timestamp: "2017-01-01T10:00:00+00:00",
				url: `http://gitlab.example.com/${path}/commit/${id}`,
				author: { name: "Bench", email: "bench@example.com" },
				added: [],
				modified: ["README.md"],
				removed: [],
			},
		],
		total_commits_count: 1,
	};
}

async function post(stack: Stack, body: unknown): Promise<number> {
	const res = await fetch(`${stack.url}/internal/push`, {
		method: "POST",
		headers: { "Content-Type": "application/json", "Gitlab-Shared-Secret": SECRET },
		body: JSON.stringify(body),
	});
	await res.arrayBuffer();
	return res.status;
}

async function waitUntil(what: string, check: () => boolean, timeoutMs: number): Promise<boolean> {
	const deadline = Date.now() + timeoutMs;
	while (!check()) {
		if (Date.now() > deadline) return false;
		await new Promise(r => setTimeout(r, 20));
	}
	return true;
}

/** Marker → arrival times, for the deliveries of one run. */
function arrivals(peers: Peers, run: string, since: { tracker: number; smtp: number; irc: number }) {
	const collect = (items: { text: string; at: number }[]) => {
		const map = new Map<number, number[]>();
		for (const { text, at } of items) {
			const m = /push e(\d+)x for #1/.exec(text);
			if (m) map.set(Number(m[1]), [...(map.get(Number(m[1])) ?? []), at]);
		}
		return map;
	};
	const tracker = collect(
		peers.tracker.requests
			.slice(since.tracker)
			.filter(r => r.method === "POST" && typeof r.body?.data?.text === "string" && r.body.data.text.includes(`/${run}/`))
			.map(r => ({ text: r.body.data.text as string, at: r.at })),
	);
	const mail = collect(
		peers.smtp.messages
			.slice(since.smtp)
			.map((m, i) => ({ text: m.subject ?? "", at: peers.smtp.arrivals[since.smtp + i], project: m.headers.get("x-gitlab-project-path") }))
			.filter(m => String(m.project).endsWith(`/${run}`)),
	);
	const irc = collect(
		peers.irc.messages
			.slice(since.irc)
			.map((m, i) => ({ text: m.text, at: peers.irc.times[since.irc + i] }))
			.filter(m => m.text.startsWith(`${run}/master `)),
	);
	return { tracker, mail, irc };
}

async function measure(ctx: BenchContext, stack: Stack, peers: Peers, events: number): Promise<Measured> {
	const run = `b${crypto.randomBytes(4).toString("hex")}`;
	const project = (await stack.expect(201, "POST", "/projects", { json: { name: run } })).body as { id: number; path_with_namespace: string };
	const services = `/projects/${project.id}/services`;
	await stack.expect(200, "PUT", `${services}/task-tracker-comments`, { json: { api_key: "bench-token" } });
	await stack.expect(200, "PUT", `${services}/emails-on-push`, { json: { recipients: "bench@example.com" } });
	await stack.expect(200, "PUT", `${services}/irc-gateway`, { json: { recipients: `irc://127.0.0.1:${peers.ircPort}/#bench` } });
	const deadline = Date.now() + 30000;
	while ((await post(stack, {})) !== 400) {
		if (Date.now() > deadline) throw new Error("POST /internal/push is not served");
		await new Promise(r => setTimeout(r, 100));
	}

	const since = () => ({ tracker: peers.tracker.requests.length, smtp: peers.smtp.messages.length, irc: peers.irc.messages.length });
	const complete = (start: ReturnType<typeof since>, from: number, to: number) => {
		const a = arrivals(peers, run, start);
		for (let i = from; i < to; i++) if (!a.tracker.has(i) || !a.mail.has(i) || !a.irc.has(i)) return false;
		return true;
	};

	// Warm-up: connections to the peers opened, code paths compiled.
	const warm = since();
	const WARM = 5;
	for (let i = 0; i < WARM; i++)
		if ((await post(stack, payload(project.id, project.path_with_namespace, run, i))) !== 202) throw new Error("warm-up push refused");
	if (!(await waitUntil("warm-up deliveries", () => complete(warm, 0, WARM), 60000))) throw new Error("warm-up events were not delivered within 60 s");

	ctx.log(`  posting ${events} events at concurrency ${CONCURRENCY}`);
	const start = since();
	let next = WARM;
	const last = WARM + events;
	const t0 = performance.now();
	await Promise.all(
		Array.from({ length: CONCURRENCY }, async () => {
			while (next < last) {
				const i = next++;
				const status = await post(stack, payload(project.id, project.path_with_namespace, run, i));
				if (status !== 202) throw new Error(`POST /internal/push answered ${status}`);
			}
		}),
	);
	await waitUntil("every delivery", () => complete(start, WARM, last), 120000);
	await new Promise(r => setTimeout(r, 500)); // late duplicates would show up now
	const a = arrivals(peers, run, start);

	let lost = 0;
	let duplicates = 0;
	let lastArrival = t0;
	for (const map of Object.values(a)) {
		for (let i = WARM; i < last; i++) {
			const times = map.get(i);
			if (!times) lost++;
			else {
				duplicates += times.length - 1;
				lastArrival = Math.max(lastArrival, times[0]);
			}
		}
	}
	const eventsPerSecond = (events * 1000) / (lastArrival - t0);

	// Latency: one event at a time, each waiting for its three deliveries.
	const samples = Math.max(20, Math.floor(events / 8));
	ctx.log(`  ${samples} events one at a time for latency`);
	const latencies: number[] = [];
	const perWorkerSamples: Record<string, number[]> = { tracker: [], mail: [], irc: [] };
	const seqStart = since();
	for (let i = last; i < last + samples; i++) {
		const sent = performance.now();
		if ((await post(stack, payload(project.id, project.path_with_namespace, run, i))) !== 202) throw new Error("push refused");
		if (!(await waitUntil("one event", () => complete(seqStart, i, i + 1), 30000))) {
			lost += 3;
			continue;
		}
		const got = arrivals(peers, run, seqStart);
		for (const [worker, map] of Object.entries(got)) {
			const latency = map.get(i)![0] - sent;
			latencies.push(latency);
			perWorkerSamples[worker].push(latency);
		}
	}
	const perWorker = Object.fromEntries(Object.entries(perWorkerSamples).map(([w, v]) => [`${w}MedianMs`, Math.round(summarize(v).median * 10) / 10]));
	return { eventsPerSecond, latencies, perWorker, lost, duplicates };
}

const scenario: Scenario = {
	name: "push fan-out",
	description: "push events through all three workers to real peers: events/s, loss, end-to-end latency; split over JetStream vs all-in-one",
	async run(ctx: BenchContext): Promise<Row[]> {
		const events = ctx.quick ? 60 : 400;
		const [tracker, smtp, ircServer] = await Promise.all([startTaskTracker(["1"]), startSmtpSink(), startIrcServer()]);
		ctx.defer(() => Promise.all([tracker.stop(), smtp.stop(), ircServer.stop()]));
		const irc = await listenOnIrc(ircServer, "#bench");
		ctx.defer(() => irc.close());
		const peers: Peers = { tracker, smtp, irc, ircPort: ircServer.port };
		const env = {
			TASK_TRACKER_API_URL: tracker.apiUrl,
			SMTP_URL: smtp.url,
			ALLOW_LOCAL_REQUESTS: "true",
			GITLAB_URL: "http://gitlab.example.com",
			IRC_MESSAGE_INTERVAL_MS: "0",
		};

		ctx.log("all-in-one process (in-process channel)");
		const single1 = await ctx.startStack({ nodes: { all: "" }, env });
		const allInOne = await measure(ctx, single1, peers, events);
		await single1.stop();

		ctx.log("split: 7 processes over NATS JetStream, Redis");
		const split = await ctx.startStack({
			nodes: {
				api: "api",
				accounts: "accounts",
				integrations: "integrations",
				events: "events",
				tracker: "workers/task-tracker-commenter",
				mailer: "workers/push-mailer",
				irc: "workers/irc-sender",
			},
			nats: true,
			redis: true,
			env,
		});
		ctx.defer(() => deletePushChannel(NATS_URL, REDIS_URL, split.namespace));
		const cluster = await measure(ctx, split, peers, events);

		for (const [what, m] of [
			["all-in-one", allInOne],
			["split", cluster],
		] as const)
			if (m.lost || m.duplicates) throw new Error(`${what}: ${m.lost} deliveries lost, ${m.duplicates} duplicated out of ${3 * events}`);

		const extra = (m: Measured) => ({ events, deliveries: 3 * events, lost: m.lost, duplicates: m.duplicates, concurrency: CONCURRENCY, ...m.perWorker });
		const baseline = "all-in-one process, in-process channel";
		return [
			{
				case: "split over NATS JetStream + Redis (7 processes)",
				metric: `events/s through 3 workers, ${events} events @ c=${CONCURRENCY}, 0 lost`,
				value: single(Math.round(cluster.eventsPerSecond * 10) / 10),
				baseline,
				baselineValue: single(Math.round(allInOne.eventsPerSecond * 10) / 10),
				better: "higher",
				extra: { ...extra(cluster), baselineLost: allInOne.lost },
			},
			{
				case: "split over NATS JetStream + Redis (7 processes)",
				metric: "end-to-end ms, POST → peer received (each delivery, one event at a time)",
				value: summarize(cluster.latencies),
				baseline,
				baselineValue: summarize(allInOne.latencies),
				better: "lower",
				extra: {
					...extra(cluster),
					...Object.fromEntries(Object.entries(allInOne.perWorker).map(([k, v]) => [`baseline${k[0].toUpperCase()}${k.slice(1)}`, v])),
				},
			},
		];
	},
};

export default scenario;
