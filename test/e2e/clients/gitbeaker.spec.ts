/**
 * @gitbeaker/rest, the npm client of API v4, through every method of its Jobs, JobArtifacts,
 * Pipelines, ProjectLabels, DeployKeys, Integrations and ProjectSnippets resources that our slice
 * covers (and the accounts a script needs, and a client without a token), against the gateway and
 * the services as separate processes over the real NATS. Its label subscribe posts to an issue's path (a client bug):
 * the right path is tested directly. One `N passed, N failed` line per resource at the end
 * (docs/clients.md).
 */
import { Gitlab } from "@gitbeaker/rest";
import crypto from "crypto";
import { startCluster, type Cluster } from "../../support/cluster";
import { prepareClientFixture, type ClientFixture } from "../../support/client-fixtures";
import { allPassed, Tally } from "../../support/client-walks";
import { client } from "../../support/http";
import { KeyFactory } from "../../support/ssh-keys";

let cluster: Cluster;
let f: ClientFixture;
let api: InstanceType<typeof Gitlab>;
let pid: number;
let web: string;
const keys = new KeyFactory();
const tally = new Tally();
const state: Record<string, number> = {};

/** One check of `resource`, counted. */
const check = (resource: string, name: string, fn: () => Promise<void>) => it(name, () => tally.check(resource, name, fn));
const sha256 = async (blob: Blob) =>
	crypto
		.createHash("sha256")
		.update(Buffer.from(await blob.arrayBuffer()))
		.digest("hex");
/** The status a rejected call of the client carries (its GitbeakerRequestError's response). */
async function statusOf(call: Promise<unknown>): Promise<number | "resolved"> {
	try {
		await call;
		return "resolved";
	} catch (err) {
		const status = (err as { cause?: { response?: Response } }).cause?.response?.status;
		if (status === undefined) throw err;
		return status;
	}
}
const v4 = (token = f.owner.token) => client(`${f.url}/api/v4`, token);
/**
 * Options the client sends as they are but its types do not list (a scope array, a label's new
 * name and colour at once, a null priority, a snippet's title on edit).
 */
const untyped = (options: Record<string, unknown>): object => options;
/** A downloaded file: a string when it came as text/*, else a Blob. */
const textOf = async (body: unknown) => (typeof body === "string" ? body : await (body as Blob).text());
const paths = (snippet: object) => (snippet as { files: { path: string }[] }).files.map(file => file.path);

beforeAll(async () => {
	cluster = await startCluster({ nodes: { api: "api", backend: "accounts,integrations,snippets,builds,deploy-keys,labels" }, ownGitlabUrl: true });
	for (const route of ["/projects/1/services/slack", "/projects/1/snippets", "/projects/1/deploy_keys", "/projects/1/labels", "/projects/1/builds"])
		await cluster.waitForRoute("GET", route);
	f = await prepareClientFixture(cluster, keys);
	api = new Gitlab({ host: f.url, token: f.owner.token });
	pid = f.project.id;
	web = `${f.url}/${f.project.path_with_namespace}`;
}, 180000);

afterAll(async () => {
	console.log(
		`@gitbeaker/rest 43.8.0 (v4)\n${tally
			.lines()
			.map(l => `  ${l}`)
			.join("\n")}`,
	);
	keys.cleanup();
	await cluster?.stop();
});

describe("accounts", () => {
	check("accounts", "Users.showCurrentUser and Users.all({ username })", async () => {
		expect(await api.Users.showCurrentUser()).toMatchObject({ id: f.owner.id, username: f.owner.username, state: "active" });
		expect((await api.Users.all({ username: f.member.username })).map(u => u.id)).toEqual([f.member.id]);
	});
	check("accounts", "Projects.create (201) and Projects.show", async () => {
		const made = await api.Projects.create({ name: f.new_project_name, visibility: "internal", showExpanded: true });
		expect([made.status, made.data.visibility, made.data.namespace.kind]).toEqual([201, "internal", "user"]);
		expect(await api.Projects.show(made.data.id)).toMatchObject({ id: made.data.id, name: f.new_project_name });
	});
	check("accounts", "ProjectMembers.add (201), show and all", async () => {
		const added = await api.ProjectMembers.add(pid, 30, { userId: f.member.id, showExpanded: true });
		expect([added.status, added.data.access_level]).toEqual([201, 30]);
		expect(await api.ProjectMembers.show(pid, f.member.id)).toMatchObject({ id: f.member.id, access_level: 30 });
		expect((await api.ProjectMembers.all(pid)).map(m => [m.id, m.access_level]).sort()).toEqual(
			[
				[f.owner.id, 50],
				[f.member.id, 30],
			].sort(),
		);
	});
});

