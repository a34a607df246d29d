/**
 * Deploy keys (docs/api.md#deploy-keys), master or above. A key is one record per fingerprint (a
 * unique index) linked to projects through `deploy_key_links` (unique `project_key`), so
 * that a key already used elsewhere is *joined* to another project only when the caller can
 * access one of the projects that use it (GitLab 8's accessible-keys rule); otherwise the
 * fingerprint is taken (400).
 *
 * Enabling an existing key by id links it under the same rule (GitLab 8.16's
 * `EnableDeployKeyService`). Removing or disabling a key drops this project's link only; the last
 * link takes the key with it.
 * Joins and last-link removals may race, so every new link is confirmed by a compare-and-set
 * on the key's `lock_version`, and a key is only removed at the `lock_version` its remover
 * saw with no links left: either the remover sees the new link, or the joiner sees the key
 * gone and starts again.
 */
import type { ServiceSchema, ServiceSettingSchema } from "moleculer";
import { AccessLevel, type ProjectAccess } from "../lib/accounts/access";
import { conflict, forbidden, notFound, recordNotFound, validation } from "../lib/api/errors";
import { PAGE_PARAMS, pageWindow, paginated, parsePage, wantsPage } from "../lib/api/pagination";
import { recordId } from "../lib/api/record-id";
import { FINGERPRINT_TAKEN, validateDeployKey, type ValidDeployKey } from "../lib/keys/ssh-key";
import { CacheCleanerMixin, PROJECT_CACHE_KEY } from "../mixins/cache-cleaner.mixin";
import { DbMixin } from "../mixins/db.mixin";
import { UniqueViolation } from "../lib/store/collection";
import { ProjectAccessMixin } from "../mixins/project-access.mixin";
import { deployKeyLinksCollection, deployKeysCollection, keyLinkKey, type DeployKeyDoc, type DeployKeyLinkDoc } from "../models/deploy-key";
import { presentDeletedDeployKey, presentDeployKey } from "../presenters/deploy-key";
import { DeployKeysV4 } from "./modules/keys/deploy-keys.v4";
import type { Ctx, KeysMethods as Methods, KeysVars as Vars } from "./modules/keys/module";

type StoredKey = DeployKeyDoc;

/** Masters only (declared on every action, checked at the gateway before a cache is read): entries are per project. */
const cacheKeys = [PROJECT_CACHE_KEY];
/** Ids come from the path as text; anything but a positive integer is simply not found (lib/api/record-id). */
const keyIdParams = { id: "string", key_id: { type: "string", max: 64 } } as const;
/**
 * GitLab 8.16's `not_found!('Deploy Key')`: enable, disable and delete of a key this project cannot
 * or does not have (a record look-up, GET, keeps `404 Not found`).
 */
