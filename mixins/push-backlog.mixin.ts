/**
 * A push worker's backlog as a Prometheus gauge (docs/operations.md#scaling): every few seconds the
 * worker asks JetStream for its group's durable consumer and sets `push_consumer_backlog{group,
 * stream}` to its pending plus unacknowledged events (lib/push/backlog.ts). A mailer waiting on a
 * slow SMTP server uses little CPU while this grows: it is what the workers scale on (KEDA,
 * k8s/components/keda-workers). Only on JetStream; the other channels export nothing.
 */
import type { JetStreamManager } from "nats";
import type { Service, ServiceSchema } from "moleculer";
import { readBacklog } from "../lib/push/backlog";
import { channelBackendIfValid, pushNames, type PushGroup } from "../lib/push/channel";
import { config } from "../config";

const PUSH_BACKLOG = "push.consumer.backlog";
/** How often the gauge is refreshed (a scrape every 15 to 30 s sees a value at most this old). */
const BACKLOG_EVERY_MS = 5000;

type BacklogThis = Service & { backlogTimer?: NodeJS.Timeout };

export function PushBacklogMixin(group: PushGroup): Partial<ServiceSchema> {
	return {
		started(this: BacklogThis) {
			if (channelBackendIfValid(config)?.kind !== "nats" || !this.broker.isMetricsEnabled()) return;
			const metrics = this.broker.metrics;
			if (!metrics.getMetric(PUSH_BACKLOG))
				metrics.register({
					name: PUSH_BACKLOG,
					type: "gauge",
					labelNames: ["group", "stream"],
					description: "Push events a worker group has yet to handle: not yet delivered to it, or delivered and not yet acknowledged",
				});
			const stream = pushNames(this.broker.namespace ?? "").stream;
			const labels = { group, stream };
			const refresh = async () => {
				const manager = (this.broker as unknown as { channelAdapter?: { manager?: JetStreamManager } }).channelAdapter?.manager;
				if (!manager) return;
				try {
					metrics.set(PUSH_BACKLOG, await readBacklog(manager, stream, group), labels);
				} catch (err) {
					// The last value stays; the next refresh tries again.
					this.logger.debug(`Reading the backlog of ${group} failed: ${(err as Error).message}`);
				}
			};
			void refresh();
			this.backlogTimer = setInterval(() => void refresh(), BACKLOG_EVERY_MS);
			this.backlogTimer.unref();
		},

		stopped(this: BacklogThis) {
			if (this.backlogTimer) clearInterval(this.backlogTimer);
		},
	};
}
