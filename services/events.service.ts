/**
 * Push events (docs/architecture.md#push-events): `POST /api/v3/internal/push` validates the payload and
 * publishes it durably on the channel `push` with a stable event id (also the JetStream msgID,
 * so a publish retried within two minutes is stored once). Every worker group gets every event.
 *
 * Dead letters (events a worker group gave up on) are listed and replayed through the same
 * internal API: `GET /api/v3/internal/dead-letters` and
 * `POST /api/v3/internal/dead-letters/:id/replay` (lib/dead-letters.ts).
 */
import crypto from "crypto";
import type { Context, ServiceSchema } from "moleculer";
import { memoryDeadLetters, natsDeadLetters, redisDeadLetters, type DeadLetterStore } from "../lib/dead-letters";
import { notFound, unavailable } from "../lib/errors";
import { PUSH_CHANNEL } from "../lib/push-channel";
import { validatePushPayload, type PushEvent } from "../lib/push-payload";
import { adapterKind } from "../middlewares/channels.middleware";
import type { ApiMeta } from "../lib/context";

const EventsService: ServiceSchema = {
	name: "events",
	// Tells the channels middleware that this node publishes (it connects and provisions first).
	settings: { $channelPublisher: true } as Record<string, unknown>,

	actions: {
		push: {
			async handler(ctx: Context<Record<string, unknown>, ApiMeta>) {
				const push = validatePushPayload(ctx.params);
				const project = await ctx.call("accounts.projectById", { id: push.project_id });
				if (!project) throw notFound("Project");
				const event: PushEvent = { id: crypto.randomUUID(), received_at: new Date().toISOString(), push };
				await this.publish(event, event.id);
				ctx.meta.$statusCode = 202;
				return { id: event.id };
			},
		},

		deadLetters: {
			params: { limit: { type: "number", integer: true, min: 1, max: 1000, convert: true, optional: true } },
			async handler(ctx: Context<{ limit?: number }>) {
				return this.deadLetterStore().list(ctx.params.limit ?? 100);
			},
		},

		replay: {
			params: { id: { type: "string", min: 1, max: 200 } },
			async handler(ctx: Context<{ id: string }>) {
				const store: DeadLetterStore = this.deadLetterStore();
				const letter = await store.take(ctx.params.id);
				if (!letter?.event?.push || !letter.group) throw notFound("Dead Letter");
				const event: PushEvent = { ...letter.event, replay_group: letter.group };
				await this.publish(event, `${event.id}:replay:${crypto.randomUUID()}`);
				await store.remove(ctx.params.id);
				return { id: event.id, group: letter.group, replayed: true };
			},
		},
	},

	methods: {
		async publish(event: PushEvent, msgID: string): Promise<void> {
			try {
				await this.broker.sendToChannel(PUSH_CHANNEL, event, { msgID, xaddMaxLen: "~1000000" });
			} catch (err) {
				this.logger.error(`Publishing push event ${event.id} failed: ${(err as Error).message}`);
				throw unavailable();
			}
		},

		deadLetterStore(): DeadLetterStore {
			const adapter = (this.broker as unknown as { channelAdapter: any }).channelAdapter;
			const prefix = adapter?.opts?.prefix ?? "";
			switch (adapterKind(adapter)) {
				case "nats":
					return natsDeadLetters(adapter, prefix);
				case "redis":
					return redisDeadLetters(adapter, prefix);
				default:
					return memoryDeadLetters(adapter);
			}
		},
	},
};

export default EventsService;
