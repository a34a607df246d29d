/**
 * `POST /session` and `GET /user`: signing in (which records the sign-in times), and who the
 * caller is (with the private token, as GitLab 8).
 */
import { config } from "../../../config";
import { HashingBusy } from "../../../lib/crypto/passwords";
import { decryptSecret } from "../../../lib/crypto/secrets";
import type { LoginTicket } from "../../../lib/accounts/login-throttle";
import { tooManyRequests, unauthorized } from "../../../lib/api/errors";
import { publicUser, type StoredUser } from "../../../models/user";
import { presentCurrentUser } from "../../../presenters/user";
import { callerOf, now, type AccountsModule, type Ctx } from "./shared";

/** A hash on the bounded hasher (lib/crypto/passwords.ts); a full hasher is a 429, not a wait without end. */
async function busyAs429<T>(work: () => Promise<T>): Promise<T> {
	try {
		return await work();
	} catch (err) {
		if (err instanceof HashingBusy) throw tooManyRequests(1000);
		throw err;
	}
}

export const Session: AccountsModule = {
	actions: {
		/**
		 * Unknown logins cost the same scrypt work as wrong passwords, and failed logins are
		 * throttled per client address and per account (lib/accounts/login-throttle.ts).
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
				// No more sign-ins under way than the hasher takes: the others are refused before the
				// throttle counts them (a burst of logins would otherwise leave a day-long count per name).
				if (this.signInsUnderWay >= this.hasher.capacity) throw tooManyRequests(1000);
				this.signInsUnderWay++;
				let user: Awaited<ReturnType<typeof this.db.users.findOne>>;
				let matches: boolean;
				let ticket: LoginTicket;
				try {
					ticket = await this.loginThrottle.check(address, login);
					try {
						user = login ? await this.db.users.findOne(login.includes("@") ? { email_key: login } : { username_key: login }) : null;
						matches = await this.checkPassword(ctx.params.password, user?.password_hash ?? null);
					} catch (err) {
						// Not checked (the hasher busy, the store failing): not a failure of this address or account.
						await this.loginThrottle.released(ticket);
						throw err;
					}
				} finally {
					this.signInsUnderWay--;
				}
				if (!user || !matches || user.state !== "active") {
					await this.loginThrottle.failed(ticket);
					throw unauthorized();
				}
				await this.loginThrottle.succeeded(ticket);
				// Devise's trackable: this sign-in becomes the current one, the one before it the last.
				const at = now();
				const signIn = { last_sign_in_at: user.current_sign_in_at ?? at, current_sign_in_at: at };
				await this.db.users.update({ id: user.id }, signIn);
				ctx.meta.$statusCode = 201;
				return presentCurrentUser(publicUser({ ...user, ...signIn }), config.gitlabUrl, this.revealToken(user));
			},
		},

		me: {
			// A read: sent again if the first request is lost in transit (middlewares/hedged-calls.middleware.ts).
			hedge: true,
			async handler(ctx: Ctx) {
				const user = await this.db.users.findOne({ id: callerOf(ctx).id });
				if (!user) throw unauthorized();
				return presentCurrentUser(publicUser(user), config.gitlabUrl, this.revealToken(user));
			},
		},
	},

	methods: {
		async checkPassword(password: string, stored: string | null): Promise<boolean> {
			return busyAs429(() => this.hasher.verify(password, stored));
		},

		async hashPassword(password: string): Promise<string> {
			return busyAs429(() => this.hasher.hash(password));
		},

		revealToken(user: StoredUser): string {
			return decryptSecret(user.token_enc, this.secretsKey);
		},
	},
};
