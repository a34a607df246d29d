/** Users: `POST /users` (admins), `GET /users/:id`, and root's bootstrap on the first start. */
import { config } from "../../../config";
import { validateNewUser } from "../../../lib/accounts/account-rules";
import { conflict, forbidden, notFound, validation } from "../../../lib/api/errors";
import { encryptSecret } from "../../../lib/crypto/secrets";
import { generateToken, hashToken } from "../../../lib/crypto/tokens";
import { UniqueViolation } from "../../../lib/store/collection";
import { publicUser, type StoredUser } from "../../../models/user";
import { presentUser } from "../../../presenters/user";
import { callerOf, now, type AccountsModule, type Ctx, type NewUser } from "./module";

export const USER_ID_PARAM = { type: "number", integer: true, positive: true, convert: true } as const;

export const Users: AccountsModule = {
	actions: {
		createUser: {
			params: {
				email: { type: "string", max: 255 },
				password: { type: "string", max: 1024 },
				username: { type: "string", max: 255 },
				name: { type: "string", max: 255 },
				admin: { type: "boolean", optional: true, convert: true },
			},
			async handler(ctx: Ctx<NewUser>) {
				if (!callerOf(ctx).is_admin) throw forbidden();
				const errors = validateNewUser(ctx.params);
				if (errors) throw validation(errors);
				const { user } = await this.insertUser({ ...ctx.params, token: undefined });
				ctx.meta.$statusCode = 201;
				return presentUser(publicUser(user), config.gitlabUrl);
			},
		},

		getUser: {
			hedge: true,
			params: { user_id: USER_ID_PARAM },
			async handler(ctx: Ctx<{ user_id: number }>) {
				const user = await this.db.users.findOne({ id: ctx.params.user_id });
				if (!user) throw notFound("User");
				return presentUser(publicUser(user), config.gitlabUrl);
			},
		},
	},

	methods: {
		async insertUser(p: NewUser) {
			const token = p.token ?? generateToken();
			const fields: Omit<StoredUser, "id"> = {
				username: p.username,
				email: p.email,
				name: p.name,
				state: "active",
				is_admin: !!p.admin,
				bio: null,
				created_at: now(),
				password_hash: await this.hashPassword(p.password),
				token_hash: hashToken(token),
				token_enc: encryptSecret(token, this.secretsKey),
				username_key: p.username.toLowerCase(),
				email_key: p.email.toLowerCase(),
			};
			try {
				return { user: await this.db.users.insert(fields), token };
			} catch (err) {
				if (err instanceof UniqueViolation) {
					const taken = await this.db.users.findOne({ email_key: fields.email_key });
					throw conflict(taken ? "Email has already been taken" : "Username has already been taken");
				}
				throw err;
			}
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
};
