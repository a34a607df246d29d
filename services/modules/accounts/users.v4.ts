/**
 * API v4's users (docs/api.md#v4-accounts): `GET /user`, `GET /users`, `GET /users/:id`,
 * `POST /users`, on the same records and rules as v3's (services/modules/accounts/users.ts), in
 * v4's entities: admins see UserWithAdmin, others UserPublic (themselves), User or UserBasic.
 */
import { config } from "../../../config";
import { USER_LIST_PARAMS, type UserListParams } from "../../../lib/accounts/listing";
import { unauthorized } from "../../../lib/api/errors";
import { publicUser } from "../../../models/user";
import { presentUserBasicV4, presentUserPublicV4, presentUserV4, presentUserWithAdminV4 } from "../../../presenters/user.v4";
import { callerOf, type AccountsModule, type Ctx, type NewUser } from "./shared";
import { USER_ID_PARAM, userParams } from "./users";

export const UsersV4: AccountsModule = {
	actions: {
		/** The caller: UserWithAdmin for an admin, UserPublic for anyone else (no private token in v4). */
		meV4: {
			hedge: true,
			async handler(ctx: Ctx) {
				const user = await this.db.users.findOne({ id: callerOf(ctx).id });
				if (!user) throw unauthorized();
				return (user.is_admin ? presentUserWithAdminV4 : presentUserPublicV4)(publicUser(user), config.gitlabUrl);
			},
		},

		/** Admins: 201 with UserWithAdmin. */
		createUserV4: {
			params: userParams,
			async handler(ctx: Ctx<NewUser>) {
				return presentUserWithAdminV4(await this.createUserAsAdmin(ctx), config.gitlabUrl);
			},
		},

		/** Admins get UserWithAdmin, others User. */
		getUserV4: {
			hedge: true,
			params: { user_id: USER_ID_PARAM },
			async handler(ctx: Ctx<{ user_id: number }>) {
				return (callerOf(ctx).is_admin ? presentUserWithAdminV4 : presentUserV4)(await this.shownUser(ctx.params.user_id), config.gitlabUrl);
			},
		},

		/** As v3's list (lib/accounts/listing.ts `usersQuery`): admins see UserWithAdmin, others UserBasic. */
		listUsersV4: {
			hedge: true,
			params: USER_LIST_PARAMS,
			async handler(ctx: Ctx<UserListParams>) {
				return this.usersPage(ctx, { admin: presentUserWithAdminV4, others: presentUserBasicV4 });
			},
		},
	},
};
