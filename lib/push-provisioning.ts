/**
 * Creates the `push` channel's store before anything uses it, so that no event is lost:
 * - JetStream: the stream (with limits) and one durable consumer per worker group with
 *   `deliver_policy: all`. The channels adapter creates consumers with `deliver_policy: new`
 *   only when a worker first subscribes, and a publish before the stream exists fails with
 *   503 (moleculer-tried.md §4). It then attaches to what exists here.
 * - Redis Streams: one consumer group per worker from ID 0 (the adapter's default `$` would
 *   skip what was published before the worker's first start).
 * Idempotent: existing streams and consumers are kept as they are (their config is frozen on
 * creation; change it with `jsm.consumers.update` or delete and re-provision).
 */
import Redis from "ioredis";
import { connect, type JetStreamManager } from "nats";
import { MAX_RETAINED_EVENTS, nanos, natsConnectionOptions, PUSH_GROUPS, pushNames, RETENTION_MS } from "./push-channel";

export interface ProvisionOptions {
	prefix: string;
	groups?: readonly string[];
	maxInFlight: number;
	ackWaitMs: number;
	/** Copies of each stream in a JetStream cluster (1 on a single server). */
	replicas?: number;
}

const alreadyExists = (err: unknown) => /already in use|already exists|BUSYGROUP/i.test(String((err as Error)?.message ?? err));
const notFound = (err: unknown) => /not found/i.test(String((err as Error)?.message ?? err)) || (err as { code?: string })?.code === "404";

async function ensureStream(jsm: JetStreamManager, name: string, subject: string, maxMsgs: number, replicas: number): Promise<void> {
	try {
		await jsm.streams.info(name);
		return;
	} catch (err) {
		if (!notFound(err)) throw err;
	}
	try {
		await jsm.streams.add({
			name,
			subjects: [subject],
			storage: "file" as never,
			retention: "limits" as never,
			max_age: nanos(RETENTION_MS),
			max_msgs: maxMsgs,
			duplicate_window: nanos(120_000),
			num_replicas: replicas,
		});
	} catch (err) {
		if (!alreadyExists(err)) throw err;
	}
}

export async function provisionJetStream(url: string, opts: ProvisionOptions): Promise<void> {
	const names = pushNames(opts.prefix);
	const nc = await connect({ ...natsConnectionOptions(url), name: "push-provisioner", timeout: 10_000 });
	try {
		const jsm = await nc.jetstreamManager();
		await ensureStream(jsm, names.stream, names.channel, MAX_RETAINED_EVENTS, opts.replicas ?? 1);
		await ensureStream(jsm, names.deadLetterStream, names.deadLetterSubject, MAX_RETAINED_EVENTS, opts.replicas ?? 1);
		for (const group of opts.groups ?? PUSH_GROUPS) {
			try {
				await jsm.consumers.info(names.stream, group);
				continue;
			} catch (err) {
				if (!notFound(err)) throw err;
			}
			try {
				await jsm.consumers.add(names.stream, {
					durable_name: group,
					// The adapter's queue subscription: deliver_group must be the stream name.
					deliver_subject: `_deliver.${names.stream}.${group}`,
					deliver_group: names.stream,
					deliver_policy: "all" as never,
					ack_policy: "explicit" as never,
					ack_wait: nanos(opts.ackWaitMs),
					max_ack_pending: opts.maxInFlight,
					max_deliver: -1,
				});
			} catch (err) {
				if (!alreadyExists(err)) throw err;
			}
		}
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
			await jsm.streams.delete(s).catch(err => (notFound(err) ? false : Promise.reject(err)));
	} finally {
		await nc.close();
	}
}

export async function deleteRedisPush(url: string, prefix: string): Promise<void> {
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
