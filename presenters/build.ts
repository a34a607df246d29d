/** GitLab 8.x Build entity (docs/api.md#build-entity) and the erased-build record, pure. */
import type { BuildDoc, CommitDoc } from "../models/build";
import type { UserDoc } from "../models/user";
import { presentUser } from "./user";

/**
 * ISO 8601 with a numeric UTC offset, as GitLab shows a commit's date
 * (`2015-12-24T16:51:14.000+01:00`). A value that already carries an offset is kept as sent.
 */
export function withNumericOffset(ts: string): string {
	if (/[+-]\d{2}:\d{2}$/.test(ts)) return ts;
	const d = new Date(ts);
	if (Number.isNaN(d.getTime())) return ts;
	return d.toISOString().replace(/Z$/, "+00:00");
}

export function presentCommit(c: CommitDoc) {
	return {
		id: c.id,
		short_id: c.short_id,
		title: c.title,
		author_name: c.author_name,
		author_email: c.author_email,
		created_at: withNumericOffset(c.created_at),
		message: c.message,
	};
}

/** The user embedded in a build: exactly the fields of docs/api.md#build-entity. */
export function presentBuildUser(u: UserDoc, gitlabUrl: string) {
	const full = presentUser(u, gitlabUrl);
	return {
		id: full.id,
		username: full.username,
		name: full.name,
		state: full.state,
		is_admin: full.is_admin,
		avatar_url: full.avatar_url,
		web_url: full.web_url,
		website_url: full.website_url,
		created_at: full.created_at,
		bio: full.bio,
		linkedin: full.linkedin,
		skype: full.skype,
		twitter: full.twitter,
	};
}

/** The fields the Build entity and the erased-build record share. */
function core(b: BuildDoc, user: UserDoc | null, gitlabUrl: string) {
	return {
		id: b.id,
		name: b.name,
		stage: b.stage,
		ref: b.ref,
		tag: !!b.tag,
		status: b.status,
		coverage: b.coverage ?? null,
		created_at: b.created_at,
		started_at: b.started_at ?? null,
		finished_at: b.finished_at ?? null,
		runner: null,
		commit: presentCommit(b.commit),
		user: user ? presentBuildUser(user, gitlabUrl) : null,
	};
}

/** Build (list, get, cancel, retry): `artifacts_file` is `{filename, size}` or null. */
export function presentBuild(b: BuildDoc, user: UserDoc | null, gitlabUrl: string) {
	return {
		...core(b, user, gitlabUrl),
		artifacts_file: b.artifacts ? { filename: b.artifacts.filename, size: b.artifacts.size } : null,
	};
}

/** The erase response (docs/api.md#build-entity): no `artifacts_file`, a `download_url` (null: there is no web UI to link). */
export function presentErasedBuild(b: BuildDoc, user: UserDoc | null, gitlabUrl: string) {
	return { ...core(b, user, gitlabUrl), download_url: null };
}

export type BuildEntity = ReturnType<typeof presentBuild>;
export type ErasedBuildEntity = ReturnType<typeof presentErasedBuild>;
