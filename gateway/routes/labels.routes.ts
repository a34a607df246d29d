import type { RouteTable } from "./types";

export const labelsRoutes: RouteTable = {
	api: {
		"GET /projects/:id/labels": "labels.list",
		"POST /projects/:id/labels": "labels.create",
		"PUT /projects/:id/labels": "labels.update",
		"DELETE /projects/:id/labels": "labels.remove",
		// Some clients (ruby-gitlab) send the v4 form.
		"DELETE /projects/:id/labels/:name": "labels.remove",
	},
};