describe("Anonymous", () => {
	/** The client without a token: what anyone reads. */
	const anonymous = () => new Gitlab({ host: f.url });
	check("Anonymous", "Projects.all and Projects.show: the public projects only, without permissions; 404 for another", async () => {
		const made = await api.Projects.create({ name: `${f.new_project_name} public`, visibility: "public" });
		await api.ProjectLabels.create(made.id, "bug", "#d9534f", { description: "needs a review" });
		await api.ProjectLabels.create(made.id, "docs", "#eeeeee");
		state.publicProject = made.id;
		const listed = (await anonymous().Projects.all()).map(p => p.id);
		expect([listed.includes(made.id), listed.includes(pid)]).toEqual([true, false]);
		const shown = await anonymous().Projects.show(made.id);
		expect([shown.id, shown.visibility, "permissions" in shown]).toEqual([made.id, "public", false]);
		expect(await statusOf(anonymous().Projects.show(pid))).toBe(404);
	});
	check("Anonymous", "ProjectLabels.all({ search }) of a public project", async () => {
		expect((await anonymous().ProjectLabels.all(state.publicProject)).map(l => [l.name, l.subscribed])).toEqual([
			["bug", false],
			["docs", false],
		]);
		expect((await anonymous().ProjectLabels.all(state.publicProject, { search: "review" })).map(l => l.name)).toEqual(["bug"]);
	});
	check("Anonymous", "the internal project's pipelines are 404 Project Not Found, a write 401", async () => {
		const refused = await anonymous()
			.Pipelines.all(pid)
			.then(
				() => undefined,
				(err: { cause?: { description?: string; response?: Response } }) => err.cause,
			);
		expect([refused?.response?.status, refused?.description]).toEqual([404, "404 Project Not Found"]);
		expect(await statusOf(anonymous().ProjectLabels.create(state.publicProject, "x", "#000000"))).toBe(401);
	});
});

describe("Pipelines", () => {
	check("Pipelines", "all lists one pipeline per commit and ref, newest first; all({ ref })", async () => {
		const all = await api.Pipelines.all(pid);
		expect(all.map(p => [p.sha, p.ref, p.status])).toEqual([
			[f.sha_b, "feature", "running"],
			[f.sha_a, "master", "failed"],
			[f.sha_c, "master", "success"],
		]);
		[state.featurePipeline, state.failedPipeline, state.successPipeline] = all.map(p => p.id);
		expect((await api.Pipelines.all(pid, { ref: "master" })).map(p => p.id)).toEqual([state.failedPipeline, state.successPipeline]);
	});
	check("Pipelines", "showLatest: the default branch's latest pipeline, or a ref's; 404 for a ref without one", async () => {
		expect(await api.Pipelines.showLatest(pid)).toMatchObject({ id: state.failedPipeline, ref: "master", sha: f.sha_a, status: "failed" });
		expect(await api.Pipelines.showLatest(pid, { ref: "feature" })).toMatchObject({ id: state.featurePipeline, ref: "feature" });
		expect(await statusOf(api.Pipelines.showLatest(pid, { ref: "no-such-branch" }))).toBe(404);
	});
	check("Pipelines", "show", async () => {
		expect(await api.Pipelines.show(pid, state.successPipeline)).toMatchObject({
			id: state.successPipeline,
			sha: f.sha_c,
			ref: "master",
			status: "success",
			web_url: `${web}/-/pipelines/${state.successPipeline}`,
		});
	});
});

