/**
 * irc-gateway (GitLab's Irker service, docs/integrations.md#irc-gateway): the gateway itself. Parses the
 * recipients (irc/ircs URIs, `default_irc_uri`, channel keys, nicks), sends GitLab's lines
 * (branch created/deleted, a summary with the compare link, at most 3 commits, mIRC colours
 * with `colorize_messages`) over pooled, paced connections with time limits.
 */
import type { ServiceSchema, ServiceSettingSchema } from "moleculer";
import { config } from "../../config";
import { buildIrcMessages } from "../../lib/integrations/irc-gateway/messages";
import { describeTarget, parseRecipients, parseTarget, type IrcTarget } from "../../lib/integrations/irc-gateway/recipients";
import { IrcPool } from "../../lib/integrations/irc-gateway/sender";
import type { PushEvent } from "../../lib/push/payload";
import { PushWorkerMixin, type Delivery, type IntegrationSettings, type PushWorkerMethods } from "../../mixins/push-worker.mixin";

const IrcSender: ServiceSchema<ServiceSettingSchema, PushWorkerMethods, { pool: IrcPool }> = {
	name: "irc-sender",
	mixins: [PushWorkerMixin({ group: "irc-sender", slug: "irc-gateway", parallel: true })],

	created() {
		this.pool = new IrcPool({
			nick: config.ircNick,
			timeoutMs: config.outboundTimeoutMs,
			intervalMs: config.ircMessageIntervalMs,
			allowLocal: config.allowLocalRequests,
			idleMs: 10 * 60 * 1000,
		});
	},

	async stopped() {
		await this.pool.close();
	},

	methods: {
		deliveries(event: PushEvent, settings: IntegrationSettings): Delivery[] {
			const p = settings.properties;
			const lines = buildIrcMessages(event.push, { gitlabUrl: config.gitlabUrl, colorize: p.colorize_messages === true });
			if (!lines.length) return [];
			const targets = parseRecipients(typeof p.recipients === "string" ? p.recipients : "", p.default_irc_uri as string | undefined)
				.map(parseTarget)
				.filter((t): t is IrcTarget => !!t);
			return targets.map(t => ({ target: `irc:${t.uri}`, label: `irc:${describeTarget(t)}`, run: () => this.pool.send(t, lines) }));
		},
	},
};

export default IrcSender;
