/**
 * What the accounts service's modules share: the service's `this` (its collections, the hasher,
 * the login throttle, and every module's methods), so each module is typed against the whole.
 * The modules are mixins of services/accounts.service.ts, one per resource as GitLab's
 * lib/api splits them: lookups (for the gateway), session, users, projects, members.
 */
import type Redis from "ioredis";
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import type { Caller, ProjectAccess } from "../../../lib/accounts/access";
import type { ProjectListParams, UserListParams } from "../../../lib/accounts/listing";
import type { LoginThrottle } from "../../../lib/accounts/login-throttle";
import type { CreatedRoot } from "../../../lib/accounts/root-credentials";
import type { ApiMeta } from "../../../lib/api/context";
import { unauthorized } from "../../../lib/api/errors";
import type { Paginated } from "../../../lib/api/pagination";
import type { PasswordHasher } from "../../../lib/crypto/passwords";
import type { Collection } from "../../../lib/store/collection";
import type { ProjectAccessMethods } from "../../../mixins/project-access.mixin";
import type { SecretsVars } from "../../../mixins/secrets.mixin";
import type { MemberDoc, ProjectDoc } from "../../../models/project";
import type { StoredUser, UserDoc } from "../../../models/user";

export type Ctx<P = Record<string, unknown>> = Context<P, ApiMeta>;

/** Profile fields a new user may be given (GitLab 8.16's optional attributes of `POST /users`). */
export const PROFILE_FIELDS = ["skype", "linkedin", "twitter", "website_url", "organization", "bio", "location"] as const;
type ProfileFields = Partial<Record<(typeof PROFILE_FIELDS)[number], string>>;

export interface NewUser extends ProfileFields {
	email: string;
	password: string;
	username: string;
	name: string;
	admin?: boolean;
	/** A chosen private token (root's GITLAB_ROOT_TOKEN); generated otherwise. */
	token?: string;
}

/** A version's entities of a projects list: `simple=true`'s, and the full one with the caller's `permissions`. */
export interface ProjectListPresenters {
	basic: (p: ProjectDoc, owner: UserDoc | null, gitlabUrl: string) => unknown;
	withAccess: (p: ProjectDoc, owner: UserDoc | null, gitlabUrl: string, memberLevel: number | null) => unknown;
}

/** A version's entities of a users list: what admins see, and what everyone else sees. */
export interface UserListPresenters {
	admin: (u: UserDoc, gitlabUrl: string) => unknown;
	others: (u: UserDoc, gitlabUrl: string) => unknown;
}

/** What a new project is asked to be (`visibility_level`: v4's word read into its number). */
export interface NewProject {
	name: string;
	path?: string;
	description?: string;
	visibility_level?: number;
	public_builds?: boolean;
}

interface AccountsVars extends SecretsVars {
	db: { users: Collection<StoredUser>; projects: Collection<ProjectDoc>; members: Collection<MemberDoc> };
	hasher: PasswordHasher;
	/** Sign-ins between their throttle check and their answer (at most the hasher's capacity). */
	signInsUnderWay: number;
	loginThrottle: LoginThrottle;
	limiterRedis: Redis | null;
	/** Where root's generated credentials are, when this start created root, until `npm start`'s banner names them (lib/start/banner.ts). */
	createdRoot: CreatedRoot | null;
}

interface AccountsMethods extends ProjectAccessMethods {
	findProject(ref: string): Promise<ProjectDoc | null>;
	checkPassword(password: string, stored: string | null): Promise<boolean>;
	hashPassword(password: string): Promise<string>;
	revealToken(user: StoredUser): string;
	insertUser(user: NewUser): Promise<{ user: StoredUser; token: string }>;
	createUserAsAdmin(ctx: Ctx<NewUser>): Promise<UserDoc>;
	shownUser(userId: number): Promise<UserDoc>;
	usersPage(ctx: Ctx<UserListParams>, present: UserListPresenters): Promise<Paginated<unknown>>;
	bootstrapRoot(): Promise<CreatedRoot | null>;
	memberDoc(projectId: number, userId: number, level: number): Omit<MemberDoc, "id">;
	checkGrant(access: ProjectAccess, level: number): void;
	memberChanged(ctx: Ctx, access: ProjectAccess, userId: number): Promise<void>;
	shownMember(ctx: Ctx, userId: number): Promise<{ member: MemberDoc; user: UserDoc }>;
	userToAdd(userId: number): Promise<UserDoc>;
	insertMember(ctx: Ctx, access: ProjectAccess, userId: number, level: number): Promise<MemberDoc>;
	changeMember(ctx: Ctx, userId: number, level: number): Promise<{ member: MemberDoc; user: UserDoc }>;
	membersPage<T>(ctx: Ctx<{ query?: string; page?: number; per_page?: number }>, present: (m: MemberDoc, user: UserDoc) => T): Promise<Paginated<T>>;
	projectWithAccess(ctx: Ctx): Promise<{ project: ProjectDoc; owner: UserDoc | null; memberLevel: number | null }>;
	projectsPage(ctx: Ctx<ProjectListParams>, scope: Record<string, unknown>, present: ProjectListPresenters): Promise<Paginated<unknown>>;
	insertProject(ctx: Ctx<unknown>, asked: NewProject): Promise<{ project: ProjectDoc; owner: UserDoc }>;
}

export type AccountsModule = Partial<ServiceSchema<ServiceSettingSchema, AccountsMethods, AccountsVars>>;

/** The signed-in caller, or 401. */
export function callerOf(ctx: { meta: ApiMeta }): Caller {
	if (!ctx.meta.user) throw unauthorized();
	return ctx.meta.user;
}

export const now = () => new Date().toISOString();
