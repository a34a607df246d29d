/** Push payloads in GitLab 8.x PushDataBuilder shape, for the push event and worker tests. */
import crypto from "crypto";

export const sha = (seed: string) => crypto.createHash("sha1").update(seed).digest("hex");
export const ZERO = "0".repeat(40);

export interface CommitSpec {
	message: string;
	author?: string;
	added?: string[];
	modified?: string[];
	removed?: string[];
}

export interface PushSpec {
	projectId?: number;
	path?: string;
	ref?: string;
	before?: string;
	after?: string;
	commits?: CommitSpec[];
	total?: number;
	userName?: string;
	userEmail?: string;
	gitlabUrl?: string;
	diffs?: unknown[];
	extra?: Record<string, unknown>;
}

/** A raw JSON payload, as a git server would post it. */
export function pushBody(spec: PushSpec = {}): Record<string, any> {
	const gitlab = spec.gitlabUrl ?? "http://gitlab.example.com";
	const path = spec.path ?? "root/demo";
	const [namespace, name] = path.split("/");
	const ref = spec.ref ?? "refs/heads/master";
	const commits = (spec.commits ?? [{ message: "Initial commit" }]).map((c, i) => {
		const id = sha(`${path}:${ref}:${i}:${c.message}`);
		return {
			id,
			message: c.message,
			timestamp: `2017-01-0${(i % 9) + 1}T10:00:00+00:00`,
			url: `${gitlab}/${path}/commit/${id}`,
			author: { name: c.author ?? "Ada Lovelace", email: "ada@example.com" },
			added: c.added ?? [],
			modified: c.modified ?? ["README.md"],
			removed: c.removed ?? [],
		};
	});
	const after = spec.after ?? (commits.length ? commits[commits.length - 1].id : sha("after"));
	return {
		object_kind: ref.startsWith("refs/tags/") ? "tag_push" : "push",
		before: spec.before ?? sha("before"),
		after,
		ref,
		checkout_sha: after === ZERO ? null : after,
		message: null,
		user_id: 1,
		user_name: spec.userName ?? "Administrator",
		user_email: spec.userEmail ?? "admin@example.com",
		user_avatar: null,
		project_id: spec.projectId ?? 1,
		project: {
			name,
			description: "",
			web_url: `${gitlab}/${path}`,
			avatar_url: null,
			git_ssh_url: `git@gitlab.example.com:${path}.git`,
			git_http_url: `${gitlab}/${path}.git`,
			namespace,
			visibility_level: 0,
			path_with_namespace: path,
			default_branch: "master",
		},
		commits,
		total_commits_count: spec.total ?? commits.length,
		repository: { name, url: `git@gitlab.example.com:${path}.git`, description: "", homepage: `${gitlab}/${path}` },
		...(spec.diffs ? { diffs: spec.diffs } : {}),
		...spec.extra,
	};
}
