import { arrayOf, integer, object, oneValue } from "../../presenters/json-schema";
import { BASIC_PROJECT, MEMBER, PROJECT, PROJECT_WITH_ACCESS } from "../../presenters/project";
import { CURRENT_USER, USER, USER_BASIC, USER_PUBLIC } from "../../presenters/user";
import { created, ok } from "./answers";
import type { RouteTable } from "./types";

/** A projects list: with `permissions`, or `simple=true`'s basic projects. */
const PROJECTS = arrayOf({ anyOf: [PROJECT_WITH_ACCESS, BASIC_PROJECT] });
/** DELETE of a user who is not a member (GitLab 8.16's answer). */
const ACCESS_REVOKED = object({ message: oneValue("Access revoked"), id: integer }, "AccessRevoked");

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
	answers: {
		// Passwords are hashed a few at a time: a flood beyond the queue is a 429 whatever the rate limit.
		"POST /session": { ...created(CURRENT_USER), 429: "RateLimited" },
		"GET /user": ok(CURRENT_USER),
		"POST /users": { ...created(USER_PUBLIC), 403: "Forbidden", 409: "Conflict", 429: "RateLimited" },
		// Admins see the full user, others the basic one.
		"GET /users": { ...ok(arrayOf({ anyOf: [USER_PUBLIC, USER_BASIC] })), 403: "Forbidden" },
		"GET /users/:user_id": ok({ anyOf: [USER_PUBLIC, USER] }),
		// A name or path already taken: 400, as GitLab.
		"POST /projects": { ...created(PROJECT), 400: "RuleRefusal" },
		"GET /projects": ok(PROJECTS),
		"GET /projects/owned": ok(PROJECTS),
		"GET /projects/all": { ...ok(PROJECTS), 403: "Forbidden" },
		"GET /projects/:id": ok(PROJECT_WITH_ACCESS),
		"GET /projects/:id/members": ok(arrayOf(MEMBER)),
		"GET /projects/:id/members/:user_id": ok(MEMBER),
		"POST /projects/:id/members": { ...created(MEMBER), 422: "Unprocessable" },
		"PUT /projects/:id/members/:user_id": { ...ok(MEMBER), 422: "Unprocessable" },
		"DELETE /projects/:id/members/:user_id": ok({ anyOf: [MEMBER, ACCESS_REVOKED] }),
	},
};
