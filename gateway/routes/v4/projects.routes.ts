import { arrayOf, either } from "../../../presenters/json-schema";
import { BASIC_PROJECT_V4, PROJECT_V4, PROJECT_WITH_ACCESS_V4 } from "../../../presenters/project.v4";
import { created, ok } from "../answers";
import type { RouteTable } from "../types";

/** Projects (docs/api.md#v4-accounts): create, list (every project the caller sees; `simple=true`: the basic ones), read one. */
export const projectsRoutes: RouteTable = {
	api: {
		"POST /projects": "accounts.createProjectV4",
		"GET /projects": "accounts.listProjectsV4",
		"GET /projects/:id": "accounts.getProjectV4",
	},
	answers: {
		// A name or path already taken: 400, as GitLab.
		"POST /projects": { ...created(PROJECT_V4), 400: "RuleRefusal" },
		"GET /projects": ok(either(arrayOf(PROJECT_WITH_ACCESS_V4), arrayOf(BASIC_PROJECT_V4))),
		// Without a token (a public project): no `permissions`.
		"GET /projects/:id": ok(either(PROJECT_WITH_ACCESS_V4, PROJECT_V4)),
	},
};
