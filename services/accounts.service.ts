/**
 * Users, private tokens, projects and memberships (the GitLab v3 subset the rest needs), the
 * root bootstrap, and the two look-ups the gateway makes on every request: token → caller and
 * project → caller's access level. Both are cached; a membership change cleans that member's
 * entries for that project at once (new users and projects had no entries: failures are not cached).
 */
import type { Context, ServiceSchema } from "moleculer";
import { config } from "../config";
import { AccessLevel, canReadProject, effectiveLevel, hasLevel, MEMBER_LEVELS, type Caller, type ProjectAccess } from "../lib/access";
import { ACCESS_CHANGED_EVENT, changedPatterns, memberAccessKeys, PROJECT_ACCESS, projectRefKey, RESOLVE_TOKEN, type AccessChange } from "../lib/auth-cache";
import type { ApiMeta } from "../lib/context";
import { decryptSecret, encryptSecret, generateToken, HashingBusy, hashToken, PasswordHasher, resolveSecretsKey } from "../lib/crypto";
import { conflict, forbidden, invalidValue, notFound, tooManyRequests, unauthorized, validation } from "../lib/errors";
import { LoginThrottle } from "../lib/login-throttle";
import { limiterRedis } from "../lib/rate-limiter";
import { cleanTwice } from "../mixins/cache-cleaner.mixin";
import { DbMixin, UniqueViolation } from "../mixins/db.mixin";
import { ProjectAccessMixin } from "../mixins/project-access.mixin";
import { presentCurrentUser, presentUser, type UserDoc } from "../presenters/user";
import { presentMember, presentProject, type ProjectDoc } from "../presenters/project";
import { validateNewProject, validateNewUser } from "../lib/account-rules";

type Ctx<P = Record<string, any>> = Context<P, ApiMeta>;

interface StoredUser extends UserDoc {
	password_hash: string;
	token_hash: string;
	token_enc: string;
	username_key: string;
	email_key: string;
}

interface MemberDoc {
	id: number;
	project_id: number;
	user_id: number;
	access_level: number;
	member_key: string;
	created_at: string;
}

const now = () => new Date().toISOString();

const userIdParam = { type: "number", integer: true, positive: true, convert: true } as const;
const memberParams = { id: "string", user_id: userIdParam, access_level: { type: "number", integer: true, convert: true } } as const;
type MemberParams = { user_id: number; access_level: number };
const gitlabUrl = config.gitlabUrl;

/** The parts of a stored user that may leave this service. */
function publicUser(u: StoredUser): UserDoc {
	const { password_hash, token_hash, token_enc, username_key, email_key, ...rest } = u;
	return rest;
}

