/**
 * task-tracker-comments (GitLab's Asana service, generation B; docs/integrations.md#task-tracker-comments): every task a
 * commit message mentions gets the commit as a comment, and a task after a word starting with
 * `fix` or `clos` is completed, on the branches in `restrict_to_branch` (blank: all). Talks to
 * the tracker API at TASK_TRACKER_API_URL with the integration's `api_key`. A task that does
 * not exist (404) is logged and skipped, as GitLab did; a tracker that is down is retried.
 */
import type { ServiceSchema, ServiceSettingSchema } from "moleculer";
import { config } from "../../config";
import { checkStatus, closeAgents, requestJson, type HttpResponse } from "../../lib/outbound/http";
import type { PushEvent } from "../../lib/push/payload";
import { planComments } from "../../lib/integrations/task-tracker-comments/scanner";
import { PushWorkerMixin, type Delivery, type IntegrationSettings, type PushWorkerMethods } from "../../mixins/push-worker.mixin";

interface Methods extends PushWorkerMethods {
	tracker(method: string, path: string, apiKey: string, json?: unknown): Promise<HttpResponse>;
}

const TaskTrackerCommenter: ServiceSchema<ServiceSettingSchema, Methods> = {
	name: "task-tracker-commenter",
	mixins: [PushWorkerMixin({ group: "task-tracker-commenter", slug: "task-tracker-comments" })],

	stopped() {
		closeAgents();
	},

	methods: {
		/** One tracker API call with the integration's token. */
		async tracker(method: string, path: string, apiKey: string, json?: unknown) {
			const res = await requestJson({
				method,
				url: `${config.taskTrackerApiUrl}${path}`,
				headers: { Authorization: `Bearer ${apiKey}` },
				json,
				timeoutMs: config.outboundTimeoutMs,
				allowLocal: config.allowLocalRequests,
			});
			return checkStatus(res, `${method} ${path}`);
		},

		deliveries(event: PushEvent, settings: IntegrationSettings): Delivery[] {
			const apiKey = typeof settings.properties.api_key === "string" ? settings.properties.api_key : "";
			const plan = planComments(event.push, settings.properties.restrict_to_branch as string | undefined);
			const deliveries: Delivery[] = [];
			const completing = new Set<string>();
			for (const item of plan) {
				const task = encodeURIComponent(item.taskId);
				deliveries.push({
					target: `comment:${item.commitId}:${item.taskId}`,
					run: async () => {
						await this.tracker("GET", `/tasks/${task}`, apiKey);
						await this.tracker("POST", `/tasks/${task}/stories`, apiKey, { data: { text: item.text } });
					},
				});
				if (item.complete && !completing.has(item.taskId)) {
					completing.add(item.taskId);
					deliveries.push({
						target: `complete:${item.taskId}`,
						run: async () => {
							await this.tracker("PUT", `/tasks/${task}`, apiKey, { data: { completed: true } });
						},
					});
				}
			}
			// Completions after every comment, as each commit's comment lands before its task closes.
			return [...deliveries.filter(d => d.target.startsWith("comment:")), ...deliveries.filter(d => d.target.startsWith("complete:"))];
		},
	},
};

export default TaskTrackerCommenter;
