/**
 * What the real-client walks start from (docs/clients.md): an owner and a member, one project
 * with four builds in three pipelines (a commit and ref each), a trace and two artifacts archives,
 * and a deploy key of another of the owner's projects to enable. Made through the v3 API and the
 * runners' internal API, as the data already is when a script moves to v4.
 */
import crypto from "crypto";
import { storedZip } from "../../scripts/zip";
import { internalApi, SHA_A, SHA_B } from "./builds";
import type { Cluster } from "./cluster";
import { createProject, createUser, type TestUser } from "./fixtures";
import { client } from "./http";
import type { KeyFactory } from "./ssh-keys";

export const SHA_C = "2dd3ae198f8601a285adcf5c0fff204ee6fba5ff";

export interface ArtifactsArchive {
	filename: string;
	size: number;
	sha256: string;
	/** Path in the archive → its text. */
	files: Record<string, string>;
}

export interface ClientFixture {
	url: string;
	root_token: string;
	owner: TestUser;
	member: TestUser;
	project: { id: number; name: string; path_with_namespace: string };
	/**
	 * Created in this order: build (SHA_C, master, success), rubocop (SHA_A, master, failed),
	 * rspec (SHA_B, feature, running), lint (SHA_B, feature, pending).
	 */
	builds: { build: number; rubocop: number; rspec: number; lint: number };
	sha_a: string;
	sha_b: string;
	sha_c: string;
	/** rubocop's trace. */
	trace: string;
	/**
	 * rubocop's artifacts (failed pipeline) and build's (the latest successful pipeline of master):
	 * report/summary.txt is UTF-8 beyond ASCII, build's dist/app.txt ASCII only (docs/clients.md#client-bugs).
	 */
	artifacts: { rubocop: ArtifactsArchive; build: ArtifactsArchive };
	other_key: { id: number; title: string; key: string; created_at: string };
	/** A public key no project has yet. */
	new_key: string;
	new_project_name: string;
}

function archive(filename: string, files: Record<string, string>): ArtifactsArchive & { data: Buffer } {
	const data = storedZip(Object.entries(files).map(([name, text]) => ({ name, data: Buffer.from(text) })));
	return { filename, size: data.length, sha256: crypto.createHash("sha256").update(data).digest("hex"), files, data };
}

export async function prepareClientFixture(cluster: Cluster, keys: KeyFactory): Promise<ClientFixture> {
	const owner = await createUser(cluster.api());
	const member = await createUser(cluster.api());
	const as = client(cluster.url, owner.token);
	const name = `Client walk ${owner.username}`;
	const project = await createProject(as, { name, visibility_level: 10 });
	const ci = internalApi(cluster.url, cluster.internalSecret);

	const buildArchive = archive("build-artifacts.zip", { "dist/app.txt": "app v1\n" });
	const build = await ci.build({ project_id: project.id, sha: SHA_C, name: "build", stage: "build" });
	await ci.drive(build, "running");
	await must(ci.upload(build, buildArchive.data, buildArchive.filename), 200);
	await must(ci.state(build, "success"), 200);

	const rubocopArchive = archive("rubocop-artifacts.zip", { "report/summary.txt": "3 offenses — see rubocop.json\n", "rubocop.json": '{"offenses":3}\n' });
	const trace = "$ bundle exec rubocop\n3 offenses detected\n";
	const rubocop = await ci.build({ project_id: project.id, sha: SHA_A, name: "rubocop", user_id: owner.id });
	await ci.drive(rubocop, "running");
	await must(ci.trace(rubocop, trace), 200);
	await must(ci.upload(rubocop, rubocopArchive.data, rubocopArchive.filename), 200);
	await must(ci.state(rubocop, "failed"), 200);

	const rspec = await ci.build({ project_id: project.id, sha: SHA_B, ref: "feature", name: "rspec" });
	await ci.drive(rspec, "running");
	const lint = await ci.build({ project_id: project.id, sha: SHA_B, ref: "feature", name: "lint" });

	const keysProject = await createProject(as);
	const added = await as.post(`/projects/${keysProject.id}/deploy_keys`, { body: { title: "to enable", key: (await keys.generate("ed25519")).line } });
	if (added.status !== 201) throw new Error(`add deploy key: ${added.status} ${added.text}`);

	const { data: _b, ...buildInfo } = buildArchive;
	const { data: _r, ...rubocopInfo } = rubocopArchive;
	return {
		url: `http://127.0.0.1:${cluster.port}`,
		root_token: cluster.rootToken,
		owner,
		member,
		project: { id: project.id, name, path_with_namespace: project.path_with_namespace },
		builds: { build, rubocop, rspec, lint },
		sha_a: SHA_A,
		sha_b: SHA_B,
		sha_c: SHA_C,
		trace,
		artifacts: { rubocop: rubocopInfo, build: buildInfo },
		other_key: added.body,
		new_key: (await keys.generate("ed25519")).line,
		new_project_name: `New from a client ${owner.username}`,
	};
}

async function must(reply: Promise<{ status: number; text: string }>, status: number): Promise<void> {
	const res = await reply;
	if (res.status !== status) throw new Error(`expected ${status}, got ${res.status} ${res.text}`);
}
