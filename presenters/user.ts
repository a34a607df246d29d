/** GitLab 8.x user entities. */
import crypto from "crypto";
import type { UserDoc } from "../models/user";

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

/** GET /user and POST /session: the full user with its private token, as GitLab 8. */
export function presentCurrentUser(u: UserDoc, gitlabUrl: string, privateToken: string) {
	return {
		...presentUser(u, gitlabUrl),
		email: u.email,
		projects_limit: u.projects_limit ?? 100000,
		can_create_group: true,
		can_create_project: true,
		two_factor_enabled: false,
		external: false,
		identities: [],
		private_token: privateToken,
	};
}
