/** Users: what other services may see of one (UserDoc), and what accounts stores (StoredUser). */

/** A user without credentials: what leaves the accounts service, for the presenters. */
export interface UserDoc {
	id: number;
	username: string;
	email: string;
	name: string;
	state: string;
	is_admin: boolean;
	bio?: string | null;
	location?: string | null;
	skype?: string;
	linkedin?: string;
	twitter?: string;
	website_url?: string;
	organization?: string | null;
	projects_limit?: number;
	created_at: string;
	/** Devise's trackable times, set by each `POST /session`: the previous sign-in and this one. */
	last_sign_in_at?: string | null;
	current_sign_in_at?: string | null;
	/** Users made here are confirmed when created (GitLab's `skip_confirmation!`); older records: created_at. */
	confirmed_at?: string | null;
	theme_id?: number;
	color_scheme_id?: number;
}

export interface StoredUser extends UserDoc {
	/** scrypt (lib/crypto/passwords.ts). */
	password_hash: string;
	/** The private token's SHA-256, what look-ups use. */
	token_hash: string;
	/** The private token, encrypted, so /session and /user can show it. */
	token_enc: string;
	/** Lower-case username and e-mail: unique, case-insensitively. */
	username_key: string;
	email_key: string;
}

/** The parts of a stored user that may leave the accounts service. */
export function publicUser(u: StoredUser): UserDoc {
	const { password_hash: _p, token_hash: _t, token_enc: _e, username_key: _u, email_key: _m, ...rest } = u;
	return rest;
}

export const usersCollection = {
	indexes: [
		{ fields: { username_key: 1 }, unique: true },
		{ fields: { email_key: 1 }, unique: true },
		{ fields: { token_hash: 1 }, unique: true },
	],
} as const;

/** GitLab 8.16's defaults for a new user's appearance (`default_theme`, and the color scheme column). */
export const DEFAULT_THEME_ID = 2;
export const DEFAULT_COLOR_SCHEME_ID = 1;
