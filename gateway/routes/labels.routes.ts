import { arrayOf } from "../../presenters/json-schema";
import { DELETED_LABEL, LABEL, LABEL_WITH_COUNTS } from "../../presenters/label";
import { ok } from "./answers";
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
	answers: {
		"GET /projects/:id/labels": ok(arrayOf(LABEL_WITH_COUNTS)),
		// 200, not GitLab's 201 (docs/api.md#decisions).
		"POST /projects/:id/labels": { ...ok(LABEL), 409: "Conflict" },
		// A new name already taken: 400, as GitLab.
		"PUT /projects/:id/labels": { ...ok(LABEL), 400: "RuleRefusal" },
		"DELETE /projects/:id/labels": ok(DELETED_LABEL),
		"DELETE /projects/:id/labels/:name": ok(DELETED_LABEL),
	},
};