describe("Jobs", () => {
	const all = [() => f.builds.lint, () => f.builds.rspec, () => f.builds.rubocop, () => f.builds.build];
	check("Jobs", "all lists every job, newest first, through the Link header", async () => {
		expect((await api.Jobs.all(pid, { perPage: 1 })).map(j => j.id)).toEqual(all.map(id => id()));
	});
	check("Jobs", "all({ scope }) filters by state", async () => {
		expect((await api.Jobs.all(pid, { ...untyped({ scope: ["running", "pending"] }) })).map(j => [j.id, j.status])).toEqual([
			[f.builds.lint, "pending"],
			[f.builds.rspec, "running"],
		]);
	});
	check("Jobs", "all({ pipelineId }) lists a pipeline's jobs", async () => {
		expect((await api.Jobs.all(pid, { pipelineId: state.featurePipeline })).map(j => j.id)).toEqual([f.builds.lint, f.builds.rspec]);
	});
	check("Jobs", "all({ pagination: keyset }) walks keyset pages", async () => {
		const got = await api.Jobs.all(pid, { pagination: "keyset", orderBy: "id", sort: "desc", perPage: 3 });
		expect(got.map(j => j.id)).toEqual(all.map(id => id()));
	});
	check("Jobs", "show reads a job with v4's fields", async () => {
		const job = await api.Jobs.show(pid, f.builds.rubocop);
		expect(job).toMatchObject({
			id: f.builds.rubocop,
			name: "rubocop",
			status: "failed",
			stage: "test",
			ref: "master",
			tag: false,
			web_url: `${web}/-/jobs/${f.builds.rubocop}`,
			commit: { id: f.sha_a },
			pipeline: { id: state.failedPipeline, project_id: pid, ref: "master", sha: f.sha_a, status: "failed" },
			user: { id: f.owner.id },
			artifacts_file: { filename: "rubocop-artifacts.zip", size: f.artifacts.rubocop.size },
		});
		expect(job.artifacts).toContainEqual({ file_type: "archive", size: f.artifacts.rubocop.size, filename: "rubocop-artifacts.zip", file_format: "zip" });
	});
	check("Jobs", "showLog reads the log as text", async () => {
		expect(await api.Jobs.showLog(pid, f.builds.rubocop)).toBe(f.trace);
	});
});

describe("JobArtifacts", () => {
	check("JobArtifacts", "downloadArchive({ jobId })", async () => {
		expect(await sha256(await api.JobArtifacts.downloadArchive(pid, { jobId: f.builds.rubocop }))).toBe(f.artifacts.rubocop.sha256);
	});
	check("JobArtifacts", "downloadArchive({ jobId, artifactPath }) reads one file", async () => {
		const file = await api.JobArtifacts.downloadArchive(pid, { jobId: f.builds.rubocop, artifactPath: "report/summary.txt" });
		expect(await textOf(file)).toBe(f.artifacts.rubocop.files["report/summary.txt"]);
	});
	check("JobArtifacts", "downloadArchive({ ref, job }) takes the latest successful pipeline of the ref", async () => {
		expect(await sha256(await api.JobArtifacts.downloadArchive(pid, { ref: "master", job: "build" }))).toBe(f.artifacts.build.sha256);
		expect(await statusOf(api.JobArtifacts.downloadArchive(pid, { ref: "master", job: "rubocop" }))).toBe(404);
	});
	check("JobArtifacts", "downloadArchive({ ref, job, artifactPath }) reads one file of it (the path sent %2F-encoded)", async () => {
		const file = await api.JobArtifacts.downloadArchive(pid, { ref: "master", job: "build", artifactPath: "dist/app.txt" });
		expect(await textOf(file)).toBe("app v1\n");
	});
	check("JobArtifacts", "keep (200)", async () => {
		const kept = await api.JobArtifacts.keep(pid, f.builds.build, { showExpanded: true });
		expect([kept.status, kept.data.id]).toEqual([200, f.builds.build]);
	});
	check("JobArtifacts", "remove({ jobId }) (204)", async () => {
		expect((await api.JobArtifacts.remove(pid, { jobId: f.builds.build, showExpanded: true })).status).toBe(204);
		expect(await statusOf(api.JobArtifacts.downloadArchive(pid, { jobId: f.builds.build }))).toBe(404);
	});
});

