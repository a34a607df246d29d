/**
 * Accounts: users, private tokens, projects and memberships (the GitLab v3 subset the rest needs),
 * root's bootstrap, and the look-ups the gateway makes on every request. One resource per module
 * under services/modules/accounts/ (lookups, session, users, projects, members), as GitLab's lib/api,
 * and v4's beside them (users.v4, projects.v4, members.v4).
 *
 * The two look-ups (token → caller, project → the caller's level) are cached; a membership change
 * cleans that member's entries for that project at once, here and on the gateways (new users and
 * projects had no entries: failures are not cached).
 */
import type { ServiceSchema } from "moleculer";
import { config } from "../config";
import { LoginThrottle } from "../lib/accounts/login-throttle";
import { limiterRedis } from "../lib/api/rate-limiter";
import { PasswordHasher } from "../lib/crypto/passwords";
import { serviceModule } from "../lib/moleculer/service-module";
import { AccessCacheMixin } from "../mixins/cache.mixin";
import { DbMixin } from "../mixins/db.mixin";
import { ProjectAccessMixin } from "../mixins/project-access.mixin";
import { checkSecretsKeyInStore, SecretsMixin } from "../mixins/secrets.mixin";
import { membersCollection, projectsCollection } from "../models/project";
import { secretsKeyCheckCollection } from "../models/secrets-key-check";
import { usersCollection } from "../models/user";
import { Lookups } from "./modules/accounts/lookups";
import { Members } from "./modules/accounts/members";
import { MembersV4 } from "./modules/accounts/members.v4";
import type { AccountsModule } from "./modules/accounts/shared";
import { Projects } from "./modules/accounts/projects";
import { ProjectsV4 } from "./modules/accounts/projects.v4";
import { Session } from "./modules/accounts/session";
import { Users } from "./modules/accounts/users";
import { UsersV4 } from "./modules/accounts/users.v4";

/** Start-up: the hasher, the login throttle (on the shared Redis when there is one), root. */
const Lifecycle: AccountsModule = {
	created() {
		this.hasher = new PasswordHasher(config.passwordHashConcurrency, config.passwordHashQueue);
		this.signInsUnderWay = 0;
	},

	async started() {
		// Tokens are encrypted with it: a different key must stop here, not answer 500 to every sign-in.
		await checkSecretsKeyInStore(this);
		this.limiterRedis = config.redis ? limiterRedis(config.redis, this.logger) : null;
		this.loginThrottle = new LoginThrottle(this.limiterRedis, { prefix: this.broker.namespace || "gitlab", limit: config.authFailureLimit }, this.logger);
		this.createdRoot = await this.bootstrapRoot();
	},

	stopped() {
		this.limiterRedis?.disconnect();
	},
};

const AccountsService: ServiceSchema = {
	name: "accounts",
	mixins: [
		DbMixin({ users: usersCollection, projects: projectsCollection, members: membersCollection, accounts_secrets_key: secretsKeyCheckCollection }),
		ProjectAccessMixin(),
		SecretsMixin(),
		AccessCacheMixin(),
		serviceModule(Lookups),
		serviceModule(Session),
		serviceModule(Users),
		serviceModule(Projects),
		serviceModule(Members),
		// API v4's (docs/api.md#v4-accounts), on the same records.
		serviceModule(UsersV4),
		serviceModule(ProjectsV4),
		serviceModule(MembersV4),
	],
	// The service's own hooks run after its mixins' (the collections are connected by then).
	...serviceModule(Lifecycle),
};

export default AccountsService;
