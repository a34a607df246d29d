/**
 * Users: `POST /users` (admins), `GET /users/:id`, `GET /users` (a look-up or search for anyone,
 * the whole list for admins, paged in the store), and root's bootstrap on the first start.
 */
import { config } from "../../../config";
import { NEW_USER_DOC, validateNewUser } from "../../../lib/accounts/account-rules";
import { USER_LIST_PARAMS, usersQuery, type UserListParams } from "../../../lib/accounts/listing";
import { ApiError, conflict, forbidden, notFound, validation } from "../../../lib/api/errors";
import { pageWindow, paginated, parsePage } from "../../../lib/api/pagination";
import { encryptSecret } from "../../../lib/crypto/secrets";
import { createdRootLine, stageRootCredentials } from "../../../lib/accounts/root-credentials";
import { generateToken, hashToken } from "../../../lib/crypto/tokens";
import { UniqueViolation } from "../../../lib/store/collection";
import { DEFAULT_COLOR_SCHEME_ID, DEFAULT_THEME_ID, publicUser, type StoredUser } from "../../../models/user";
import { presentUser, presentUserBasic, presentUserPublic } from "../../../presenters/user";
import { callerOf, now, PROFILE_FIELDS, type AccountsModule, type Ctx, type NewUser, type UserListPresenters } from "./shared";

export const USER_ID_PARAM = { type: "number", integer: true, positive: true, convert: true } as const;

/** Profile text as GitLab's columns keep it (255 characters). */
const profileParams = Object.fromEntries(PROFILE_FIELDS.map(f => [f, { type: "string", optional: true, max: 255 }])) as Record<
	(typeof PROFILE_FIELDS)[number],
	{ type: "string"; optional: true; max: 255 }
>;

/** `POST /users` (both versions). */
export const userParams = {
	email: { type: "string", max: 255, openapi: NEW_USER_DOC.email },
	password: { type: "string", max: 1024, openapi: NEW_USER_DOC.password },
	username: { type: "string", max: 255, openapi: NEW_USER_DOC.username },
	name: { type: "string", max: 255, openapi: NEW_USER_DOC.name },
	admin: { type: "boolean", optional: true, convert: true },
	...profileParams,
} as const;

export const Users: AccountsModule = {
	actions: {
		createUser: {
			params: userParams,
			/** 201 with GitLab's full user (UserPublic). */
			async handler(ctx: Ctx<NewUser>) {
				return presentUserPublic(await this.createUserAsAdmin(ctx), config.gitlabUrl);
			},
		},

		/** Admins get GitLab's full user (UserPublic), others the User entity. */
		getUser: {
			hedge: true,
			params: { user_id: USER_ID_PARAM },
			async handler(ctx: Ctx<{ user_id: number }>) {
				const shown = await this.shownUser(ctx.params.user_id);
				return callerOf(ctx).is_admin ? presentUserPublic(shown, config.gitlabUrl) : presentUser(shown, config.gitlabUrl);
			},
		},

		/**
		 * `GET /users`: `username` (one user) or `search` for anyone, the whole list for admins
		 * (lib/accounts/listing.ts `usersQuery`); by id, paged. Admins see UserPublic, others UserBasic.
		 */
		listUsers: {
			hedge: true,
			params: USER_LIST_PARAMS,
			async handler(ctx: Ctx<UserListParams>) {
				return this.usersPage(ctx, { admin: presentUserPublic, others: presentUserBasic });
			},
		},
	},

	methods: {
		/** `POST /users` in both versions: admins only, the rules checked, 201; the user as stored, for either version's presenter. */
		async createUserAsAdmin(ctx: Ctx<NewUser>) {
			if (!callerOf(ctx).is_admin) throw forbidden();
			const errors = validateNewUser(ctx.params);
			if (errors) throw validation(errors);
			const { user } = await this.insertUser({ ...ctx.params, token: undefined });
			ctx.meta.$statusCode = 201;
			return publicUser(user);
		},

		/**
		 * `GET /users` in both versions: the users `usersQuery` lets this caller list (403 `Not
		 * authorized.` as GitLab 8.16 answers it), by id, paged, each in the entity the version shows
		 * admins or others.
		 */
		async usersPage(ctx: Ctx<UserListParams>, present: UserListPresenters) {
			const isAdmin = callerOf(ctx).is_admin;
			const query = usersQuery(ctx.params, isAdmin);
			if (!query) throw new ApiError(403, { message: "Not authorized." });
			const page = parsePage(ctx.params);
			const [rows, total] = await this.db.users.findPage(query, pageWindow(page), { sort: "id" });
			const shown = isAdmin ? present.admin : present.others;
			return paginated(
				rows.map(u => shown(publicUser(u), config.gitlabUrl)),
				total,
				page,
			);
		},

		/** `GET /users/:user_id` in both versions: the user, or 404. */
		async shownUser(userId: number) {
			const user = await this.db.users.findOne({ id: userId });
			if (!user) throw notFound("User");
			return publicUser(user);
		},

		async insertUser(p: NewUser) {
			const token = p.token ?? generateToken();
			const at = now();
			const profile = Object.fromEntries(PROFILE_FIELDS.filter(f => typeof p[f] === "string").map(f => [f, p[f]]));
			const fields: Omit<StoredUser, "id"> = {
				username: p.username,
				email: p.email,
				name: p.name,
				state: "active",
				is_admin: !!p.admin,
				bio: null,
				...profile,
				created_at: at,
				// Made by an admin (or the first start): confirmed at once, as GitLab's `skip_confirmation!`.
				confirmed_at: at,
				theme_id: DEFAULT_THEME_ID,
				color_scheme_id: DEFAULT_COLOR_SCHEME_ID,
				last_sign_in_at: null,
				current_sign_in_at: null,
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

		/**
		 * First start: create root (id 1, admin) unless an admin exists. Never touches an existing one.
		 * What it generated goes to DATA_DIR/initial_root_credentials, never to the log
		 * (lib/accounts/root-credentials.ts). Returns where, or null when root existed.
		 */
		async bootstrapRoot() {
			if ((await this.db.users.count({ is_admin: true })) > 0) return null;
			const password = config.rootPassword || generateToken();
			const token = config.rootToken || generateToken();
			const staged = stageRootCredentials(config.dataDir, {
				password: config.rootPassword ? null : password,
				token: config.rootToken ? null : token,
			});
			try {
				await this.insertUser({ username: "root", email: "admin@example.com", name: "Administrator", password, admin: true, token });
			} catch (err) {
				staged.discard();
				// Another replica created root at the same moment: the unique index kept it single.
				if (!(err instanceof Error && /already been taken/.test(err.message))) throw err;
				return null;
			}
			staged.commit();
			this.logger.info(createdRootLine(staged.root));
			return staged.root;
		},
	},
};
