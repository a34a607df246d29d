import { arrayOf, either } from "../../../presenters/json-schema";
import { LABEL_V4, LABEL_WITH_COUNTS_V4 } from "../../../presenters/label.v4";
import { created, noContent, ok } from "../answers";
import type { RouteTable } from "../types";

/** Subscribing when subscribed, or unsubscribing when not, changes nothing: 304. */
const SUBSCRIPTION = { ...created(LABEL_V4), 304: "NotModified" };

/** Project labels (docs/api.md#v4-labels): by id or title; the deprecated name-addressed PUT and DELETE on /labels too. */
export const labelsRoutes: RouteTable = {
	api: {
		"GET /projects/:id/labels": "labels.listV4",
		"POST /projects/:id/labels": "labels.createV4",
		"PUT /projects/:id/labels": "labels.updateV4",
		"DELETE /projects/:id/labels": "labels.removeV4",
		"GET /projects/:id/labels/:label_id": "labels.getV4",
		"PUT /projects/:id/labels/:label_id": "labels.updateV4",
		"DELETE /projects/:id/labels/:label_id": "labels.removeV4",
		"POST /projects/:id/labels/:label_id/subscribe": "labels.subscribe",
		"POST /projects/:id/labels/:label_id/unsubscribe": "labels.unsubscribe",
	},
	answers: {
		// The counts only with `with_counts=true`.
		"GET /projects/:id/labels": ok(either(arrayOf(LABEL_V4), arrayOf(LABEL_WITH_COUNTS_V4))),
		"POST /projects/:id/labels": { ...created(LABEL_V4), 409: "Conflict" },
		// A new name already taken: 400, as GitLab.
		"PUT /projects/:id/labels": { ...ok(LABEL_V4), 400: "RuleRefusal" },
		"DELETE /projects/:id/labels": noContent,
		"GET /projects/:id/labels/:label_id": ok(LABEL_V4),
		"PUT /projects/:id/labels/:label_id": { ...ok(LABEL_V4), 400: "RuleRefusal" },
		"DELETE /projects/:id/labels/:label_id": noContent,
		"POST /projects/:id/labels/:label_id/subscribe": SUBSCRIPTION,
		"POST /projects/:id/labels/:label_id/unsubscribe": SUBSCRIPTION,
	},
};
