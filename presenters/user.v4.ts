/**
 * API v4's user entities (GitLab's lib/api/entities: UserBasic < User < UserPublic < UserWithAdmin),
 * beside v3's in presenters/user.ts; pure. What this service does not keep shows as GitLab shows a
 * user without it (docs/api.md#v4-accounts).
 */
import type { UserDoc } from "../models/user";
import { alwaysNull, boolean, integer, nullable, object, propertiesOf, string, timestamp } from "./json-schema";
import { ACCOUNT, avatarUrl, presentAccount } from "./user";

/** UserBasic: `{id, username, name, state, locked, avatar_url, web_url}` (an author, a member, a list for non-admins). */
export function presentUserBasicV4(u: UserDoc, gitlabUrl: string) {
	return {
		id: u.id,
		username: u.username,
		name: u.name,
		state: u.state,
		locked: u.state === "blocked",
		avatar_url: avatarUrl(u.email),
		web_url: `${gitlabUrl}/${u.username}`,
	};
}

/** User: UserBasic and the public profile (`GET /users/:id`, a job's user). */
export function presentUserV4(u: UserDoc, gitlabUrl: string) {
	return {
		...presentUserBasicV4(u, gitlabUrl),
		created_at: u.created_at,
		bio: u.bio ?? "",
		location: u.location ?? "",
		public_email: null as string | null,
		skype: u.skype ?? "",
		linkedin: u.linkedin ?? "",
		twitter: u.twitter ?? "",
		discord: "",
		website_url: u.website_url ?? "",
		organization: u.organization ?? "",
		job_title: "",
		pronouns: null as string | null,
		bot: false,
		work_information: null as string | null,
		followers: 0,
		following: 0,
		local_time: null as string | null,
	};
}

/** UserPublic: the full user (`GET /user` for anyone but an admin). */
export function presentUserPublicV4(u: UserDoc, gitlabUrl: string) {
	return {
		...presentUserV4(u, gitlabUrl),
		last_sign_in_at: u.last_sign_in_at ?? null,
		confirmed_at: u.confirmed_at ?? u.created_at,
		last_activity_on: null as string | null,
		...presentAccount(u),
		private_profile: false,
		commit_email: u.email,
	};
}

/** UserWithAdmin: what admins see of users (`GET /user`, `POST /users`, the lists and reads for admins). */
export function presentUserWithAdminV4(u: UserDoc, gitlabUrl: string) {
	return { ...presentUserPublicV4(u, gitlabUrl), is_admin: !!u.is_admin, note: null as string | null, namespace_id: u.id, created_by: null };
}

/** The shapes above, for the API description (presenters/json-schema.ts). */
export const USER_BASIC_V4 = object(
	{ id: integer, username: string, name: string, state: string, locked: boolean, avatar_url: string, web_url: string },
	"UserBasicV4",
);
export const USER_V4 = object(
	{
		...propertiesOf(USER_BASIC_V4),
		created_at: timestamp,
		bio: string,
		location: string,
		public_email: nullable(string),
		skype: string,
		linkedin: string,
		twitter: string,
		discord: string,
		website_url: string,
		organization: string,
		job_title: string,
		pronouns: nullable(string),
		bot: boolean,
		work_information: nullable(string),
		followers: integer,
		following: integer,
		local_time: nullable(string),
	},
	"UserV4",
);
export const USER_PUBLIC_V4 = object(
	{
		...propertiesOf(USER_V4),
		last_sign_in_at: nullable(timestamp),
		confirmed_at: timestamp,
		last_activity_on: nullable(string),
		...propertiesOf(ACCOUNT),
		private_profile: boolean,
		commit_email: string,
	},
	"UserPublicV4",
);
export const USER_WITH_ADMIN_V4 = object(
	{ ...propertiesOf(USER_PUBLIC_V4), is_admin: boolean, note: nullable(string), namespace_id: integer, created_by: alwaysNull },
	"UserWithAdminV4",
);
