/**
 * What the deploy-keys service's parts share: its `this`. v3's actions are deploy-keys.ts here,
 * v4's deploy-keys.v4.ts, the keys and their links lib/deploy-keys/deploy-key-store.ts.
 */
import type { Context, ServiceSchema, ServiceSettingSchema } from "moleculer";
import type { ProjectAccess } from "../../../lib/accounts/access";
import type { ApiMeta } from "../../../lib/api/context";
import { notFound } from "../../../lib/api/errors";
import type { DeployKeyStore, Joiner, LinkedKey } from "../../../lib/deploy-keys/deploy-key-store";
import type { ValidDeployKey } from "../../../lib/deploy-keys/ssh-key";
import type { Collection } from "../../../lib/store/collection";
import type { CacheCleanerMethods } from "../../../mixins/cache.mixin";
import type { ProjectAccessMethods } from "../../../mixins/project-access.mixin";
import type { DeployKeyDoc, DeployKeyLinkDoc } from "../../../models/deploy-key";

export type Ctx<P> = Context<P, ApiMeta>;

export interface DeployKeysMethods extends ProjectAccessMethods, CacheCleanerMethods {
	linkedKey(projectId: number, rawId: string, missing?: () => Error): Promise<LinkedKey>;
	unlink(projectId: number, rawId: string): Promise<DeployKeyDoc>;
	/** `canPush`: the new link's write access (v4). */
	enableKey(ctx: Ctx<unknown>, projectId: number, keyId: number, canPush?: boolean): Promise<DeployKeyDoc>;
	addKey(ctx: Ctx<unknown>, access: ProjectAccess, input: ValidDeployKey, canPush?: boolean): Promise<DeployKeyDoc>;
	joiner(ctx: Ctx<unknown>): Joiner | null;
}

export interface DeployKeysVars {
	db: { deploy_keys: Collection<DeployKeyDoc>; deploy_key_links: Collection<DeployKeyLinkDoc> };
	deployKeys: DeployKeyStore;
}

export type DeployKeysModule = Partial<ServiceSchema<ServiceSettingSchema, DeployKeysMethods, DeployKeysVars>>;

/**
 * GitLab 8.16's `not_found!('Deploy Key')`: enable, disable and delete of a key this project cannot
 * or does not have (a record look-up, GET, keeps `404 Not found`).
 */
export const deployKeyNotFound = () => notFound("Deploy Key");
