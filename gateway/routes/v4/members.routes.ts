import { arrayOf } from "../../../presenters/json-schema";
import { MEMBER_V4 } from "../../../presenters/project.v4";
import { created, noContent, ok } from "../answers";
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
		"GET /projects/:id/members": ok(arrayOf(MEMBER_V4)),
		"GET /projects/:id/members/:user_id": ok(MEMBER_V4),
		"POST /projects/:id/members": { ...created(MEMBER_V4), 409: "Conflict", 422: "Unprocessable" },
		"PUT /projects/:id/members/:user_id": { ...ok(MEMBER_V4), 422: "Unprocessable" },
		"DELETE /projects/:id/members/:user_id": noContent,
	},
};