describe("Jobs: changes", () => {
	check("Jobs", "cancel (201)", async () => {
		const res = await api.Jobs.cancel(pid, f.builds.rspec, { showExpanded: true });
		expect([res.status, res.data.status]).toEqual([201, "canceled"]);
	});
	check("Jobs", "retry (201) makes a new pending job in the same pipeline", async () => {
		const res = await api.Jobs.retry(pid, f.builds.rspec, { showExpanded: true });
		expect([res.status, res.data.name, res.data.status, res.data.pipeline.id]).toEqual([201, "rspec", "pending", state.featurePipeline]);
	});
	check("Jobs", "erase (201) removes the log and the artifacts", async () => {
		const res = await api.Jobs.erase(pid, f.builds.rubocop, { showExpanded: true });
		expect([res.status, res.data.id]).toEqual([201, f.builds.rubocop]);
		expect(await statusOf(api.JobArtifacts.downloadArchive(pid, { jobId: f.builds.rubocop }))).toBe(404);
	});
});

describe("ProjectLabels", () => {
	check("ProjectLabels", "create (201) with v4's fields", async () => {
		const res = await api.ProjectLabels.create(pid, "needs review", "#FF0000", { description: "to read", priority: 2, showExpanded: true });
		expect(res.status).toBe(201);
		expect(res.data).toMatchObject({
			name: "needs review",
			color: "#FF0000",
			text_color: "#FFFFFF",
			subscribed: false,
			priority: 2,
			is_project_label: true,
		});
		state.label = res.data.id;
	});
	check("ProjectLabels", "all({ search }) lists what the search finds only; withCounts adds the counts", async () => {
		await api.ProjectLabels.create(pid, "wontfix", "#CCCCCC", { description: "never" });
		expect((await api.ProjectLabels.all(pid, { search: "review" })).map(l => l.name)).toEqual(["needs review"]);
		const counted = await api.ProjectLabels.all(pid, { withCounts: true, search: "wontfix" });
		expect(counted.map(l => [l.name, l.open_issues_count, l.closed_issues_count, l.open_merge_requests_count])).toEqual([["wontfix", 0, 0, 0]]);
		for (const label of await api.ProjectLabels.all(pid, { search: "wontfix" })) await api.ProjectLabels.remove(pid, label.id);
		expect((await api.ProjectLabels.all(pid)).map(l => l.name)).toEqual(["needs review"]);
	});
	check("ProjectLabels", "all, and show by title and by id", async () => {
		expect((await api.ProjectLabels.all(pid)).map(l => l.id)).toEqual([state.label]);
		expect((await api.ProjectLabels.show(pid, "needs review")).id).toBe(state.label);
		expect((await api.ProjectLabels.show(pid, state.label)).name).toBe("needs review");
	});
	check("ProjectLabels", "edit by id (200)", async () => {
		const res = await api.ProjectLabels.edit(pid, state.label, {
			newName: "reviewed",
			...untyped({ color: "#00FF00", priority: null }),
			showExpanded: true,
		});
		expect([res.status, res.data.name, res.data.color, res.data.priority]).toEqual([200, "reviewed", "#00FF00", null]);
	});
	check("ProjectLabels", "subscribe posts to /issues/:id/subscribe (client bug): 404, the label unchanged", async () => {
		expect(await statusOf(api.ProjectLabels.subscribe(pid, state.label))).toBe(404);
		expect(await statusOf(api.ProjectLabels.unsubscribe(pid, state.label))).toBe(404);
		expect((await api.ProjectLabels.show(pid, state.label)).subscribed).toBe(false);
	});
	check("ProjectLabels", "the right path, directly: subscribe 201, again 304; unsubscribe 201, again 304", async () => {
		const path = `/projects/${pid}/labels/${state.label}`;
		const on = await v4().post(`${path}/subscribe`);
		expect([on.status, on.body.subscribed]).toEqual([201, true]);
		expect([(await v4().post(`${path}/subscribe`)).status, (await v4().post(`${path}/subscribe`)).text]).toEqual([304, ""]);
		const off = await v4().post(`${path}/unsubscribe`);
		expect([off.status, off.body.subscribed]).toEqual([201, false]);
		expect((await v4().post(`${path}/unsubscribe`)).status).toBe(304);
	});
	check("ProjectLabels", "remove (204)", async () => {
		expect((await api.ProjectLabels.remove(pid, state.label, { showExpanded: true })).status).toBe(204);
		expect(await api.ProjectLabels.all(pid)).toEqual([]);
	});
});

