import type { RouteTable } from "../types";

/** Project members (docs/api.md#v4-accounts). */
export const membersRoutes: RouteTable = {
	api: {
		"GET /projects/:id/members": "accounts.listMembersV4",
		"GET /projects/:id/members/:user_id": "accounts.getMemberV4",
		"POST /projects/:id/members": "accounts.addMemberV4",
		"PUT /projects/:id/members/:user_id": "accounts.updateMemberV4",
		"DELETE /projects/:id/members/:user_id": "accounts.removeMemberV4",
	},
	answers: {
		"POST /projects/:id/members": { 409: "Conflict", 422: "Unprocessable" },
		"PUT /projects/:id/members/:user_id": { 422: "Unprocessable" },
	},
};
