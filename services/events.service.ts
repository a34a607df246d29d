/**
 * Push events (docs/architecture.md#push-events): `POST /api/v3/internal/push` validates the payload and
 * publishes it durably on the channel `push` with a stable event id (also the JetStream msgID,
 * so a publish retried within two minutes is stored once). Every worker group gets every event.
 *
 * Dead letters (events a worker group gave up on) are listed and replayed through the same
 * internal API: `GET /api/v3/internal/dead-letters` and
 * `POST /api/v3/internal/dead-letters/:id/replay` (lib/push/dead-letters.ts).
 */
import crypto from "crypto";
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import { config } from "../config";
import { DEAD_LETTER_ID, memoryDeadLetters, natsDeadLetters, redisDeadLetters, type DeadLetterStore } from "../lib/push/dead-letters";
import type { InProcessChannelAdapter } from "../lib/push/in-process-channel-adapter";
import { conflict, notFound, paramError, unavailable } from "../lib/api/errors";
import { schemaPattern } from "../lib/api/schema-pattern";
import { ProjectCache } from "../lib/cache/project-cache";
import { channelBackendIfValid, PUSH_CHANNEL, REPLAY_WINDOW_MS } from "../lib/push/channel";
import { validatePushPayload, type PushEvent } from "../lib/push/payload";
import { adapterKind } from "../middlewares/channels.middleware";
import type { ApiMeta } from "../lib/api/context";
import { projectById } from "../lib/accounts/lookups";

/**
 * The event id of a push request: derived from the request id and the payload, so that the same
 * request sent twice (a hedged call) names the same event, and two pushes never share one
 * (a client-chosen X-Request-ID reused for another payload gives another id). UUID-shaped.
 */
