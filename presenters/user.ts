/** GitLab 8.16 user entities (lib/api/entities.rb: UserBasic < User < UserPublic < UserWithPrivateToken). */
import crypto from "crypto";
import { DEFAULT_COLOR_SCHEME_ID, DEFAULT_THEME_ID, type UserDoc } from "../models/user";
import { arrayOf, boolean, integer, nullable, object, propertiesOf, string, timestamp } from "./json-schema";

/** Projects a user may create: no limit is kept here, so a number no one reaches. */
const PROJECTS_LIMIT = 100000;

export function avatarUrl(email: string): string {
	const hash = crypto.createHash("md5").update(email.trim().toLowerCase()).digest("hex");
	return `https://www.gravatar.com/avatar/${hash}?s=80&d=identicon`;
}

/** UserBasic: what a project owner or snippet author shows in late 8.x. */
export function presentUserBasic(u: UserDoc, gitlabUrl: string) {
	return { name: u.name, username: u.username, id: u.id, state: u.state, avatar_url: avatarUrl(u.email), web_url: `${gitlabUrl}/${u.username}` };
}

/** The User entity (docs/api.md#build-entity, as embedded in builds, and GET /users/:id). */
export function presentUser(u: UserDoc, gitlabUrl: string) {
	return {
		...presentUserBasic(u, gitlabUrl),
		created_at: u.created_at,
		is_admin: !!u.is_admin,
		bio: u.bio ?? null,
		location: u.location ?? null,
		skype: u.skype ?? "",
		linkedin: u.linkedin ?? "",
		twitter: u.twitter ?? "",
		website_url: u.website_url ?? "",
		organization: u.organization ?? null,
	};
}

/**
 * UserPublic, GitLab's full user: `POST /users`, and `GET /users/:id` and `GET /users` for admins.
 * No identities (no external sign-in here), no two-factor, no external users.
 */
export function presentUserPublic(u: UserDoc, gitlabUrl: string) {
	return {
		...presentUser(u, gitlabUrl),
		last_sign_in_at: u.last_sign_in_at ?? null,
		confirmed_at: u.confirmed_at ?? u.created_at,
		...presentAccount(u),
	};
}

/** The account's part of UserPublic, alike in v3 and v4 (presenters/user.v4.ts), in GitLab's order. */
export function presentAccount(u: UserDoc) {
	return {
		email: u.email,
		theme_id: u.theme_id ?? DEFAULT_THEME_ID,
		color_scheme_id: u.color_scheme_id ?? DEFAULT_COLOR_SCHEME_ID,
		projects_limit: u.projects_limit ?? PROJECTS_LIMIT,
		current_sign_in_at: u.current_sign_in_at ?? null,
		identities: [] as { provider: string; extern_uid: string }[],
		can_create_group: true,
		can_create_project: true,
		two_factor_enabled: false,
		external: false,
	};
}

/** GET /user and POST /session: UserWithPrivateToken, the full user with its private token. */
export function presentCurrentUser(u: UserDoc, gitlabUrl: string, privateToken: string) {
	return { ...presentUserPublic(u, gitlabUrl), private_token: privateToken };
}

/** The shapes above, for the API description (presenters/json-schema.ts). */
export const USER_BASIC = object({ name: string, username: string, id: integer, state: string, avatar_url: string, web_url: string }, "UserBasic");
export const USER = object(
	{
		...propertiesOf(USER_BASIC),
		created_at: timestamp,
		is_admin: boolean,
		bio: nullable(string),
		location: nullable(string),
		skype: string,
		linkedin: string,
		twitter: string,
		website_url: string,
		organization: nullable(string),
	},
	"User",
);
/** presentAccount's part, alike in v3 and v4. */
export const ACCOUNT = object({
	email: string,
	theme_id: integer,
	color_scheme_id: integer,
	projects_limit: integer,
	current_sign_in_at: nullable(timestamp),
	identities: arrayOf(object({ provider: string, extern_uid: string })),
	can_create_group: boolean,
	can_create_project: boolean,
	two_factor_enabled: boolean,
	external: boolean,
});
export const USER_PUBLIC = object(
	{ ...propertiesOf(USER), last_sign_in_at: nullable(timestamp), confirmed_at: timestamp, ...propertiesOf(ACCOUNT) },
	"UserPublic",
);
export const CURRENT_USER = object({ ...propertiesOf(USER_PUBLIC), private_token: string }, "UserWithPrivateToken");
