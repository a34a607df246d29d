import type { RouteTable } from "../types";

/** Projects (docs/api.md#v4-accounts): create, list (every project the caller sees), read one. */
export const projectsRoutes: RouteTable = {
	api: {
		"POST /projects": "accounts.createProjectV4",
		"GET /projects": "accounts.listProjectsV4",
		"GET /projects/:id": "accounts.getProjectV4",
	},
};