export function requestEventId(requestID: string | null | undefined, params: unknown): string {
	if (!requestID) return crypto.randomUUID();
	const h = crypto.createHash("sha256").update(requestID).update("\n").update(JSON.stringify(params)).digest();
	h[6] = (h[6] & 0x0f) | 0x50;
	h[8] = (h[8] & 0x3f) | 0x80;
	const hex = h.subarray(0, 16).toString("hex");
	return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** A publish attempt waits this long at most for JetStream's acknowledgement. */
const PUBLISH_ATTEMPT_MS = 3000;
/** Publishing gives up this long before the gateway's request timeout, so that the answer (202 or 503) reaches the client before it. */
const PUBLISH_MARGIN_MS = 1500;

/**
 * Projects are never deleted (the API has no such endpoint), so a project seen once still exists:
 * `events` asks accounts only about ids it has not seen lately, instead of once per push. An
 * unknown id is not remembered (a project created a moment later is found at once). Should
 * deleting a project ever be added, it must make `events` forget the id (`knownProjects.invalidate`).
 */
const KNOWN_PROJECTS = { ttlMs: 60_000, maxEntries: 10_000 };

/** Letters are trimmed to the retention this often where the store does not do it itself (Redis). */
const TRIM_EVERY_MS = 3600_000;

const TOO_OLD_TO_REPLAY = `Dead letter is too old to replay: its event was received more than ${Math.floor(REPLAY_WINDOW_MS / 86_400_000)} days ago`;

interface Methods {
	publish(event: PushEvent, msgID: string): Promise<void>;
	deadLetterStore(): DeadLetterStore;
}

interface Vars {
	knownProjects: ProjectCache<true>;
	trimTimer: NodeJS.Timeout | null;
}

const EventsService: ServiceSchema<ServiceSettingSchema & { $channelPublisher: boolean }, Methods, Vars> = {
	name: "events",
	// Tells the channels middleware that this node publishes (it connects and provisions first).
	settings: { $channelPublisher: true },

	actions: {
		push: {
			// Sent again by the caller when the first request is lost in transit: on JetStream the
			// second publish has the same msgID (the event id follows from the request) and is stored once.
			hedge: channelBackendIfValid(config)?.kind === "nats",
			async handler(ctx: Context<Record<string, unknown>, ApiMeta>) {
				const push = validatePushPayload(ctx.params);
				await this.knownProjects.get(push.project_id, async () => {
					if (!(await projectById(ctx, push.project_id))) throw notFound("Project");
					return true;
				});
				const event: PushEvent = { id: requestEventId(ctx.requestID, ctx.params), received_at: new Date().toISOString(), push };
				await this.publish(event, event.id);
				ctx.meta.$statusCode = 202;
				return { id: event.id };
			},
		},

		deadLetters: {
			// Not hedged: a list of up to 1000 letters may take over a second, and a second copy would only double it.
			params: { limit: { type: "number", integer: true, min: 1, max: 1000, convert: true, optional: true } },
			async handler(ctx: Context<{ limit?: number }>) {
				const store = this.deadLetterStore();
				const now = Date.now();
				// An operator sees which letters a replay would refuse (409) before trying.
				return (await store.list(ctx.params.limit ?? 100)).map(letter => ({ ...letter, replayable: store.canReplay(letter.received_at, now) }));
			},
		},

		replay: {
			params: { id: { type: "string", min: 1, max: 200, openapi: { pattern: schemaPattern(DEAD_LETTER_ID) } } },
			async handler(ctx: Context<{ id: string }, ApiMeta>) {
				const store = this.deadLetterStore();
				if (!DEAD_LETTER_ID.test(ctx.params.id)) throw paramError("id is invalid");
				// Another store's id: no letter of this one.
				const letter = store.validId(ctx.params.id) ? await store.take(ctx.params.id) : null;
				if (!letter?.event?.push || !letter.group) throw notFound("Dead Letter");
				if (!store.canReplay(letter.event.received_at, Date.now())) throw conflict(TOO_OLD_TO_REPLAY);
				const event: PushEvent = { ...letter.event, replay_group: letter.group };
				// The same msgID for the same letter: on JetStream, two replays racing each other store one event.
				await this.publish(event, `${event.id}:replay:${letter.id}`);
				await store.remove(letter.id);
				// Replays resend deliveries: each leaves a trace of who asked.
				this.logger.info(
					`Replayed dead letter ${letter.id} (event ${event.id}) to ${letter.group}, asked from ${ctx.meta.clientAddress ?? "this cluster"}`,
				);
				return { id: event.id, group: letter.group, replayed: true };
			},
		},
	},

	created() {
		this.knownProjects = new ProjectCache<true>(KNOWN_PROJECTS);
		this.trimTimer = null;
	},

	started() {
		const trim = async () => {
			try {
				await this.deadLetterStore().trim?.(Date.now());
			} catch (err) {
				this.logger.warn(`Trimming the dead letters failed: ${(err as Error).message}`);
			}
		};
		this.trimTimer = setInterval(() => void trim(), TRIM_EVERY_MS);
		this.trimTimer.unref();
	},

	stopped() {
		if (this.trimTimer) clearInterval(this.trimTimer);
	},

	methods: {
		/**
		 * Stores the event on the channel. On JetStream a failed publish is tried again (the
		 * stream's leader may be being elected after a node was lost) until shortly before the
		 * gateway's request timeout: the msgID makes a repeated publish store the event once.
		 */
		async publish(event: PushEvent, msgID: string): Promise<void> {
			const retries = adapterKind((this.broker as unknown as { channelAdapter: unknown }).channelAdapter) === "nats";
			const deadline = Date.now() + Math.max(500, config.requestTimeoutMs - PUBLISH_MARGIN_MS);
			for (let pause = 100; ; pause = Math.min(2 * pause, 1000)) {
				const timeout = Math.max(200, Math.min(PUBLISH_ATTEMPT_MS, deadline - Date.now()));
				try {
					await this.broker.sendToChannel(PUSH_CHANNEL, event, { msgID, xaddMaxLen: "~1000000", timeout });
					return;
				} catch (err) {
					if (!retries || Date.now() + pause >= deadline) {
						this.logger.error(`Publishing push event ${event.id} failed: ${(err as Error).message}`);
						throw unavailable();
					}
					this.logger.warn(`Publishing push event ${event.id} failed (${(err as Error).message}); trying again`);
					await new Promise(r => setTimeout(r, pause));
				}
			}
		},

		deadLetterStore(): DeadLetterStore {
			// Which library class the adapter is decides which of the shapes below it has.
			const adapter = (this.broker as unknown as { channelAdapter: { opts: { prefix?: string | null } } }).channelAdapter;
			const prefix = adapter.opts.prefix ?? "";
			switch (adapterKind(adapter)) {
				case "nats":
					return natsDeadLetters(adapter as unknown as Parameters<typeof natsDeadLetters>[0], prefix);
				case "redis":
					return redisDeadLetters(adapter as unknown as Parameters<typeof redisDeadLetters>[0], prefix);
				default:
					return memoryDeadLetters(adapter as unknown as InProcessChannelAdapter);
			}
		},
	},
};

export default EventsService;