const AccountsService: ServiceSchema = {
	name: "accounts",
	mixins: [
		DbMixin({
			users: {
				indexes: [
					{ fields: { username_key: 1 }, unique: true },
					{ fields: { email_key: 1 }, unique: true },
					{ fields: { token_hash: 1 }, unique: true },
				],
			},
			projects: {
				indexes: [
					{ fields: { path_key: 1 }, unique: true },
					{ fields: { name_key: 1 }, unique: true },
				],
			},
			members: { indexes: [{ fields: { member_key: 1 }, unique: true }, { fields: { project_id: 1 } }] },
		}),
		ProjectAccessMixin(),
	],

	settings: {},

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

		/** `:id` (number or namespace/path) → the project and the caller's level; 404 when unreadable. */
		projectAccess: {
			visibility: "public",
			params: { project: { type: "string", max: 512 }, userId: { type: "number", integer: true }, admin: "boolean" },
			cache: PROJECT_ACCESS.cache,
			async handler(ctx: Ctx<{ project: string; userId: number; admin: boolean }>): Promise<ProjectAccess> {
				const project = await this.findProject(ctx.params.project);
				if (!project) throw notFound("Project");
				const caller = ctx.params.userId ? { id: ctx.params.userId, username: "", is_admin: ctx.params.admin } : null;
				const member = caller ? await this.db.members.findOne({ member_key: `${project.id}|${caller.id}` }) : null;
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
				const users: StoredUser[] = await this.db.users.find({ id: { $in: ids } });
				return users.map(publicUser);
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

		/**
		 * `POST /session`. Unknown logins cost the same scrypt work as wrong passwords, and failed
		 * logins are throttled per client address and per account (lib/login-throttle.ts).
		 */
		login: {
			auth: "none",
			params: {
				login: { type: "string", optional: true, max: 255 },
				email: { type: "string", optional: true, max: 255 },
				password: { type: "string", max: 1024 },
			},
			async handler(ctx: Ctx<{ login?: string; email?: string; password: string }>) {
				const login = (ctx.params.login ?? ctx.params.email ?? "").trim().toLowerCase();
				const address = ctx.meta.clientAddress ?? "unknown";
				const throttle: LoginThrottle = this.loginThrottle;
				await throttle.check(address, login);
				const user: StoredUser | null = login ? await this.db.users.findOne(login.includes("@") ? { email_key: login } : { username_key: login }) : null;
				const matches = await this.checkPassword(ctx.params.password, user?.password_hash ?? null);
				if (!user || !matches || user.state !== "active") {
					await throttle.failed(address, login);
					throw unauthorized();
				}
				await throttle.succeeded(address, login);
				ctx.meta.$statusCode = 201;
				return presentCurrentUser(publicUser(user), gitlabUrl, this.revealToken(user));
			},
		},

		me: {
			// A read: sent again if the first request is lost in transit (middlewares/hedged-calls.middleware.ts).
			hedge: true,
			async handler(ctx: Ctx) {
				const user: StoredUser | null = await this.db.users.findOne({ id: this.caller(ctx).id });
				if (!user) throw unauthorized();
				return presentCurrentUser(publicUser(user), gitlabUrl, this.revealToken(user));
			},
		},

		createUser: {
			params: {
				email: { type: "string", max: 255 },
				password: { type: "string", max: 1024 },
				username: { type: "string", max: 255 },
				name: { type: "string", max: 255 },
				admin: { type: "boolean", optional: true, convert: true },
			},
			async handler(ctx: Ctx<{ email: string; password: string; username: string; name: string; admin?: boolean }>) {
				if (!this.caller(ctx).is_admin) throw forbidden();
				const errors = validateNewUser(ctx.params);
				if (errors) throw validation(errors);
				const { user } = await this.insertUser(ctx.params);
				ctx.meta.$statusCode = 201;
				return presentUser(publicUser(user), gitlabUrl);
			},
		},

		getUser: {
			hedge: true,
			params: { user_id: userIdParam },
			async handler(ctx: Ctx<{ user_id: number }>) {
				const user: StoredUser | null = await this.db.users.findOne({ id: ctx.params.user_id });
				if (!user) throw notFound("User");
				return presentUser(publicUser(user), gitlabUrl);
			},
		},

		createProject: {
			params: {
				name: { type: "string", max: 255 },
				path: { type: "string", optional: true, max: 255 },
				description: { type: "string", optional: true, max: 2000 },
				visibility_level: { type: "number", integer: true, optional: true, convert: true },
				public_builds: { type: "boolean", optional: true, convert: true },
			},
			async handler(ctx: Ctx<{ name: string; path?: string; description?: string; visibility_level?: number; public_builds?: boolean }>) {
				const caller = this.caller(ctx);
				const owner: StoredUser | null = await this.db.users.findOne({ id: caller.id });
				if (!owner) throw unauthorized();
				const { errors, project } = validateNewProject(ctx.params, owner.username);
				if (errors) throw validation(errors);
				const id = await this.db.projects.nextId();
				const doc: ProjectDoc & Record<string, unknown> = {
					...project!,
					id,
					path_key: project!.path_with_namespace.toLowerCase(),
					name_key: `${owner.username}/${project!.name}`.toLowerCase(),
					creator_id: owner.id,
					created_at: now(),
				};
				try {
					await this.db.projects.insert(doc);
				} catch (err) {
					if (err instanceof UniqueViolation) throw validation({ name: ["has already been taken"], path: ["has already been taken"] });
					throw err;
				}
				await this.db.members.insert(this.memberDoc(id, owner.id, AccessLevel.OWNER));
				ctx.meta.$statusCode = 201;
				return presentProject(doc, publicUser(owner), gitlabUrl);
			},
		},

		getProject: {
			hedge: true,
			params: { id: "string" },
			async handler(ctx: Ctx) {
				const project: ProjectDoc | null = await this.db.projects.findOne({ id: this.access(ctx).project.id });
				if (!project) throw notFound("Project");
				const owner: StoredUser | null = await this.db.users.findOne({ id: project.creator_id });
				return presentProject(project, owner ? publicUser(owner) : null, gitlabUrl);
			},
		},

		listMembers: {
			hedge: true,
			params: { id: "string" },
			async handler(ctx: Ctx) {
				const projectId = this.access(ctx).project.id;
				const members: MemberDoc[] = await this.db.members.find({ project_id: projectId }, { sort: "user_id" });
				const users: StoredUser[] = await this.db.users.find({ id: { $in: members.map(m => m.user_id) } });
				const byId = new Map(users.map(u => [u.id, u]));
				return members.filter(m => byId.has(m.user_id)).map(m => presentMember(publicUser(byId.get(m.user_id)!), m.access_level, gitlabUrl));
			},
		},

		addMember: {
			params: memberParams,
			async handler(ctx: Ctx<MemberParams>) {
				const access = this.grantingAccess(ctx);
				const user: StoredUser | null = await this.db.users.findOne({ id: ctx.params.user_id });
				if (!user) throw notFound("User");
				try {
					await this.db.members.insert(this.memberDoc(access.project.id, user.id, ctx.params.access_level));
				} catch (err) {
					if (err instanceof UniqueViolation) throw conflict("Member already exists");
					throw err;
				}
				await this.memberChanged(ctx, access, user.id);
				ctx.meta.$statusCode = 201;
				return presentMember(publicUser(user), ctx.params.access_level, gitlabUrl);
			},
		},

		updateMember: {
			params: memberParams,
			async handler(ctx: Ctx<MemberParams>) {
				const access = this.grantingAccess(ctx);
				const member = await this.changeableMember(access, ctx.params.user_id);
				await this.db.members.update({ id: member.id }, { access_level: ctx.params.access_level });
				await this.memberChanged(ctx, access, member.user_id);
				const user: StoredUser = await this.db.users.findOne({ id: member.user_id });
				return presentMember(publicUser(user), ctx.params.access_level, gitlabUrl);
			},
		},

		removeMember: {
			params: { id: "string", user_id: userIdParam },
			async handler(ctx: Ctx<{ user_id: number }>) {
				const access = this.requireLevel(ctx, AccessLevel.MASTER);
				const member = await this.changeableMember(access, ctx.params.user_id);
				await this.db.members.remove({ id: member.id });
				await this.memberChanged(ctx, access, member.user_id);
				const user: StoredUser | null = await this.db.users.findOne({ id: member.user_id });
				return user ? presentMember(publicUser(user), member.access_level, gitlabUrl) : {};
			},
		},
	},

	events: {
		/** Another replica changed access data: drop this node's cached look-ups too. */
		async [ACCESS_CHANGED_EVENT](ctx: Context<AccessChange>) {
			await cleanTwice(this.broker, changedPatterns(ctx.params), "access look-ups");
		},
	},

	methods: {
		caller(ctx: Ctx): Caller {
			if (!ctx.meta.user) throw unauthorized();
			return ctx.meta.user;
		},

		/** A hash on the bounded hasher; a full hasher is a 429, not a wait without end. */
		async checkPassword(password: string, stored: string | null): Promise<boolean> {
			return this.busyAs429(() => (this.hasher as PasswordHasher).verify(password, stored));
		},

		async busyAs429<T>(work: () => Promise<T>): Promise<T> {
			try {
				return await work();
			} catch (err) {
				if (err instanceof HashingBusy) throw tooManyRequests(1000);
				throw err;
			}
		},

		revealToken(user: StoredUser): string {
			return decryptSecret(user.token_enc, this.secretsKey);
		},

		async findProject(ref: string): Promise<ProjectDoc | null> {
			const key = projectRefKey(ref);
			return this.db.projects.findOne(/^\d+$/.test(key) ? { id: Number(key) } : { path_key: key });
		},

		memberDoc(projectId: number, userId: number, level: number): Omit<MemberDoc, "id"> {
			return { project_id: projectId, user_id: userId, access_level: level, member_key: `${projectId}|${userId}`, created_at: now() };
		},

		/** Masters manage members; only owners and admins may hand out the owner level. */
		grantingAccess(ctx: Ctx<MemberParams>): ProjectAccess {
			const access = this.requireLevel(ctx, AccessLevel.MASTER);
			const level = ctx.params.access_level;
			if (!(MEMBER_LEVELS as readonly number[]).includes(level)) throw invalidValue("access_level");
			if (level >= AccessLevel.OWNER && !hasLevel(access, AccessLevel.OWNER)) throw forbidden();
			return access;
		},

		/** The creator's ownership is not changed through the members API. */
		async changeableMember(access: ProjectAccess, userId: number): Promise<MemberDoc> {
			const member: MemberDoc | null = await this.db.members.findOne({ member_key: `${access.project.id}|${userId}` });
			if (!member) throw notFound("Member");
			if (userId === access.project.creator_id) throw forbidden();
			return member;
		},

		async insertUser(p: { email: string; password: string; username: string; name: string; admin?: boolean; id?: number; token?: string }) {
			const token = p.token ?? generateToken();
			const user: StoredUser = {
				id: p.id ?? (await this.db.users.nextId()),
				username: p.username,
				email: p.email,
				name: p.name,
				state: "active",
				is_admin: !!p.admin,
				bio: null,
				created_at: now(),
				password_hash: await this.busyAs429(() => (this.hasher as PasswordHasher).hash(p.password)),
				token_hash: hashToken(token),
				token_enc: encryptSecret(token, this.secretsKey),
				username_key: p.username.toLowerCase(),
				email_key: p.email.toLowerCase(),
			};
			try {
				await this.db.users.insert(user);
			} catch (err) {
				if (err instanceof UniqueViolation) {
					const taken = await this.db.users.findOne({ email_key: user.email_key });
					throw conflict(taken ? "Email has already been taken" : "Username has already been taken");
				}
				throw err;
			}
			return { user, token };
		},

		/** Cleans the member's cached access to the project here, and tells the gateways and replicas to. */
		async memberChanged(ctx: Ctx, access: ProjectAccess, userId: number) {
			const cacher = this.broker.cacher;
			if (!cacher) return;
			const patterns = memberAccessKeys(cacher, access.project, userId);
			await cleanTwice(this.broker, patterns, "access look-ups");
			ctx.broadcast(ACCESS_CHANGED_EVENT, { patterns } satisfies AccessChange);
		},

		/** First start: create root (id 1, admin) unless an admin exists. Never touches an existing one. */
		async bootstrapRoot() {
			if ((await this.db.users.count({ is_admin: true })) > 0) return;
			const generatedPassword = !config.rootPassword;
			const password = config.rootPassword || generateToken();
			try {
				const { token } = await this.insertUser({
					username: "root",
					email: "admin@example.com",
					name: "Administrator",
					password,
					admin: true,
					token: config.rootToken || undefined,
				});
				const shown = [
					generatedPassword ? `password ${password}` : "password from GITLAB_ROOT_PASSWORD",
					config.rootToken ? "private token from GITLAB_ROOT_TOKEN" : `private token ${token}`,
				];
				// Printed once, on the start that creates root; never again.
				this.logger.info(`Created the root user: login root, ${shown.join(", ")}`);
			} catch (err) {
				// Another replica created root at the same moment: the unique index kept it single.
				if (!(err instanceof Error && /already been taken/.test(err.message))) throw err;
			}
		},
	},

	created() {
		this.secretsKey = resolveSecretsKey(config.secretsKey, config.dataDir).key;
		this.hasher = new PasswordHasher(config.passwordHashConcurrency, config.passwordHashQueue);
	},

	async started() {
		this.limiterRedis = config.redisUrl ? limiterRedis(config.redisUrl, this.logger) : null;
		this.loginThrottle = new LoginThrottle(this.limiterRedis, { prefix: this.broker.namespace || "gitlab", limit: config.authFailureLimit }, this.logger);
		await this.bootstrapRoot();
	},

	stopped() {
		this.limiterRedis?.disconnect();
	},
};

export default AccountsService;
