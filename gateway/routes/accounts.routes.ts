import type { RouteTable } from "./types";

export const accountsRoutes: RouteTable = {
	api: {
		"POST /session": "accounts.login",
		"GET /user": "accounts.me",
		"POST /users": "accounts.createUser",
		"GET /users/:user_id": "accounts.getUser",
		"POST /projects": "accounts.createProject",
		"GET /projects/:id": "accounts.getProject",
		"GET /projects/:id/members": "accounts.listMembers",
		"POST /projects/:id/members": "accounts.addMember",
		"PUT /projects/:id/members/:user_id": "accounts.updateMember",
		"DELETE /projects/:id/members/:user_id": "accounts.removeMember",
	},
};
