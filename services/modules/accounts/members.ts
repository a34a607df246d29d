/**
 * Project members: list, show one, add, change, remove (masters; only owners and admins hand out
 * the owner level; the creator's own ownership is not changed here). Every change cleans that
 * member's cached access to the project at once, here and on every gateway. Members are GitLab
 * 8.16's Member entity (presenters/project.ts).
 */
import { config } from "../../../config";
import { AccessLevel, hasLevel, MEMBER_LEVELS, type ProjectAccess } from "../../../lib/accounts/access";
import { ACCESS_CHANGED_EVENT, memberAccessKeys, projectRefs, type AccessChange } from "../../../lib/accounts/auth-cache";
import { forbidden, notFound, recordNotFound, unprocessable } from "../../../lib/api/errors";
import { allOf, MEMBER_LIST_PARAMS, searchesMembers, userSearch } from "../../../lib/accounts/listing";
import { pageWindow, paginated, parsePage } from "../../../lib/api/pagination";
import { UniqueViolation } from "../../../lib/store/collection";
import { bumpGenerations, deleteTwice } from "../../../lib/cache/cleaning";
import { memberKey, type MemberDoc } from "../../../models/project";
import { publicUser, type UserDoc } from "../../../models/user";
import { presentMember } from "../../../presenters/project";
import { now, type AccountsModule, type Ctx } from "./shared";
import { USER_ID_PARAM } from "./users";

/** A member's parameters in both versions (v4 then allows the member levels only: members.v4.ts). */
export type MemberParams = { user_id: number; access_level: number };
/** A member level (GitLab 8.16's answer otherwise: 422 `Access level is not known`). */
function checkKnownLevel(level: number): void {
	if (!(MEMBER_LEVELS as readonly number[]).includes(level)) throw unprocessable("Access level is not known");
}

/** An access level the service knows (another: 422 in v3, 400 in v4). */
export const MEMBER_PARAMS = {
	id: "string",
	user_id: USER_ID_PARAM,
	access_level: { type: "number", integer: true, convert: true, openapi: { enum: MEMBER_LEVELS } },
} as const;

