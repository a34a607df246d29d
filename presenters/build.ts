/** GitLab 8.x Build entity (docs/api.md#build-entity) and the erased-build record, pure. */
import type { BuildDoc, CommitDoc } from "../models/build";
import type { UserDoc } from "../models/user";
import { alwaysNull, boolean, integer, nullable, number, object, propertiesOf, string, timestamp } from "./json-schema";
import { presentUser, USER } from "./user";

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

/** GitLab 8.16's RepoCommit, in its order; the committer is the author unless the CI side named another. */
export function presentCommit(c: CommitDoc) {
	return {
		id: c.id,
		short_id: c.short_id,
		title: c.title,
		author_name: c.author_name,
		author_email: c.author_email,
		created_at: withNumericOffset(c.created_at),
		committer_name: c.committer_name ?? c.author_name,
		committer_email: c.committer_email ?? c.author_email,
		message: c.message,
	};
}

/** The user embedded in a build: GitLab 8.16's User entity (docs/api.md#build-entity). */
export function presentBuildUser(u: UserDoc, gitlabUrl: string) {
	return presentUser(u, gitlabUrl);
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

/** The shapes above, for the API description (presenters/json-schema.ts). A commit's date is kept as the CI side sent it. */
export const COMMIT = object(
	{
		id: string,
		short_id: string,
		title: string,
		author_name: string,
		author_email: string,
		created_at: string,
		committer_name: string,
		committer_email: string,
		message: string,
	},
	"Commit",
);
const BUILD_CORE = object({
	id: integer,
	name: string,
	stage: string,
	ref: string,
	tag: boolean,
	status: { enum: ["pending", "running", "success", "failed", "canceled"] },
	coverage: nullable(number),
	created_at: timestamp,
	started_at: nullable(timestamp),
	finished_at: nullable(timestamp),
	runner: alwaysNull,
	commit: COMMIT,
	user: nullable(USER),
});
export const BUILD = object({ ...propertiesOf(BUILD_CORE), artifacts_file: nullable(object({ filename: string, size: integer })) }, "Build");
export const ERASED_BUILD = object({ ...propertiesOf(BUILD_CORE), download_url: alwaysNull }, "ErasedBuild");
