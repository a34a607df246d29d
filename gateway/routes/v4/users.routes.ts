import { arrayOf, either } from "../../../presenters/json-schema";
import { USER_BASIC_V4, USER_PUBLIC_V4, USER_V4, USER_WITH_ADMIN_V4 } from "../../../presenters/user.v4";
import { created, ok } from "../answers";
import type { RouteTable } from "../types";

/** The users a client needs (docs/api.md#v4-accounts); no `/session` in v4. Admins see more of each user. */
export const usersRoutes: RouteTable = {
	api: {
		"GET /user": "accounts.meV4",
		"GET /users": "accounts.listUsersV4",
		"POST /users": "accounts.createUserV4",
		"GET /users/:user_id": "accounts.getUserV4",
	},
	answers: {
		"GET /user": ok(either(USER_WITH_ADMIN_V4, USER_PUBLIC_V4)),
		"GET /users": ok(either(arrayOf(USER_WITH_ADMIN_V4), arrayOf(USER_BASIC_V4))),
		"POST /users": { ...created(USER_WITH_ADMIN_V4), 403: "Forbidden", 409: "Conflict", 429: "RateLimited" },
		"GET /users/:user_id": ok(either(USER_WITH_ADMIN_V4, USER_V4)),
	},
};
