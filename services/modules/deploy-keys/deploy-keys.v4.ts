/**
 * API v4's deploy keys (docs/api.md#v4-deploy-keys): the same keys and links as v3's, with each
 * project's `can_push` on its link, the SHA-256 fingerprint, `PUT` (title, can_push), enable
 * (201), DELETE (204, If-Unmodified-Since), pages always, and the instance's keys for admins.
 */
import { AccessLevel } from "../../../lib/accounts/access";
import { BOOLEAN_PARAM, isTrue } from "../../../lib/api/booleans";
import { checkUnmodifiedSince } from "../../../lib/api/conditional";
import { forbidden, notFound, validation } from "../../../lib/api/errors";
import { PAGE_PARAMS, pageWindow, paginated, parsePage } from "../../../lib/api/pagination";
import { checkParamGroups, type ParamGroup } from "../../../lib/api/param-groups";
import { RECORD_ID_SCHEMA, recordId } from "../../../lib/api/record-id";
import { DEPLOY_KEY_DOC, MAX_TITLE_LENGTH, NEW_KEY_GROUPS, NEW_KEY_PARAMS, validateDeployKey } from "../../../lib/deploy-keys/ssh-key";
import { charCount } from "../../../lib/text/chars";
import { PROJECT_CACHE_KEY } from "../../../lib/cache/write-generations";
import type { DeployKeyDoc } from "../../../models/deploy-key";
import type { ProjectDoc } from "../../../models/project";
import { presentDeployKeyWithProjectsV4, presentProjectDeployKeyV4, presentSshKeyV4 } from "../../../presenters/deploy-key.v4";
import type { Ctx, DeployKeysModule } from "./shared";
import { projectById } from "../../../lib/accounts/lookups";

const keyIdParams = { id: "string", key_id: { type: "string", max: 64, openapi: RECORD_ID_SCHEMA } } as const;
/** An edit changes the title, `can_push`, or both (Grape's `at_least_one_of`). */
const UPDATE_GROUPS: ParamGroup[] = [{ atLeastOneOf: ["title", "can_push"] }];
type KeyId = { key_id: string };

