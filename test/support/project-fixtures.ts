/**
 * One project with something behind every kind of endpoint: a member, a label, a deploy key, a
 * snippet, a build (with a trace and an artifacts archive of one file, then successful, so that
 * v4's artifacts by ref find it; its pipeline), and an integration holding a secret. Returns the
 * values that fill each route's path parameters (`:id`, `:name`, `:key_id`, v4's `:label_id`,
 * `:job_id`, `:pipeline_id`, `*ref_name`, `*artifact_path`, …), for the tests that walk every
 * endpoint (fuzz, security).
 */
import { storedZip } from "../../scripts/zip";
import { SNIPPET_REF } from "../../presenters/snippet.v4";
import { encodeCursor } from "../../lib/builds/job-listing";
import { internalApi } from "./builds";
import type { Cluster } from "./cluster";
import { addMember, createProject, createUser, type TestUser } from "./fixtures";
import { client } from "./http";
import { pushBody } from "./push-fixtures";
import type { KeyFactory } from "./ssh-keys";

export const FIXTURE_SHA = "0ff3ae198f8601a285adcf5c0fff204ee6fba5fd";

export interface SeededProject {
	/**
	 * Path parameter values by name: id, path, user_id, name, key_id, snippet_id, build_id, sha, slug;
	 * v4's label_id, job_id, pipeline_id, ref_name, artifact_path, ref, file_path; the query's job; and sshKey.
	 */
	ids: Record<string, string>;
	/** The integration's secret token (must never come back, and is stored only encrypted). */
	integrationSecret: string;
}

export async function seedProject(
	cluster: Cluster,
	owner: TestUser,
	keys: KeyFactory,
	opts: { memberLevel?: number; member?: TestUser } = {},
): Promise<SeededProject> {
	const as = client(cluster.url, owner.token);
	const project = await createProject(as, { name: `seeded-${Math.random().toString(36).slice(2, 8)}` });
	const ids: Record<string, string> = { id: String(project.id), path: project.path_with_namespace, sha: FIXTURE_SHA, slug: "emails-on-push", name: "bug" };
	const member = opts.member ?? (await createUser(cluster.api()));
	await addMember(as, project.id, member.id, opts.memberLevel ?? 20);
	ids.user_id = String(member.id);

	await cluster.waitForRoute("GET", `/projects/${project.id}/labels`, owner.token);
	const label = await as.post(`/projects/${project.id}/labels`, { body: { name: "bug", color: "#ff0000" } });
	if (label.status !== 200) throw new Error(`label: ${label.status} ${label.text}`);
	ids.label_id = String((await as.get(`/projects/${project.id}/labels`)).body[0].id);

	const key = await keys.generate("ed25519");
	ids.sshKey = key.line;
	await cluster.waitForRoute("GET", `/projects/${project.id}/deploy_keys`, owner.token);
	const created = await as.post(`/projects/${project.id}/deploy_keys`, { body: { title: "seeded key", key: key.line } });
	if (created.status !== 201) throw new Error(`deploy key: ${created.status} ${created.text}`);
	ids.key_id = String(created.body.id);

	await cluster.waitForRoute("GET", `/projects/${project.id}/snippets`, owner.token);
	const snippet = await as.post(`/projects/${project.id}/snippets`, { body: { title: "s", file_name: "s.rb", code: "puts 1", visibility_level: 0 } });
	if (snippet.status !== 201) throw new Error(`snippet: ${snippet.status} ${snippet.text}`);
	ids.snippet_id = String(snippet.body.id);
	Object.assign(ids, { ref: SNIPPET_REF, file_path: "s.rb" });

	await cluster.waitForRoute("GET", `/projects/${project.id}/builds`, owner.token);
	const ci = internalApi(cluster.url, cluster.internalSecret);
	const buildId = await ci.build({ project_id: project.id, sha: FIXTURE_SHA });
	Object.assign(ids, { build_id: String(buildId), job_id: String(buildId), ref_name: "master", job: "rspec", artifact_path: "seeded.txt" });
	const trace = await ci.raw.patch(`/internal/builds/${buildId}/trace`, { headers: { ...ci.headers, "Content-Type": "text/plain" }, body: "seeded trace\n" });
	if (trace.status !== 200) throw new Error(`trace: ${trace.status} ${trace.text}`);
	const artifacts = await fetch(`${cluster.url}/internal/builds/${buildId}/artifacts?filename=seeded.zip`, {
		method: "PUT",
		headers: { ...ci.headers, "Content-Type": "application/octet-stream" },
		body: storedZip([{ name: ids.artifact_path, data: Buffer.from("seeded artifacts\n") }]),
	});
	if (artifacts.status !== 200) throw new Error(`artifacts: ${artifacts.status} ${await artifacts.text()}`);
	await ci.drive(buildId, "success");
	ids.cursor = encodeCursor({ id: buildId, seq: 1 });
	ids.pipeline_id = String((await client(cluster.url.replace(/\/v3$/, "/v4"), owner.token).get(`/projects/${project.id}/pipelines`)).body[0].id);

	const integrationSecret = `seeded-secret-${Math.random().toString(36).slice(2, 10)}`;
	await cluster.waitForRoute("GET", `/projects/${project.id}/services/emails-on-push`, owner.token);
	const integration = await as.put(`/projects/${project.id}/services/pipeline-service-a`, {
		body: { token: integrationSecret, project_url: "http://ci.example.com/p" },
	});
	if (integration.status !== 200) throw new Error(`integration: ${integration.status} ${integration.text}`);
	return { ids, integrationSecret };
}

/**
 * A body each known action accepts, for the seeded project (`unique` keeps names apart); null when
 * the action is not known here (a caller then derives one from the parameter schema). Tests start
 * from it: the fuzz mutates it, the security test sends it as someone who may not.
 */
export function validBody(route: { action: string | null }, ids: Record<string, string>, owner: TestUser, unique: string): Record<string, unknown> | null {
	switch (route.action) {
		case "accounts.login":
			return { login: owner.username, password: `password-${owner.username}` };
		case "accounts.createUser":
			return { username: `u${unique}`, name: "New User", email: `u${unique}@example.com`, password: "a-password" };
		case "accounts.createProject":
			return { name: `p-${unique}`, visibility_level: 0 };
		case "accounts.addMember":
		case "accounts.updateMember":
			return { user_id: Number(ids.user_id), access_level: 30 };
		case "labels.create":
			return { name: `l${unique}`, color: "#abcdef", description: "d" };
		case "labels.update":
			// Keeps the fixture's name, so that later requests still find it.
			return { name: ids.name, color: "#abcdef", description: `d${unique}` };
		case "labels.remove":
			return { name: ids.name };
		case "snippets.create":
		case "snippets.update":
			return { title: "t", file_name: "a.rb", code: "puts 1", visibility_level: 0 };
		case "deploy-keys.create":
			return { title: "k", key: ids.sshKey };
		case "integrations.update":
			return { recipients: "dev@example.com", disable_diffs: "true" };
		case "builds.create":
			return {
				project_id: Number(ids.id),
				name: "rspec",
				stage: "test",
				ref: "master",
				tag: false,
				commit: { id: ids.sha, title: "t", message: "m", author_name: "a", author_email: "a@example.com", created_at: "2017-01-01T00:00:00Z" },
			};
		case "builds.updateState":
			return { status: "running" };
		case "builds.appendTrace":
			return { text: "trace line\n" };
		case "events.push":
			return pushBody({ projectId: Number(ids.id), path: ids.path, commits: [{ message: `fix #${unique}` }] });
		default:
			return null;
	}
}
