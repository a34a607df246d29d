/**
 * The two look-ups the gateway makes on every request, token → caller and project → the caller's
 * level (both cached; lib/accounts/auth-cache.ts), and the internal reads other services make.
 */
import { canReadProject, effectiveLevel, type Caller, type ProjectAccess } from "../../../lib/accounts/access";
import { MAX_PROJECT_REF, MAX_SUDO_REF, PROJECT_ACCESS, projectRefKey, RESOLVE_TOKEN } from "../../../lib/accounts/auth-cache";
import { notFound, unauthorized } from "../../../lib/api/errors";
import { memberKey, type ProjectDoc } from "../../../models/project";
import { publicUser, type UserDoc } from "../../../models/user";
import type { AccountsModule, Ctx } from "./shared";

export const Lookups: AccountsModule = {
	actions: {
		/** Private token (as its SHA-256) → the caller. Unknown or blocked → 401. */
		resolveToken: {
			visibility: "public",
			params: { tokenHash: { type: "string", length: 64 } },
			cache: RESOLVE_TOKEN.cache,
			async handler(ctx: Ctx<{ tokenHash: string }>): Promise<Caller> {
				const user = await this.db.users.findOne({ token_hash: ctx.params.tokenHash });
				if (!user || user.state !== "active") throw unauthorized();
				return { id: user.id, username: user.username, is_admin: !!user.is_admin };
			},
		},

		/**
		 * Sudo (an admin acting as another user): a user id or username → that user as the caller, in
		 * whatever state (GitLab checks only the admin); 404 in GitLab's words when there is none.
		 */
		sudoCaller: {
			hedge: true,
			visibility: "public",
			params: { ref: { type: "string", max: MAX_SUDO_REF } },
			async handler(ctx: Ctx<{ ref: string }>): Promise<Caller> {
				const ref = ctx.params.ref;
				const user = await this.db.users.findOne(/^\d+$/.test(ref) ? { id: Number(ref) } : { username_key: ref.toLowerCase() });
				if (!user) throw notFound(`No user id or username for: ${ref}`);
				return { id: user.id, username: user.username, is_admin: !!user.is_admin };
			},
		},

		/** `:id` (number or namespace/path) → the project and the caller's level; 404 when unreadable. */
		projectAccess: {
			visibility: "public",
			params: { project: { type: "string", max: MAX_PROJECT_REF }, userId: { type: "number", integer: true }, admin: "boolean" },
			cache: PROJECT_ACCESS.cache,
			async handler(ctx: Ctx<{ project: string; userId: number; admin: boolean }>): Promise<ProjectAccess> {
				const project = await this.findProject(ctx.params.project);
				if (!project) throw notFound("Project");
				const caller = ctx.params.userId ? { id: ctx.params.userId, username: "", is_admin: ctx.params.admin } : null;
				const member = caller ? await this.db.members.findOne({ member_key: memberKey(project.id, caller.id) }) : null;
				const memberLevel = member?.access_level ?? 0;
				if (!canReadProject(project, caller, memberLevel)) throw notFound("Project");
				return {
					project: {
						id: project.id,
						path_with_namespace: project.path_with_namespace,
						visibility_level: project.visibility_level,
						public_builds: !!project.public_builds,
						creator_id: project.creator_id,
					},
					level: effectiveLevel(caller, memberLevel),
					admin: !!caller?.is_admin,
				};
			},
		},

		/** Internal: users by id, without credentials, for presenters in other services. */
		usersByIds: {
			hedge: true,
			visibility: "public",
			params: { ids: { type: "array", items: { type: "number", integer: true }, max: 1000 } },
			async handler(ctx: Ctx<{ ids: number[] }>): Promise<UserDoc[]> {
				const ids = [...new Set(ctx.params.ids)];
				if (!ids.length) return [];
				return (await this.db.users.find({ id: { $in: ids } })).map(publicUser);
			},
		},

		/** Internal: a project by id, or null. */
		projectById: {
			hedge: true,
			visibility: "public",
			params: { id: { type: "number", integer: true } },
			async handler(ctx: Ctx<{ id: number }>): Promise<ProjectDoc | null> {
				return this.db.projects.findOne({ id: ctx.params.id });
			},
		},
	},

	methods: {
		/** By id or by `namespace/path`, spelled as the access look-up normalises it. */
		async findProject(ref: string): Promise<ProjectDoc | null> {
			const key = projectRefKey(ref);
			return this.db.projects.findOne(/^\d+$/.test(key) ? { id: Number(key) } : { path_key: key });
		},
	},
};