describe("DeployKeys", () => {
	check("DeployKeys", "create (201) a key that may push", async () => {
		const res = await api.DeployKeys.create(pid, "from gitbeaker", f.new_key, { canPush: true, showExpanded: true });
		expect([res.status, res.data.title, res.data.key, res.data.can_push]).toEqual([201, "from gitbeaker", f.new_key, true]);
		expect(res.data.fingerprint_sha256).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
		state.key = res.data.id;
	});
	check("DeployKeys", "show and edit (200)", async () => {
		const res = await api.DeployKeys.edit(pid, state.key, { title: "renamed", canPush: false, showExpanded: true });
		expect([res.status, res.data.title, res.data.can_push]).toEqual([200, "renamed", false]);
		expect(await api.DeployKeys.show(pid, state.key)).toMatchObject({ id: state.key, title: "renamed", can_push: false });
	});
	check("DeployKeys", "enable (201) another project's key; all({ projectId })", async () => {
		const res = await api.DeployKeys.enable(pid, f.other_key.id, { showExpanded: true });
		expect([res.status, res.data.id]).toEqual([201, f.other_key.id]);
		expect((await api.DeployKeys.all({ projectId: pid })).map(k => k.id).sort()).toEqual([state.key, f.other_key.id].sort());
	});
	check("DeployKeys", "all() lists the instance's keys for an admin, 403 for others", async () => {
		const root = new Gitlab({ host: f.url, token: f.root_token });
		expect((await root.DeployKeys.all()).map(k => k.id)).toEqual(expect.arrayContaining([state.key, f.other_key.id]));
		expect(await statusOf(api.DeployKeys.all())).toBe(403);
	});
	check("DeployKeys", "remove (204)", async () => {
		expect((await api.DeployKeys.remove(pid, state.key, { showExpanded: true })).status).toBe(204);
		expect((await api.DeployKeys.all({ projectId: pid })).map(k => k.id)).toEqual([f.other_key.id]);
	});
});

describe("Integrations", () => {
	check("Integrations", "edit (200) slack with its notification settings and flags, and show every one back but the webhook", async () => {
		const res = await api.Integrations.edit(pid, "slack", {
			...untyped({
				webhook: "https://hooks.example.com/gb",
				username: "gb-bot",
				channel: "#gb",
				notifyOnlyBrokenPipelines: false,
				branchesToBeNotified: "all",
				tagPushChannel: "#tags",
				tagPushEvents: false,
				incidentEvents: true,
			}),
			showExpanded: true,
		});
		expect([res.status, res.data.slug, res.data.active, res.data.tag_push_events]).toEqual([200, "slack", true, false]);
		const slack = await api.Integrations.show(pid, "slack");
		expect(slack).toMatchObject({
			slug: "slack",
			active: true,
			tag_push_events: false,
			incident_events: true,
			properties: { username: "gb-bot", channel: "#gb", notify_only_broken_pipelines: false, branches_to_be_notified: "all", tag_push_channel: "#tags" },
		});
		expect(slack.properties).not.toHaveProperty("webhook");
	});
	check("Integrations", "edit jira with url, username and password; shown without the password", async () => {
		await api.Integrations.edit(pid, "jira", { ...untyped({ url: "https://jira.example.com", username: "gb-bot", password: "jira-secret" }) });
		const jira = await api.Integrations.show(pid, "jira");
		expect(jira).toMatchObject({ slug: "jira", active: true, properties: { url: "https://jira.example.com", username: "gb-bot", jira_auth_type: 0 } });
		expect(jira.properties).not.toHaveProperty("password");
	});
	check("Integrations", "a secret is never shown (asana's api_key)", async () => {
		await api.Integrations.edit(pid, "asana", { apiKey: "asana-secret", restrictToBranch: "master" });
		expect((await api.Integrations.show(pid, "asana")).properties).toEqual({ restrict_to_branch: "master" });
	});
	check("Integrations", "all lists the active ones", async () => {
		expect((await api.Integrations.all(pid)).map(i => i.slug).sort()).toEqual(["asana", "jira", "slack"]);
	});
	check("Integrations", "disable (204)", async () => {
		expect((await api.Integrations.disable(pid, "slack", { showExpanded: true })).status).toBe(204);
		expect(await api.Integrations.show(pid, "slack")).toMatchObject({ slug: "slack", active: false });
		expect((await api.Integrations.all(pid)).map(i => i.slug).sort()).toEqual(["asana", "jira"]);
	});
});

