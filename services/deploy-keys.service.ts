/**
 * Deploy keys (docs/api.md#deploy-keys), master or above. A key is one record per fingerprint
 * linked to projects; a key used elsewhere is *joined* only when the caller can access one of the
 * projects that use it (GitLab 8's accessible-keys rule), otherwise the fingerprint is taken
 * (400). Removing or disabling a key drops this project's link only; the last link takes the key
 * with it. Storing, linking and the races between them are the store's (lib/deploy-keys/deploy-key-store.ts).
 * v3's actions and v4's are services/modules/deploy-keys/; the rules both apply are the methods here.
 */
import type { ServiceSchema, ServiceSettingSchema } from "moleculer";
import { type ProjectAccess } from "../lib/accounts/access";
import { recordNotFound, validation } from "../lib/api/errors";
import { recordId } from "../lib/api/record-id";
import { DeployKeyStore, type Joiner } from "../lib/deploy-keys/deploy-key-store";
import { FINGERPRINT_TAKEN, type ValidDeployKey } from "../lib/deploy-keys/ssh-key";
import { serviceModule } from "../lib/moleculer/service-module";
import { CacheCleanerMixin } from "../mixins/cache.mixin";
import { DbMixin } from "../mixins/db.mixin";
import { ProjectAccessMixin } from "../mixins/project-access.mixin";
import { deployKeyLinksCollection, deployKeysCollection } from "../models/deploy-key";
import { DeployKeys } from "./modules/deploy-keys/deploy-keys";
import { DeployKeysV4 } from "./modules/deploy-keys/deploy-keys.v4";
import { deployKeyNotFound, type Ctx, type DeployKeysMethods as Methods, type DeployKeysVars as Vars } from "./modules/deploy-keys/shared";
import { PROJECT_ACCESS } from "../lib/accounts/auth-cache";

const DeployKeysService: ServiceSchema<ServiceSettingSchema, Methods, Vars> = {
	name: "deploy-keys",
	mixins: [
		DbMixin({ deploy_keys: deployKeysCollection, deploy_key_links: deployKeyLinksCollection }),
		CacheCleanerMixin(),
		ProjectAccessMixin(),
		serviceModule(DeployKeys),
		serviceModule(DeployKeysV4),
	],

	created() {
		this.deployKeys = new DeployKeyStore(this.db.deploy_keys, this.db.deploy_key_links);
	},

	methods: {
		/** The project's link to a key and the key itself; `missing()` (a 404) when the project does not have it. */
		async linkedKey(projectId: number, rawId: string, missing: () => Error = recordNotFound) {
			const keyId = recordId(rawId);
			const linked = keyId === null ? null : await this.deployKeys.linked(projectId, keyId);
			if (!linked) throw missing();
			return linked;
		},

		/** Drops this project's link to a key (the key goes with its last link) and cleans the project's entries; the key as it was. */
		async unlink(projectId: number, rawId: string) {
			const { key, link } = await this.linkedKey(projectId, rawId, deployKeyNotFound);
			// Another request unlinked it meanwhile: this one came second.
			if (!(await this.deployKeys.dropLink(link))) throw deployKeyNotFound();
			await this.cleanProjectCache(projectId);
			await this.deployKeys.removeIfUnlinked(key.id);
			return key;
		},

		/** Links an existing key the caller may join; `404 Deploy Key Not Found` when it is missing or may not be joined. */
		async enableKey(ctx: Ctx<unknown>, projectId: number, keyId: number, canPush?: boolean) {
			const key = await this.deployKeys.enable(this.joiner(ctx), projectId, keyId, canPush);
			if (!key) throw deployKeyNotFound();
			return key;
		},

		/** Adds a key, or joins the one of its fingerprint; 400 when that one may not be joined. */
		async addKey(ctx: Ctx<unknown>, access: ProjectAccess, input: ValidDeployKey, canPush?: boolean) {
			const key = await this.deployKeys.add(this.joiner(ctx), access.project.id, input, canPush);
			if (key === "taken") throw validation(FINGERPRINT_TAKEN);
			return key;
		},

		/** The caller, as the store's join rule sees them: their access to another project comes from accounts. */
		joiner(ctx: Ctx<unknown>): Joiner | null {
			const user = ctx.meta.user;
			if (!user) return null;
			return {
				userId: user.id,
				isAdmin: !!user.is_admin,
				async reaches(projectId: number) {
					try {
						const theirs = await ctx.call<ProjectAccess, object>(PROJECT_ACCESS.action, {
							project: String(projectId),
							userId: user.id,
							admin: false,
						});
						return theirs.level > 0;
					} catch (err) {
						if ((err as { code?: number }).code !== 404) throw err;
						return false;
					}
				},
			};
		},
	},
};

export default DeployKeysService;