export const Members: AccountsModule = {
	actions: {
		/**
		 * Paged as GitLab 8.16 pages them (20 by default), by user id; `query` keeps the members whose
		 * username or name holds it (admins: e-mail too), as GitLab's `User.search`.
		 */
		listMembers: {
			access: AccessLevel.NONE,
			hedge: true,
			params: { id: "string", ...MEMBER_LIST_PARAMS },
			async handler(ctx: Ctx<{ query?: string; page?: number; per_page?: number }>) {
				return this.membersPage(ctx, (m, user) => presentMember(user, m.access_level, config.gitlabUrl));
			},
		},

		/** One member: 404 `Not found` (GitLab's record look-up) when the user is not one. */
		getMember: {
			access: AccessLevel.NONE,
			hedge: true,
			params: { id: "string", user_id: USER_ID_PARAM },
			async handler(ctx: Ctx<{ user_id: number }>) {
				const { member, user } = await this.shownMember(ctx, ctx.params.user_id);
				return presentMember(user, member.access_level, config.gitlabUrl);
			},
		},

		/** GitLab 8.16: a user who is a member already is answered 201 as the member is, unchanged. */
		addMember: {
			access: AccessLevel.MASTER,
			params: MEMBER_PARAMS,
			async handler(ctx: Ctx<MemberParams>) {
				const access = this.access(ctx);
				const user = await this.userToAdd(ctx.params.user_id);
				// Before the member is looked up: a level no one has is refused even for a member (docs/api.md#decisions).
				checkKnownLevel(ctx.params.access_level);
				ctx.meta.$statusCode = 201;
				const key = memberKey(access.project.id, user.id);
				const existing = await this.db.members.findOne({ member_key: key });
				if (existing) return presentMember(user, existing.access_level, config.gitlabUrl);
				try {
					await this.insertMember(ctx, access, user.id, ctx.params.access_level);
				} catch (err) {
					if (!(err instanceof UniqueViolation)) throw err;
					// Added by another request a moment ago: answered as an existing member.
					const added = await this.db.members.findOne({ member_key: key });
					if (!added) throw err;
					return presentMember(user, added.access_level, config.gitlabUrl);
				}
				return presentMember(user, ctx.params.access_level, config.gitlabUrl);
			},
		},

		updateMember: {
			access: AccessLevel.MASTER,
			params: MEMBER_PARAMS,
			async handler(ctx: Ctx<MemberParams>) {
				const { member, user } = await this.changeMember(ctx, ctx.params.user_id, ctx.params.access_level);
				return presentMember(user, member.access_level, config.gitlabUrl);
			},
		},

		/** GitLab 8.16: removing a user who is not a member answers 200 `Access revoked` too. */
		removeMember: {
			access: AccessLevel.MASTER,
			params: { id: "string", user_id: USER_ID_PARAM },
			async handler(ctx: Ctx<{ user_id: number }>) {
				const access = this.access(ctx);
				const userId = ctx.params.user_id;
				const revoked = { message: "Access revoked", id: userId };
				const member = await this.db.members.findOne({ member_key: memberKey(access.project.id, userId) });
				if (!member) return revoked;
				if (userId === access.project.creator_id) throw forbidden();
				// Removed by another request in between: that one answered with the member.
				if (!(await this.db.members.remove({ id: member.id }))) return revoked;
				await this.memberChanged(ctx, access, member.user_id);
				const user = await this.db.users.findOne({ id: member.user_id });
				return user ? presentMember(publicUser(user), member.access_level, config.gitlabUrl) : revoked;
			},
		},
	},

	methods: {
		/** A member of the project and their user, for either version's entity: 404 `Not found` (GitLab's record look-up) when the user is not one. */
		async shownMember(ctx: Ctx, userId: number) {
			const member = await this.db.members.findOne({ member_key: memberKey(this.access(ctx).project.id, userId) });
			const user = member ? await this.db.users.findOne({ id: member.user_id }) : null;
			if (!member || !user) throw recordNotFound();
			return { member, user: publicUser(user) };
		},

		/** The user a member is to be made of: 404 `User Not Found` when there is none. */
		async userToAdd(userId: number) {
			const user = await this.db.users.findOne({ id: userId });
			if (!user) throw notFound("User");
			return publicUser(user);
		},

		/**
		 * Makes the user a member at `level` (a level the caller may grant) and cleans their cached
		 * access; a membership that a racing request made first throws UniqueViolation, which each
		 * version answers its own way (v3: the member as they are, v4: 409).
		 */
		async insertMember(ctx: Ctx, access: ProjectAccess, userId: number, level: number) {
			this.checkGrant(access, level);
			const member = await this.db.members.insert(this.memberDoc(access.project.id, userId, level));
			await this.memberChanged(ctx, access, userId);
			return member;
		},

		/**
		 * Both versions' change of a member's level (the creator's own ownership is not changed
		 * here): the member with its new level, and their user.
		 */
		async changeMember(ctx: Ctx, userId: number, level: number) {
			const access = this.access(ctx);
			const member = await this.db.members.findOne({ member_key: memberKey(access.project.id, userId) });
			if (!member) throw recordNotFound();
			this.checkGrant(access, level);
			if (member.user_id === access.project.creator_id) throw forbidden();
			// A removal that came between the look-up and this write: answered as if it came after it.
			if (!(await this.db.members.update({ id: member.id }, { access_level: level, updated_at: now() }))) throw recordNotFound();
			await this.memberChanged(ctx, access, member.user_id);
			const user = await this.db.users.findOne({ id: member.user_id });
			if (!user) throw notFound("User");
			return { member: { ...member, access_level: level }, user: publicUser(user) };
		},

		/** A page of the project's members by user id (`query`: those whose username or name holds it), in an entity of either version. */
		async membersPage<T>(ctx: Ctx<{ query?: string; page?: number; per_page?: number }>, present: (m: MemberDoc, user: UserDoc) => T) {
			const access = this.access(ctx);
			const query: Record<string, unknown> = { project_id: access.project.id };
			if (searchesMembers(ctx.params.query)) {
				// The project's members, then those of them the search matches, in the store.
				const memberIds = (await this.db.members.find(query)).map(m => m.user_id);
				const matching = await this.db.users.find(allOf([{ id: { $in: memberIds } }, userSearch(ctx.params.query, access.admin)]));
				query.user_id = { $in: matching.map(u => u.id) };
			}
			const page = parsePage(ctx.params);
			const [members, total] = await this.db.members.findPage(query, pageWindow(page), { sort: "user_id" });
			const users = new Map((await this.db.users.find({ id: { $in: members.map(m => m.user_id) } })).map(u => [u.id, u]));
			const rows = members.filter(m => users.has(m.user_id)).map(m => present(m, publicUser(users.get(m.user_id)!)));
			return paginated(rows, total, page);
		},

		memberDoc(projectId: number, userId: number, level: number): Omit<MemberDoc, "id"> {
			return { project_id: projectId, user_id: userId, access_level: level, member_key: memberKey(projectId, userId), created_at: now() };
		},

		/**
		 * The level asked for must be a member level (GitLab 8.16's answer otherwise: 422 `Access level
		 * is not known`); only owners and admins may hand out the owner level.
		 */
		checkGrant(access: ProjectAccess, level: number): void {
			checkKnownLevel(level);
			if (level >= AccessLevel.OWNER && !hasLevel(access, AccessLevel.OWNER)) throw forbidden();
		},

		/**
		 * Cleans the member's cached access to the project here, and tells the gateways and replicas
		 * to: the project's write generations first (a look-up under way cannot store the old level
		 * after this), then the entries.
		 */
		async memberChanged(ctx: Ctx, access: ProjectAccess, userId: number) {
			const cacher = this.broker.cacher;
			if (!cacher) return;
			const projects = projectRefs(access.project);
			await bumpGenerations(this.broker, projects, "access look-ups");
			// Exact keys: deleted (one DEL), never cleaned (a SCAN of all of Redis per key).
			const keys = memberAccessKeys(cacher, access.project, userId);
			await deleteTwice(this.broker, keys, "access look-ups");
			void ctx.broadcast(ACCESS_CHANGED_EVENT, { keys, projects } satisfies AccessChange);
		},
	},
};
