/**
 * Creates the `push` channel's store before anything uses it, so that no event is lost:
 * - JetStream: the stream (with limits) and one durable consumer per worker group with
 *   `deliver_policy: all`. The channels adapter creates consumers with `deliver_policy: new`
 *   only when a worker first subscribes, and a publish before the stream exists fails with
 *   503 (docs/architecture.md#push-provisioning). It then attaches to what exists here.
 * - Redis Streams: one consumer group per worker from ID 0 (the adapter's default `$` would
 *   skip what was published before the worker's first start).
 * Idempotent: existing streams and consumers are kept as they are (their config is frozen on
 * creation; change it with `jsm.consumers.update` or delete and re-provision). While a JetStream
 * cluster is still electing its leaders (all nodes and services starting at once), a call that
 * gets "not now" is made again, for up to a minute.
 */
import Redis from "ioredis";
import { connect, type JetStreamManager } from "nats";
import { MAX_RETAINED_EVENTS, nanos, natsConnectionOptions, PUSH_GROUPS, pushNames, RETENTION_MS } from "./channel";

export interface ProvisionOptions {
	prefix: string;
	groups?: readonly string[];
	maxInFlight: number;
	ackWaitMs: number;
	/** Copies of each stream in a JetStream cluster (1 on a single server). */
	replicas?: number;
}

/** A JetStream API answer that says "not now": no leader yet, no responders, or no answer in time. */
const transient = (err: unknown) =>
	/TIMEOUT|503|no responders|temporarily unavailable|leader/i.test(`${(err as { code?: string })?.code ?? ""} ${(err as Error)?.message ?? err}`);
/** How long provisioning keeps asking while a JetStream cluster elects its leaders (every node starts at once). */
const PROVISION_PATIENCE_MS = 60_000;

/** Runs a JetStream API call again while the cluster answers "not now". */
async function patiently<T>(call: () => Promise<T>, deadline: number): Promise<T> {
	for (let pause = 250; ; pause = Math.min(2 * pause, 2000)) {
		try {
			return await call();
		} catch (err) {
			if (!transient(err) || Date.now() + pause > deadline) throw err;
			await new Promise(r => setTimeout(r, pause));
		}
	}
}

const alreadyExists = (err: unknown) => /already in use|already exists|BUSYGROUP/i.test(String((err as Error)?.message ?? err));
const notFound = (err: unknown) => /not found/i.test(String((err as Error)?.message ?? err)) || (err as { code?: string })?.code === "404";

/** Adds what `info` does not find; what exists, or what another process adds meanwhile, is kept as it is. */
async function ensure(info: () => Promise<unknown>, add: () => Promise<unknown>, deadline: number): Promise<void> {
	try {
		await patiently(info, deadline);
		return;
	} catch (err) {
		if (!notFound(err)) throw err;
	}
	try {
		await patiently(add, deadline);
	} catch (err) {
		if (!alreadyExists(err)) throw err;
	}
}

function ensureStream(jsm: JetStreamManager, name: string, subject: string, maxMsgs: number, replicas: number, deadline: number): Promise<void> {
	return ensure(
		() => jsm.streams.info(name),
		() =>
			jsm.streams.add({
				name,
				subjects: [subject],
				storage: "file" as never,
				retention: "limits" as never,
				max_age: nanos(RETENTION_MS),
				max_msgs: maxMsgs,
				duplicate_window: nanos(120_000),
				num_replicas: replicas,
			}),
		deadline,
	);
}

export async function provisionJetStream(url: string, opts: ProvisionOptions): Promise<void> {
	const names = pushNames(opts.prefix);
	const nc = await connect({ ...natsConnectionOptions(url), name: "push-provisioner", timeout: 10_000 });
	const deadline = Date.now() + PROVISION_PATIENCE_MS;
	try {
		const jsm = await patiently(() => nc.jetstreamManager({ timeout: 10_000 }), deadline);
		await ensureStream(jsm, names.stream, names.channel, MAX_RETAINED_EVENTS, opts.replicas ?? 1, deadline);
		await ensureStream(jsm, names.deadLetterStream, names.deadLetterSubject, MAX_RETAINED_EVENTS, opts.replicas ?? 1, deadline);
		for (const group of opts.groups ?? PUSH_GROUPS)
			await ensure(
				() => jsm.consumers.info(names.stream, group),
				() =>
					jsm.consumers.add(names.stream, {
						durable_name: group,
						// The adapter's queue subscription: deliver_group must be the stream name.
						deliver_subject: `_deliver.${names.stream}.${group}`,
						deliver_group: names.stream,
						deliver_policy: "all" as never,
						ack_policy: "explicit" as never,
						ack_wait: nanos(opts.ackWaitMs),
						max_ack_pending: opts.maxInFlight,
						max_deliver: -1,
					}),
				deadline,
			);
	} finally {
		await nc.close();
	}
}

export async function provisionRedis(url: string, opts: Pick<ProvisionOptions, "prefix" | "groups">): Promise<void> {
	const names = pushNames(opts.prefix);
	const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 2 });
	try {
		await redis.connect();
		for (const group of opts.groups ?? PUSH_GROUPS) {
			try {
				await redis.xgroup("CREATE", names.channel, group, "0", "MKSTREAM");
			} catch (err) {
				if (!alreadyExists(err)) throw err;
			}
		}
	} finally {
		redis.disconnect();
	}
}

/** Removes the channel's streams (tests clean up their namespace with this). */
export async function deleteJetStreamPush(url: string, prefix: string): Promise<void> {
	const names = pushNames(prefix);
	const nc = await connect({ ...natsConnectionOptions(url), name: "push-cleanup" });
	try {
		const jsm = await nc.jetstreamManager();
		for (const s of [names.stream, names.deadLetterStream, `KV_${names.deliveryBucket}`, `KV_${names.workersBucket}`])
			await jsm.streams.delete(s).catch((err: unknown) => {
				if (!notFound(err)) throw err;
				return false;
			});
	} finally {
		await nc.close();
	}
}

async function deleteRedisPush(url: string, prefix: string): Promise<void> {
	const names = pushNames(prefix);
	const redis = new Redis(url, { maxRetriesPerRequest: 2 });
	try {
		await redis.del(names.channel, names.deadLetterSubject);
	} finally {
		redis.disconnect();
	}
}

/** Everything the push channel left under one namespace: streams, dead letters, delivery records (buckets and Redis keys). */
export async function deletePushChannel(natsUrl: string, redisUrl: string, prefix: string): Promise<void> {
	if (!prefix) throw new Error("refusing to delete the push channel of the empty namespace");
	await deleteJetStreamPush(natsUrl, prefix);
	await deleteRedisPush(redisUrl, prefix);
	const redis = new Redis(redisUrl, { maxRetriesPerRequest: 2 });
	try {
		let cursor = "0";
		do {
			const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 500);
			cursor = next;
			if (keys.length) await redis.del(...keys);
		} while (cursor !== "0");
	} finally {
		redis.disconnect();
	}
}
