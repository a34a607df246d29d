/**
 * emails-on-push (docs/integrations.md#emails-on-push): one mail per push to each whitespace-separated
 * recipient, with GitLab's subject and body (commits, changed files, diffs unless
 * `disable_diffs`) and sender rules (`send_from_committer_email`), for the branches it is set to
 * (`branches_to_be_notified`, v4's). SMTP via SMTP_URL, or `.eml` files under DATA_DIR/mail by default.
 */
import type { ServiceSchema, ServiceSettingSchema } from "moleculer";
import { config } from "../../config";
import { notifiesPush } from "../../lib/integrations/branches-to-be-notified";
import { findIntegration } from "../../lib/integrations/catalogue";
import { createMailer, type Mailer } from "../../lib/integrations/emails-on-push/mailer";
import { buildPushEmail, splitRecipients } from "../../lib/integrations/emails-on-push/push-email";
import type { PushEvent } from "../../lib/push/payload";
import { PushWorkerMixin, type Delivery, type IntegrationSettings, type PushWorkerMethods } from "../../mixins/push-worker.mixin";

const EMAILS_ON_PUSH = findIntegration("emails-on-push")!;

const PushMailer: ServiceSchema<ServiceSettingSchema, PushWorkerMethods, { mailer: Mailer }> = {
	name: "push-mailer",
	mixins: [PushWorkerMixin({ group: "push-mailer", slug: "emails-on-push", parallel: true })],

	created() {
		this.mailer = createMailer({ smtpUrl: config.smtpUrl, dataDir: config.dataDir, timeoutMs: config.outboundTimeoutMs, poolSize: config.smtpPoolSize });
	},

	stopped() {
		this.mailer.close();
	},

	methods: {
		deliveries(event: PushEvent, settings: IntegrationSettings): Delivery[] {
			const p = settings.properties;
			// v4's `branches_to_be_notified` (v3 never sets it: every branch, as GitLab 8.16).
			if (!notifiesPush(EMAILS_ON_PUSH, p, event.push)) return [];
			const mail = buildPushEmail(event.push, {
				gitlabUrl: config.gitlabUrl,
				mailFrom: config.mailFrom,
				disableDiffs: p.disable_diffs === true,
				sendFromCommitterEmail: p.send_from_committer_email === true,
			});
			if (!mail) return [];
			const { valid, invalid } = splitRecipients(p.recipients as string);
			if (invalid.length) this.logger.warn(`Push ${event.id}, project ${event.push.project_id}: skipped ${invalid.length} invalid recipient(s)`);
			return valid.map((to, i) => ({
				target: `mail:${to.toLowerCase()}`,
				run: () => this.mailer.send({ ...mail, to }, `${event.id}-${i}-${to}`),
			}));
		},
	},
};

export default PushMailer;
