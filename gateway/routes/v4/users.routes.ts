import type { RouteTable } from "../types";

/** The users a client needs (docs/api.md#v4-accounts); no `/session` in v4. */
export const usersRoutes: RouteTable = {
	api: {
		"GET /user": "accounts.meV4",
		"GET /users": "accounts.listUsersV4",
		"POST /users": "accounts.createUserV4",
		"GET /users/:user_id": "accounts.getUserV4",
	},
	answers: {
		"POST /users": { 403: "Forbidden", 409: "Conflict", 429: "RateLimited" },
	},
};
