import type { RouteTable } from "./types";

export const accountsRoutes: RouteTable = {
	api: {
		"POST /session": "accounts.login",
		"GET /user": "accounts.me",
		"POST /users": "accounts.createUser",
		"GET /users": "accounts.listUsers",
		"GET /users/:user_id": "accounts.getUser",
		"POST /projects": "accounts.createProject",
		"GET /projects": "accounts.listProjects",
		"GET /projects/owned": "accounts.listOwnedProjects",
		"GET /projects/all": "accounts.listAllProjects",
		"GET /projects/:id": "accounts.getProject",
		"GET /projects/:id/members": "accounts.listMembers",
		"GET /projects/:id/members/:user_id": "accounts.getMember",
		"POST /projects/:id/members": "accounts.addMember",
		"PUT /projects/:id/members/:user_id": "accounts.updateMember",
		"DELETE /projects/:id/members/:user_id": "accounts.removeMember",
	},
};
