/**
 * Deploy keys (docs/api.md#deploy-keys), master or above. A key is one record per fingerprint
 * linked to projects; a key used elsewhere is *joined* only when the caller can access one of the
 * projects that use it (GitLab 8's accessible-keys rule), otherwise the fingerprint is taken
 * (400). Removing or disabling a key drops this project's link only; the last link takes the key
 * with it. Storing, linking and the races between them are the store's (lib/deploy-keys/deploy-key-store.ts).
 */
import type { ServiceSchema, ServiceSettingSchema } from "moleculer";
import { AccessLevel, type ProjectAccess } from "../lib/accounts/access";
import { forbidden, notFound, recordNotFound, validation } from "../lib/api/errors";
import { PAGE_PARAMS, pageWindow, paginated, parsePage, wantsPage } from "../lib/api/pagination";
import { RECORD_ID_SCHEMA, recordId } from "../lib/api/record-id";
import { DeployKeyStore, type Joiner } from "../lib/deploy-keys/deploy-key-store";
import { FINGERPRINT_TAKEN, NEW_KEY_GROUPS, NEW_KEY_PARAMS, validateDeployKey, type ValidDeployKey } from "../lib/deploy-keys/ssh-key";
import { CacheCleanerMixin, PROJECT_CACHE_KEY } from "../mixins/cache-cleaner.mixin";
import { DbMixin } from "../mixins/db.mixin";
import { ProjectAccessMixin } from "../mixins/project-access.mixin";
import { deployKeyLinksCollection, deployKeysCollection } from "../models/deploy-key";
import { presentDeletedDeployKey, presentDeployKey } from "../presenters/deploy-key";
import { DeployKeysV4 } from "./modules/keys/deploy-keys.v4";
import type { Ctx, KeysMethods as Methods, KeysVars as Vars } from "./modules/keys/shared";
import { PROJECT_ACCESS } from "../lib/accounts/auth-cache";

/** Masters only (declared on every action, checked at the gateway before a cache is read): entries are per project. */
const cacheKeys = [PROJECT_CACHE_KEY];
/** Ids come from the path as text; anything but a positive integer is simply not found (lib/api/record-id). */
const keyIdParams = { id: "string", key_id: { type: "string", max: 64, openapi: RECORD_ID_SCHEMA } } as const;
/**
 * GitLab 8.16's `not_found!('Deploy Key')`: enable, disable and delete of a key this project cannot
 * or does not have (a record look-up, GET, keeps `404 Not found`).
 */
const deployKeyNotFound = () => notFound("Deploy Key");

const KeysService: ServiceSchema<ServiceSettingSchema, Methods, Vars> = {
	name: "keys",
	mixins: [
		DbMixin({ deploy_keys: deployKeysCollection, deploy_key_links: deployKeyLinksCollection }),
		CacheCleanerMixin(),
		ProjectAccessMixin(),
		DeployKeysV4 as unknown as Partial<ServiceSchema>,
	],

	actions: {
		/** Every key of the project in the order they were added; a page when the caller asks for one. */
		list: {
			access: AccessLevel.MASTER,
			params: { id: "string", ...PAGE_PARAMS },
			cache: { keys: [...cacheKeys, "page", "per_page"], ttl: 300 },
			async handler(ctx: Ctx<{ page?: number; per_page?: number }>) {
				const projectId = this.access(ctx).project.id;
				const query = { project_id: projectId };
				if (!wantsPage(ctx.params))
					return (await this.deployKeys.keysOf(await this.db.deploy_key_links.find(query, { sort: "id" }))).map(presentDeployKey);
				const page = parsePage(ctx.params);
				const [links, total] = await this.db.deploy_key_links.findPage(query, pageWindow(page), { sort: "id" });
				return paginated((await this.deployKeys.keysOf(links)).map(presentDeployKey), total, page);
			},
		},

		/**
		 * `GET /deploy_keys`: every key of every project, by id, for admins (403 for anyone else; not a
		 * project route, so no access level applies). Not cached: a key's writes clean their project only.
		 */
		listAll: {
			hedge: true,
			params: { ...PAGE_PARAMS },
			async handler(ctx: Ctx<{ page?: number; per_page?: number }>) {
				if (!ctx.meta.user?.is_admin) throw forbidden();
				if (!wantsPage(ctx.params)) return (await this.db.deploy_keys.find({}, { sort: "id" })).map(presentDeployKey);
				const page = parsePage(ctx.params);
				const [keys, total] = await this.db.deploy_keys.findPage({}, pageWindow(page), { sort: "id" });
				return paginated(keys.map(presentDeployKey), total, page);
			},
		},

		get: {
			access: AccessLevel.MASTER,
			params: keyIdParams,
			cache: { keys: [...cacheKeys, "key_id"], ttl: 300 },
			async handler(ctx: Ctx<{ key_id: string }>) {
				const projectId = this.access(ctx).project.id;
				const { key } = await this.linkedKey(projectId, ctx.params.key_id);
				return presentDeployKey(key);
			},
		},

		/** Adds a key, returns the project's copy of it, or joins one the caller can reach. 201. */
		create: {
			access: AccessLevel.MASTER,
			params: { id: "string", ...NEW_KEY_PARAMS },
			paramGroups: NEW_KEY_GROUPS,
			async handler(ctx: Ctx<{ title?: unknown; key?: unknown }>) {
				const access = this.access(ctx);
				const checked = validateDeployKey(ctx.params);
				if (!checked.ok) throw validation(checked.errors);
				const key = await this.addKey(ctx, access, checked.value);
				await this.cleanProjectCache(access.project.id);
				ctx.meta.$statusCode = 201;
				return presentDeployKey(key);
			},
		},

		/**
		 * `POST …/:key_id/enable`: links an existing key the caller may join (mayJoin, as a create
		 * does) to this project; 201 with the key, also when the project has it already.
		 */
		enable: {
			access: AccessLevel.MASTER,
			params: keyIdParams,
			async handler(ctx: Ctx<{ key_id: string }>) {
				const projectId = this.access(ctx).project.id;
				const keyId = recordId(ctx.params.key_id);
				if (keyId === null) throw deployKeyNotFound();
				const key = await this.enableKey(ctx, projectId, keyId);
				await this.cleanProjectCache(projectId);
				ctx.meta.$statusCode = 201;
				return presentDeployKey(key);
			},
		},

		/** Unlinks the key from this project (deleting it with its last link); answers the record. */
		remove: {
			access: AccessLevel.MASTER,
			params: keyIdParams,
			async handler(ctx: Ctx<{ key_id: string }>) {
				return presentDeletedDeployKey(await this.unlink(this.access(ctx).project.id, ctx.params.key_id));
			},
		},

		/** `DELETE …/:key_id/disable`: the same unlinking as `remove`, answered with the key's entity. */
		disable: {
			access: AccessLevel.MASTER,
			params: keyIdParams,
			async handler(ctx: Ctx<{ key_id: string }>) {
				return presentDeployKey(await this.unlink(this.access(ctx).project.id, ctx.params.key_id));
			},
		},
	},

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

export default KeysService;