describe("ProjectSnippets", () => {
	check("ProjectSnippets", "create (201) with files", async () => {
		const files = [
			{ filePath: "hello.js", content: "console.log(1)\n" },
			{ filePath: "docs/README.md", content: "# hi\n" },
		];
		const res = await api.ProjectSnippets.create(pid, "two files", { visibility: "internal", files, showExpanded: true });
		expect(res.status).toBe(201);
		expect(res.data).toMatchObject({ title: "two files", visibility: "internal", file_name: "hello.js", web_url: `${web}/-/snippets/${res.data.id}` });
		expect(paths(res.data)).toEqual(["hello.js", "docs/README.md"]);
		state.snippet = res.data.id;
	});
	check("ProjectSnippets", "create with the deprecated fileName and content", async () => {
		const made = await api.ProjectSnippets.create(pid, "one file", { visibility: "private", ...untyped({ fileName: "one.js", content: "1\n" }) });
		expect([made.file_name, made.visibility, await api.ProjectSnippets.showContent(pid, made.id)]).toEqual(["one.js", "private", "1\n"]);
		state.oldSnippet = made.id;
	});
	check("ProjectSnippets", "all and show", async () => {
		expect((await api.ProjectSnippets.all(pid)).map(s => s.id).sort()).toEqual([state.snippet, state.oldSnippet].sort());
		expect(await api.ProjectSnippets.show(pid, state.snippet)).toMatchObject({ id: state.snippet, author: { id: f.owner.id } });
	});
	check("ProjectSnippets", "showContent reads the first file; showRepositoryFileContent any file", async () => {
		expect(await api.ProjectSnippets.showContent(pid, state.snippet)).toBe("console.log(1)\n");
		expect(await api.ProjectSnippets.showRepositoryFileContent(pid, state.snippet, "main", "docs/README.md")).toBe("# hi\n");
	});
	check("ProjectSnippets", "edit (200) updates, moves and deletes files", async () => {
		const files = [
			{ action: "update", filePath: "hello.js", content: "console.log(2)\n" },
			{ action: "move", previousPath: "docs/README.md", filePath: "README.md" },
		] as const;
		const res = await api.ProjectSnippets.edit(pid, state.snippet, { ...untyped({ title: "edited" }), files: [...files], showExpanded: true });
		expect([res.status, res.data.title, paths(res.data)]).toEqual([200, "edited", ["hello.js", "README.md"]]);
		await api.ProjectSnippets.edit(pid, state.snippet, { files: [{ action: "delete", filePath: "README.md" }] });
		expect(paths(await api.ProjectSnippets.show(pid, state.snippet))).toEqual(["hello.js"]);
		expect(await api.ProjectSnippets.showContent(pid, state.snippet)).toBe("console.log(2)\n");
	});
	check("ProjectSnippets", "remove (204)", async () => {
		expect((await api.ProjectSnippets.remove(pid, state.snippet, { showExpanded: true })).status).toBe(204);
		expect(await statusOf(api.ProjectSnippets.show(pid, state.snippet))).toBe(404);
	});
});

it("every resource passed every call", () => {
	expect(tally.summary()).toEqual(
		allPassed({ accounts: 3, Anonymous: 3, Pipelines: 3, Jobs: 9, JobArtifacts: 6, ProjectLabels: 7, DeployKeys: 5, Integrations: 5, ProjectSnippets: 6 }),
	);
});