const deployKeyNotFound = () => notFound("Deploy Key");
/** Joins and creations that lose a race start again, a bounded number of times. */
const MAX_ATTEMPTS = 5;
/** Longer than any request may run (the gateway's limit is 5 minutes): a creation still unlinked after it failed. */
const CREATION_WINDOW_MS = 10 * 60_000;

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
				if (!wantsPage(ctx.params)) return (await this.keysOf(await this.db.deploy_key_links.find(query, { sort: "id" }))).map(presentDeployKey);
				const page = parsePage(ctx.params);
				const [links, total] = await Promise.all([
					this.db.deploy_key_links.find(query, { sort: "id", ...pageWindow(page) }),
					this.db.deploy_key_links.count(query),
				]);
				return paginated((await this.keysOf(links)).map(presentDeployKey), total, page);
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
				const [keys, total] = await Promise.all([this.db.deploy_keys.find({}, { sort: "id", ...pageWindow(page) }), this.db.deploy_keys.count({})]);
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
			params: { id: "string", title: { type: "any", optional: true }, key: { type: "any", optional: true } },
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

	methods: {
		/** The project's link to a key and the key itself; `missing()` (a 404) when the project does not have it. */
		async linkedKey(projectId: number, rawId: string, missing: () => Error = recordNotFound): Promise<{ key: StoredKey; link: DeployKeyLinkDoc }> {
			const keyId = recordId(rawId);
			if (keyId === null) throw missing();
			const link: DeployKeyLinkDoc | null = await this.db.deploy_key_links.findOne({ project_key: keyLinkKey(projectId, keyId) });
			if (!link) throw missing();
			const key: StoredKey | null = await this.db.deploy_keys.findOne({ id: keyId });
			if (!key) {
				// A link left behind by a key removed in a race: drop it.
				await this.db.deploy_key_links.remove({ id: link.id });
				throw missing();
			}
			return { key, link };
		},

		/** Drops this project's link to a key (the key goes with its last link) and cleans the project's entries; the key as it was. */
		async unlink(projectId: number, rawId: string): Promise<StoredKey> {
			const { key, link } = await this.linkedKey(projectId, rawId, deployKeyNotFound);
			// Another request unlinked it meanwhile: this one came second.
			if (!(await this.db.deploy_key_links.remove({ id: link.id }))) throw deployKeyNotFound();
			await this.cleanProjectCache(projectId);
			await this.removeIfUnlinked(key.id);
			return key;
		},

		/**
		 * Links an existing key to a project: the key as it is when the project has it already, else
		 * when the caller may join it (mayJoin); a missing key or one the caller may not join is
		 * `404 Deploy Key Not Found`. A link that loses a race with the key's removal starts again,
		 * and then finds the key gone.
		 */
		async enableKey(ctx: Ctx<unknown>, projectId: number, keyId: number, canPush?: boolean): Promise<StoredKey> {
			for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
				const key: StoredKey | null = await this.db.deploy_keys.findOne({ id: keyId });
				if (!key) throw deployKeyNotFound();
				const joined = await this.joinExisting(ctx, key, projectId, canPush);
				if (joined === "refused") throw deployKeyNotFound();
				if (joined === "linked") return key;
			}
			throw conflict("The deploy key changed concurrently, try again");
		},

		/** The keys of some links, in the links' order (links whose key is gone are skipped). */
		async keysOf(links: DeployKeyLinkDoc[]): Promise<StoredKey[]> {
			if (!links.length) return [];
			const keys: StoredKey[] = await this.db.deploy_keys.find({ id: { $in: links.map(l => l.key_id) } });
			const byId = new Map(keys.map(k => [k.id, k]));
			return links.map(l => byId.get(l.key_id)).filter((k): k is StoredKey => !!k);
		},

		async addKey(ctx: Ctx<unknown>, access: ProjectAccess, input: ValidDeployKey, canPush?: boolean): Promise<StoredKey> {
			const projectId = access.project.id;
			for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
				const existing: StoredKey | null = await this.db.deploy_keys.findOne({ fingerprint: input.fingerprint });
				if (existing) {
					const joined = await this.joinExisting(ctx, existing, projectId, canPush);
					if (joined === "refused") throw validation(FINGERPRINT_TAKEN);
					if (joined === "linked") return existing;
					continue;
				}
				const now = new Date().toISOString();
				let created: StoredKey;
				try {
					created = await this.db.deploy_keys.insert({
						title: input.title,
						key: input.key,
						fingerprint: input.fingerprint,
						user_id: ctx.meta.user?.id ?? null,
						created_for_project_id: projectId,
						public: false,
						created_at: now,
						updated_at: now,
						lock_version: 0,
					});
				} catch (err) {
					// Someone added the same key a moment ago: decide again with their record.
					if (err instanceof UniqueViolation) continue;
					throw err;
				}
				let linked: boolean;
				try {
					linked = await this.link(projectId, created.id, canPush);
				} catch (err) {
					// Not left behind unlinked, for anyone to take up once its creation window is over.
					await this.removeIfUnlinked(created.id).catch(() => undefined);
					throw err;
				}
				if (linked) return created;
			}
			throw conflict("The deploy key changed concurrently, try again");
		},

		/**
		 * An existing key for this project: "linked" when the project has it (already, or now), "refused"
		 * when the caller may not join it (mayJoin), "again" when it vanished while being linked.
		 */
		async joinExisting(ctx: Ctx<unknown>, key: StoredKey, projectId: number, canPush?: boolean): Promise<"linked" | "refused" | "again"> {
			// The project has it already: answered as it is, no second link.
			if (await this.db.deploy_key_links.findOne({ project_key: keyLinkKey(projectId, key.id) })) return "linked";
			if (!(await this.mayJoin(ctx, key, projectId))) return "refused";
			return (await this.link(projectId, key.id, canPush)) ? "linked" : "again";
		},

		/**
		 * GitLab 8: a key joins only if it is among the caller's accessible keys, i.e. it is used
		 * by a project the caller is a member of (admins: any project). A key with no link yet is
		 * being added to the project it was created for, which stands for its link until the
		 * creation could have finished (a request's lifetime); a key left in no project after
		 * that protects nobody and may be taken up.
		 */
		async mayJoin(ctx: Ctx<unknown>, key: StoredKey, projectId: number): Promise<boolean> {
			const user = ctx.meta.user;
			if (!user) return false;
			const links: DeployKeyLinkDoc[] = await this.db.deploy_key_links.find({ key_id: key.id });
			const users = links.map(l => l.project_id);
			if (!users.length && key.created_for_project_id !== undefined && Date.now() - Date.parse(key.created_at) < CREATION_WINDOW_MS)
				users.push(key.created_for_project_id);
			const others = users.filter(id => id !== projectId);
			if (!others.length) return true;
			if (user.is_admin) return true;
			for (const other of others) {
				try {
					const theirs = await ctx.call<ProjectAccess, object>("accounts.projectAccess", { project: String(other), userId: user.id, admin: false });
					if (theirs.level > 0) return true;
				} catch (err) {
					if ((err as { code?: number }).code !== 404) throw err;
				}
			}
			return false;
		},

		/**
		 * Links a key to a project and confirms the key still exists by bumping its lock_version.
		 * False when the key vanished meanwhile (the link is withdrawn): the caller starts again.
		 */
		async link(projectId: number, keyId: number, canPush?: boolean): Promise<boolean> {
			try {
				await this.db.deploy_key_links.insert({
					project_id: projectId,
					key_id: keyId,
					project_key: keyLinkKey(projectId, keyId),
					created_at: new Date().toISOString(),
					can_push: !!canPush,
				});
			} catch (err) {
				// A concurrent request linked it already: the project has the key.
				if (!(err instanceof UniqueViolation)) throw err;
			}
			for (let attempt = 0; attempt < MAX_ATTEMPTS * 4; attempt++) {
				const key: StoredKey | null = await this.db.deploy_keys.findOne({ id: keyId });
				if (!key) break;
				if (await this.db.deploy_keys.update({ id: keyId, lock_version: key.lock_version }, { lock_version: key.lock_version + 1 })) return true;
			}
			await this.db.deploy_key_links.remove({ project_key: keyLinkKey(projectId, keyId) });
			return false;
		},

		/** Deletes a key with no links left, unless a link was confirmed since it was read. */
		async removeIfUnlinked(keyId: number): Promise<void> {
			const key: StoredKey | null = await this.db.deploy_keys.findOne({ id: keyId });
			if (!key) return;
			if ((await this.db.deploy_key_links.count({ key_id: keyId })) > 0) return;
			await this.db.deploy_keys.remove({ id: keyId, lock_version: key.lock_version });
		},
	},
};

export default KeysService;