export const DeployKeysV4: DeployKeysModule = {
	actions: {
		listV4: {
			access: AccessLevel.MASTER,
			params: { id: "string", ...PAGE_PARAMS },
			cache: { keys: [PROJECT_CACHE_KEY, "page", "per_page"], ttl: 300 },
			async handler(ctx: Ctx<{ page?: number; per_page?: number }>) {
				const query = { project_id: this.access(ctx).project.id };
				const page = parsePage(ctx.params);
				const [links, total] = await this.db.deploy_key_links.findPage(query, pageWindow(page), { sort: "id" });
				const keys = new Map((await this.deployKeys.keysOf(links)).map(k => [k.id, k]));
				const rows = links.filter(l => keys.has(l.key_id)).map(l => presentProjectDeployKeyV4(keys.get(l.key_id)!, l));
				return paginated(rows, total, page);
			},
		},

		getV4: {
			access: AccessLevel.MASTER,
			params: keyIdParams,
			cache: { keys: [PROJECT_CACHE_KEY, "key_id"], ttl: 300 },
			async handler(ctx: Ctx<KeyId>) {
				const { key, link } = await this.linkedKey(this.access(ctx).project.id, ctx.params.key_id);
				return presentProjectDeployKeyV4(key, link);
			},
		},

		/** Adds a key (or joins one the caller can reach, as v3 does) with this project's `can_push`: 201. */
		createV4: {
			access: AccessLevel.MASTER,
			params: { id: "string", ...NEW_KEY_PARAMS, can_push: BOOLEAN_PARAM },
			paramGroups: NEW_KEY_GROUPS,
			async handler(ctx: Ctx<{ title?: unknown; key?: unknown; can_push?: unknown }>) {
				const access = this.access(ctx);
				const checked = validateDeployKey(ctx.params);
				if (!checked.ok) throw validation(checked.errors);
				const key = await this.addKey(ctx, access, checked.value, !!isTrue(ctx.params.can_push));
				await this.cleanProjectCache(access.project.id);
				const { link } = await this.linkedKey(access.project.id, String(key.id));
				ctx.meta.$statusCode = 201;
				return presentProjectDeployKeyV4(key, link);
			},
		},

		/** The key's title (every project sees it) and this project's `can_push`. */
		updateV4: {
			access: AccessLevel.MASTER,
			params: { ...keyIdParams, title: { type: "any", optional: true, openapi: DEPLOY_KEY_DOC.newTitle }, can_push: BOOLEAN_PARAM },
			paramGroups: UPDATE_GROUPS,
			async handler(ctx: Ctx<KeyId & { title?: unknown; can_push?: unknown }>) {
				const { title } = ctx.params;
				const canPush = isTrue(ctx.params.can_push);
				checkParamGroups(UPDATE_GROUPS, { title, can_push: canPush });
				if (title !== undefined && (typeof title !== "string" || !title.trim() || charCount(title) > MAX_TITLE_LENGTH))
					throw validation({
						title: typeof title === "string" && title.trim() ? [`is too long (maximum is ${MAX_TITLE_LENGTH} characters)`] : ["can't be blank"],
					});
				const projectId = this.access(ctx).project.id;
				const { key, link } = await this.linkedKey(projectId, ctx.params.key_id);
				const at = new Date().toISOString();
				if (typeof title === "string") await this.db.deploy_keys.update({ id: key.id }, { title, updated_at: at });
				if (canPush !== undefined) await this.db.deploy_key_links.update({ id: link.id }, { can_push: canPush, updated_at: at });
				// Every project that has the key shows its title: their cached reads go too.
				const holders = typeof title === "string" ? (await this.db.deploy_key_links.find({ key_id: key.id })).map(l => l.project_id) : [projectId];
				await Promise.all([...new Set([projectId, ...holders])].map(id => this.cleanProjectCache(id)));
				const updated = await this.linkedKey(projectId, ctx.params.key_id);
				return presentProjectDeployKeyV4(updated.key, updated.link);
			},
		},

		/** Unlinks the key from this project (the key goes with its last link): 204. */
		removeV4: {
			access: AccessLevel.MASTER,
			params: keyIdParams,
			async handler(ctx: Ctx<KeyId>) {
				const projectId = this.access(ctx).project.id;
				const { link } = await this.linkedKey(projectId, ctx.params.key_id, () => notFound("Deploy Key"));
				checkUnmodifiedSince(ctx.meta, link.updated_at ?? link.created_at);
				await this.unlink(projectId, ctx.params.key_id);
				ctx.meta.$statusCode = 204;
				return null;
			},
		},

		/** Links an existing key the caller may join (as v3's enable): 201 with the key. */
		enableV4: {
			access: AccessLevel.MASTER,
			params: keyIdParams,
			async handler(ctx: Ctx<KeyId>) {
				const projectId = this.access(ctx).project.id;
				const keyId = recordId(ctx.params.key_id);
				if (keyId === null) throw notFound("Deploy Key");
				const key = await this.enableKey(ctx, projectId, keyId);
				await this.cleanProjectCache(projectId);
				ctx.meta.$statusCode = 201;
				return presentSshKeyV4(key);
			},
		},

		/** Every key of the instance, for admins, each with the projects it may push to; `public=true`: none here. */
		listAllV4: {
			hedge: true,
			params: { public: BOOLEAN_PARAM, ...PAGE_PARAMS },
			async handler(ctx: Ctx<{ public?: unknown; page?: number; per_page?: number }>) {
				if (!ctx.meta.user?.is_admin) throw forbidden();
				const query = isTrue(ctx.params.public) ? { public: true } : {};
				const page = parsePage(ctx.params);
				const [keys, total] = await this.db.deploy_keys.findPage(query, pageWindow(page), { sort: "id" });
				const pushing = keys.length ? await this.db.deploy_key_links.find({ key_id: { $in: keys.map(k => k.id) }, can_push: true }) : [];
				const projects = new Map<number, ProjectDoc>();
				for (const id of new Set(pushing.map(l => l.project_id))) {
					const project = await projectById(ctx, id);
					if (project) projects.set(id, project);
				}
				const writableBy = (k: DeployKeyDoc) =>
					pushing
						.filter(l => l.key_id === k.id && projects.has(l.project_id))
						.map(l => projects.get(l.project_id)!)
						.map(p => ({
							id: p.id,
							description: p.description ?? null,
							name: p.name,
							name_with_namespace: `${p.namespace} / ${p.name}`,
							path: p.path,
							path_with_namespace: p.path_with_namespace,
							created_at: p.created_at,
						}));
				return paginated(
					keys.map(k => presentDeployKeyWithProjectsV4(k, writableBy(k))),
					total,
					page,
				);
			},
		},
	},
};
