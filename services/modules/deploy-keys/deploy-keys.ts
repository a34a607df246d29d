/**
 * API v3's deploy keys (docs/api.md#deploy-keys) under `/keys` and `/deploy_keys`, master or above.
 * Joining, unlinking and the races between them are the service's methods and the store's.
 */
import { AccessLevel } from "../../../lib/accounts/access";
import { forbidden, validation } from "../../../lib/api/errors";
import { PAGE_PARAMS, pageWindow, paginated, parsePage, wantsPage } from "../../../lib/api/pagination";
import { RECORD_ID_SCHEMA, recordId } from "../../../lib/api/record-id";
import { NEW_KEY_GROUPS, NEW_KEY_PARAMS, validateDeployKey } from "../../../lib/deploy-keys/ssh-key";
import { PROJECT_CACHE_KEY } from "../../../lib/cache/write-generations";
import { presentDeletedDeployKey, presentDeployKey } from "../../../presenters/deploy-key";
import { deployKeyNotFound, type Ctx, type DeployKeysModule } from "./shared";

/** Masters only (declared on every action, checked at the gateway before a cache is read): entries are per project. */
const cacheKeys = [PROJECT_CACHE_KEY];
/** Ids come from the path as text; anything but a positive integer is simply not found (lib/api/record-id). */
const keyIdParams = { id: "string", key_id: { type: "string", max: 64, openapi: RECORD_ID_SCHEMA } } as const;

export const DeployKeys: DeployKeysModule = {
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
};
