import type { RouteTable } from "../types";

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
	// Refusals beyond every route's (gateway/routes/answers.ts); the success is the general one.
	answers: {
		"POST /projects/:id/labels": { 409: "Conflict" },
		"POST /projects/:id/labels/:label_id/subscribe": { 304: "NotModified" },
		"POST /projects/:id/labels/:label_id/unsubscribe": { 304: "NotModified" },
	},
};
