/**
 * Deploy keys as stored (models/deploy-key.ts), for the keys service: one key per fingerprint,
 * linked to projects, joined only under GitLab 8's accessible-keys rule, and every link confirmed
 * by a compare-and-set on the key's `lock_version` so that a join and a last-link removal never
 * both win (docs/api.md#deploy-keys). No broker, no HTTP.
 */
import { conflict } from "../api/errors";
import type { Collection } from "../store/collection";
import { UniqueViolation } from "../store/collection";
import { keyLinkKey, type DeployKeyDoc, type DeployKeyLinkDoc } from "../../models/deploy-key";
import type { ValidDeployKey } from "./ssh-key";

/** Who links a key: an admin joins any key, anyone else a key used by a project they reach. */
export interface Joiner {
	userId: number;
	isAdmin: boolean;
	/** Whether the joiner has any access to that project. */
	reaches(projectId: number): Promise<boolean>;
}

export interface LinkedKey {
	key: DeployKeyDoc;
	link: DeployKeyLinkDoc;
}

type Joined = "linked" | "refused" | "again";

/** Joins and creations that lose a race start again, a bounded number of times. */
const MAX_ATTEMPTS = 5;
/** Longer than any request may run (the gateway's limit is 5 minutes): a creation still unlinked after it failed. */
const CREATION_WINDOW_MS = 10 * 60_000;
const changedConcurrently = () => conflict("The deploy key changed concurrently, try again");

export class DeployKeyStore {
	constructor(
		private readonly keys: Collection<DeployKeyDoc>,
		private readonly links: Collection<DeployKeyLinkDoc>,
	) {}

	/** The project's link to a key and the key; null when the project does not have it. */
	async linked(projectId: number, keyId: number): Promise<LinkedKey | null> {
		const link = await this.links.findOne({ project_key: keyLinkKey(projectId, keyId) });
		if (!link) return null;
		const key = await this.keys.findOne({ id: keyId });
		if (!key) {
			// A link left behind by a key removed in a race: drop it.
			await this.links.remove({ id: link.id });
			return null;
		}
		return { key, link };
	}

	/** The keys of some links, in the links' order (links whose key is gone are skipped). */
	async keysOf(links: DeployKeyLinkDoc[]): Promise<DeployKeyDoc[]> {
		if (!links.length) return [];
		const keys = await this.keys.find({ id: { $in: links.map(l => l.key_id) } });
		const byId = new Map(keys.map(k => [k.id, k]));
		return links.map(l => byId.get(l.key_id)).filter((k): k is DeployKeyDoc => !!k);
	}

	/** Drops one link; false when another request dropped it first. The key stays: see removeIfUnlinked. */
	async dropLink(link: DeployKeyLinkDoc): Promise<boolean> {
		return (await this.links.remove({ id: link.id })) > 0;
	}

	/** Deletes a key with no links left, unless a link was confirmed since it was read. */
	async removeIfUnlinked(keyId: number): Promise<void> {
		const key = await this.keys.findOne({ id: keyId });
		if (!key) return;
		if ((await this.links.count({ key_id: keyId })) > 0) return;
		await this.keys.remove({ id: keyId, lock_version: key.lock_version });
	}

	/**
	 * Links an existing key to a project: the key as it is when the project has it already, else
	 * when the joiner may join it (mayJoin); null when the key is missing or may not be joined. A
	 * link that loses a race with the key's removal starts again, and then finds the key gone.
	 */
	async enable(joiner: Joiner | null, projectId: number, keyId: number, canPush?: boolean): Promise<DeployKeyDoc | null> {
		for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
			const key = await this.keys.findOne({ id: keyId });
			if (!key) return null;
			const joined = await this.joinExisting(joiner, key, projectId, canPush);
			if (joined === "refused") return null;
			if (joined === "linked") return key;
		}
		throw changedConcurrently();
	}

	/** Adds a key to a project, or joins the stored key of its fingerprint; "taken" when that key may not be joined. */
	async add(joiner: Joiner | null, projectId: number, input: ValidDeployKey, canPush?: boolean): Promise<DeployKeyDoc | "taken"> {
		for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
			const existing = await this.keys.findOne({ fingerprint: input.fingerprint });
			if (existing) {
				const joined = await this.joinExisting(joiner, existing, projectId, canPush);
				if (joined === "refused") return "taken";
				if (joined === "linked") return existing;
				continue;
			}
			const now = new Date().toISOString();
			let created: DeployKeyDoc;
			try {
				created = await this.keys.insert({
					title: input.title,
					key: input.key,
					fingerprint: input.fingerprint,
					user_id: joiner?.userId ?? null,
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
		throw changedConcurrently();
	}

	/**
	 * An existing key for this project: "linked" when the project has it (already, or now), "refused"
	 * when the joiner may not join it (mayJoin), "again" when it vanished while being linked.
	 */
	private async joinExisting(joiner: Joiner | null, key: DeployKeyDoc, projectId: number, canPush?: boolean): Promise<Joined> {
		// The project has it already: answered as it is, no second link.
		if (await this.links.findOne({ project_key: keyLinkKey(projectId, key.id) })) return "linked";
		if (!(await this.mayJoin(joiner, key, projectId))) return "refused";
		return (await this.link(projectId, key.id, canPush)) ? "linked" : "again";
	}

	/**
	 * GitLab 8: a key joins only if it is among the joiner's accessible keys, i.e. it is used by a
	 * project the joiner is a member of (admins: any project). A key with no link yet is being
	 * added to the project it was created for, which stands for its link until the creation could
	 * have finished (a request's lifetime); a key left in no project after that protects nobody
	 * and may be taken up.
	 */
	private async mayJoin(joiner: Joiner | null, key: DeployKeyDoc, projectId: number): Promise<boolean> {
		if (!joiner) return false;
		const users = (await this.links.find({ key_id: key.id })).map(l => l.project_id);
		if (!users.length && key.created_for_project_id !== undefined && Date.now() - Date.parse(key.created_at) < CREATION_WINDOW_MS)
			users.push(key.created_for_project_id);
		const others = users.filter(id => id !== projectId);
		if (!others.length) return true;
		if (joiner.isAdmin) return true;
		for (const other of others) if (await joiner.reaches(other)) return true;
		return false;
	}

	/**
	 * Links a key to a project and confirms the key still exists by bumping its lock_version.
	 * False when the key vanished meanwhile (the link is withdrawn): the caller starts again.
	 */
	private async link(projectId: number, keyId: number, canPush?: boolean): Promise<boolean> {
		try {
			await this.links.insert({
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
			const key = await this.keys.findOne({ id: keyId });
			if (!key) break;
			if (await this.keys.update({ id: keyId, lock_version: key.lock_version }, { lock_version: key.lock_version + 1 })) return true;
		}
		await this.links.remove({ project_key: keyLinkKey(projectId, keyId) });
		return false;
	}
}
