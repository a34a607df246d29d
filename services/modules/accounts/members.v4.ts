/**
 * API v4's project members (docs/api.md#v4-accounts): the same memberships and rules as v3's
 * (services/modules/accounts/members.ts), as v4 answers them: a level outside 10–50 is a 400, a
 * member added twice a 409, a user who is not a member a 404 to read, change or remove, and a
 * removal 204 (If-Unmodified-Since).
 */
import { config } from "../../../config";
import { AccessLevel, MEMBER_LEVELS } from "../../../lib/accounts/access";
import { MEMBER_LIST_PARAMS } from "../../../lib/accounts/listing";
import { checkUnmodifiedSince } from "../../../lib/api/conditional";
import { conflict, forbidden, paramError, recordNotFound } from "../../../lib/api/errors";
import { UniqueViolation } from "../../../lib/store/collection";
import { memberKey, type MemberDoc } from "../../../models/project";
import type { UserDoc } from "../../../models/user";
import { presentMemberV4 } from "../../../presenters/project.v4";
import { MEMBER_PARAMS, type MemberParams } from "./members";
import type { AccountsModule, Ctx } from "./shared";
import { USER_ID_PARAM } from "./users";

const present = (m: Pick<MemberDoc, "access_level" | "created_at">, user: UserDoc) => presentMemberV4(user, m.access_level, m.created_at, config.gitlabUrl);

/** Grape's `values: [10, 20, 30, 40, 50]`. */
function memberLevel(level: number): number {
	if (!(MEMBER_LEVELS as readonly number[]).includes(level)) throw paramError("access_level does not have a valid value");
	return level;
}

export const MembersV4: AccountsModule = {
	actions: {
		listMembersV4: {
			access: AccessLevel.NONE,
			hedge: true,
			params: { id: "string", ...MEMBER_LIST_PARAMS },
			async handler(ctx: Ctx<{ query?: string; page?: number; per_page?: number }>) {
				return this.membersPage(ctx, present);
			},
		},

		getMemberV4: {
			access: AccessLevel.NONE,
			hedge: true,
			params: { id: "string", user_id: USER_ID_PARAM },
			async handler(ctx: Ctx<{ user_id: number }>) {
				const { member, user } = await this.shownMember(ctx, ctx.params.user_id);
				return present(member, user);
			},
		},

		/** 201 with the member; a member already: `409 Member already exists`. */
		addMemberV4: {
			access: AccessLevel.MASTER,
			params: MEMBER_PARAMS,
			async handler(ctx: Ctx<MemberParams>) {
				const access = this.access(ctx);
				const level = memberLevel(ctx.params.access_level);
				const user = await this.userToAdd(ctx.params.user_id);
				if (await this.db.members.findOne({ member_key: memberKey(access.project.id, user.id) })) throw conflict("Member already exists");
				let member: MemberDoc;
				try {
					member = await this.insertMember(ctx, access, user.id, level);
				} catch (err) {
					if (err instanceof UniqueViolation) throw conflict("Member already exists");
					throw err;
				}
				ctx.meta.$statusCode = 201;
				return present(member, user);
			},
		},

		updateMemberV4: {
			access: AccessLevel.MASTER,
			params: MEMBER_PARAMS,
			async handler(ctx: Ctx<MemberParams>) {
				const { member, user } = await this.changeMember(ctx, ctx.params.user_id, memberLevel(ctx.params.access_level));
				return present(member, user);
			},
		},

		/** 204; not a member: 404. */
		removeMemberV4: {
			access: AccessLevel.MASTER,
			params: { id: "string", user_id: USER_ID_PARAM },
			async handler(ctx: Ctx<{ user_id: number }>) {
				const access = this.access(ctx);
				const member = await this.db.members.findOne({ member_key: memberKey(access.project.id, ctx.params.user_id) });
				if (!member) throw recordNotFound();
				if (member.user_id === access.project.creator_id) throw forbidden();
				checkUnmodifiedSince(ctx.meta, member.updated_at ?? member.created_at);
				if (!(await this.db.members.remove({ id: member.id }))) throw recordNotFound();
				await this.memberChanged(ctx, access, member.user_id);
				ctx.meta.$statusCode = 204;
				return null;
			},
		},
	},
};
