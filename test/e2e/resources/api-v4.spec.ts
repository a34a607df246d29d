/**
 * API v4 beside v3 with the gateway and every service in separate processes over the real NATS
 * (Redis as cacher), as production runs: each action's parameter schema reaches the gateway as
 * JSON, so every v4 route is called here with the parameters that shape it (booleans, scopes,
 * keyset, files[]). Every v4 route refuses a caller without a token but the reads of public
 * projects, which find no private one, and a stranger finds none either; then one walk through each
 * resource, the same data seen from v3.
 */
import { v4RouteTables } from "../../../gateway/routes";
import { storedZip } from "../../../scripts/zip";
import { internalApi, SHA_A, SHA_B } from "../../support/builds";
import { startCluster, type Cluster } from "../../support/cluster";
import { createUser, type TestUser } from "../../support/fixtures";
import { client, type Client } from "../../support/http";
import { KeyFactory } from "../../support/ssh-keys";

let cluster: Cluster;
let owner: TestUser;
let stranger: TestUser;
let v4: Client;
let projectId: number;
const v4Url = () => cluster.url.replace(/\/api\/v3$/, "/api/v4");
const v4As = (token: string | null) => client(v4Url(), token ?? undefined);

/** Every v4 route, its path parameters filled in. */
function v4Routes(project: number): { method: string; path: string }[] {
	return v4RouteTables.flatMap(t =>
		Object.keys(t.api ?? {}).map(alias => {
			const [method, template] = alias.split(/\s+/);
			const path = template.replace(":id", String(project)).replace(/\*\w+/g, "a").replace(/:\w+/g, "1");
			return { method, path };
		}),
	);
}

beforeAll(async () => {
	cluster = await startCluster({ nodes: { api: "api", accounts: "accounts", services: "labels,deploy-keys,snippets,builds,integrations" } });
	await cluster.waitForRoute("GET", "/projects/1/builds");
	await cluster.waitForRoute("GET", "/projects/1/services/emails-on-push");
	owner = await createUser(cluster.api());
	stranger = await createUser(cluster.api());
	v4 = v4As(owner.token);
	const project = await v4.post("/projects", { body: { name: "vee four", visibility: "private" } });
	expect(project.status).toBe(201);
	projectId = project.body.id;
}, 120000);

afterAll(async () => {
	await cluster?.stop();
});

/**
 * The v4 routes that read a public project without a token (docs/api.md#v4-anonymous), written out
 * here rather than read from the actions: a route added to the list or left out is a failure.
 */
const ANONYMOUS_READS = new Set([
	"GET /projects",
	"GET /projects/:id",
	"GET /projects/:id/labels",
	"GET /projects/:id/labels/:label_id",
	"GET /projects/:id/snippets",
	"GET /projects/:id/snippets/:snippet_id",
	"GET /projects/:id/snippets/:snippet_id/raw",
	"GET /projects/:id/snippets/:snippet_id/files/:ref/:file_path/raw",
	"GET /projects/:id/jobs",
	"GET /projects/:id/jobs/:job_id",
	"GET /projects/:id/jobs/:job_id/trace",
	"GET /projects/:id/jobs/:job_id/artifacts",
	"GET /projects/:id/jobs/:job_id/artifacts/*artifact_path",
	"GET /projects/:id/jobs/artifacts/*ref_name/download",
	"GET /projects/:id/jobs/artifacts/*ref_name/raw/*artifact_path",
	"GET /projects/:id/pipelines",
	"GET /projects/:id/pipelines/latest",
	"GET /projects/:id/pipelines/:pipeline_id",
	"GET /projects/:id/pipelines/:pipeline_id/jobs",
]);

it("refuses every v4 route without a token but the public reads, which find no private project; a stranger finds none either", async () => {
	const routes = v4Routes(projectId);
	expect(routes.length).toBeGreaterThan(50);
	const templates = v4RouteTables.flatMap(t => Object.keys(t.api ?? {}).map(alias => alias.split(/\s+/).join(" ")));
	for (const read of ANONYMOUS_READS) expect([read, templates.includes(read)]).toEqual([read, true]);
	for (const [i, { method, path }] of routes.entries()) {
		const res = await v4As(null).request(method, path);
		const expected =
			templates[i] === "GET /projects"
				? [200, expect.any(Array)]
				: ANONYMOUS_READS.has(templates[i])
					? [404, { message: "404 Project Not Found" }]
					: [401, { message: "401 Unauthorized" }];
		expect([method, path, res.status, res.body]).toEqual([method, path, ...expected]);
	}
	// The private project is none of the public ones an anonymous caller lists.
	expect((await v4As(null).get("/projects")).body.map((p: { id: number }) => p.id)).not.toContain(projectId);
	for (const { method, path } of routes.filter(r => r.path.startsWith(`/projects/${projectId}/`))) {
		const res = await v4As(stranger.token).request(method, path);
		expect([method, path, res.status]).toEqual([method, path, 404]);
	}
});

it("serves labels, deploy keys, integrations and snippets over the transporter, with the parameters that shape them", async () => {
	expect((await v4.post(`/projects/${projectId}/labels`, { body: { name: "bug", color: "#d9534f", priority: 1 } })).status).toBe(201);
	const labels = await v4.get(`/projects/${projectId}/labels`, { query: { with_counts: "True" } });
	expect([labels.status, labels.body[0].open_issues_count, labels.headers.get("x-total")]).toEqual([200, 0, "1"]);
	expect((await v4.post(`/projects/${projectId}/labels/bug/subscribe`)).status).toBe(201);
	expect((await v4.post(`/projects/${projectId}/labels/bug/subscribe`)).status).toBe(304);

	const keys = new KeyFactory();
	try {
		const key = await keys.generate("ed25519");
		const made = await v4.post(`/projects/${projectId}/deploy_keys`, { form: { title: "ci", key: key.line, can_push: "true" } });
		expect([made.status, made.body.can_push, made.body.fingerprint]).toEqual([201, true, key.fingerprint]);
		expect((await v4As(cluster.rootToken).get("/deploy_keys", { query: { public: "false" } })).status).toBe(200);
	} finally {
		keys.cleanup();
	}

	const slack = await v4.put(`/projects/${projectId}/integrations/slack`, { body: { webhook: "https://hooks.example.com/x", pipeline_events: false } });
	expect([slack.status, slack.body.slug, slack.body.pipeline_events]).toEqual([200, "slack", false]);
	expect((await cluster.api(owner.token).get(`/projects/${projectId}/services/team-chat`)).body.properties).toEqual({
		webhook: "https://hooks.example.com/x",
	});

	const snippet = await v4.post(`/projects/${projectId}/snippets`, {
		body: {
			title: "t",
			visibility: "private",
			files: [
				{ file_path: "a.rb", content: "puts 1" },
				{ file_path: "b.md", content: "# b" },
			],
		},
	});
	expect([snippet.status, snippet.body.files.length]).toEqual([201, 2]);
	expect((await v4.get(`/projects/${projectId}/snippets/${snippet.body.id}/files/main/b.md/raw`)).text).toBe("# b");
	expect((await cluster.api(owner.token).get(`/projects/${projectId}/snippets/${snippet.body.id}`)).body.file_name).toBe("a.rb");
	expect((await v4.del(`/projects/${projectId}/snippets/${snippet.body.id}`, { body: {} })).status).toBe(204);
});

it("answers a page from the Redis cache as the first time: the same rows and pagination headers, v3's lists too", async () => {
	const ci = internalApi(cluster.url, cluster.internalSecret);
	for (let i = 0; i < 3; i++) await ci.build({ project_id: projectId, name: `paged${i}`, sha: SHA_A });
	for (const url of [
		`${v4Url()}/projects/${projectId}/labels`,
		`${v4Url()}/projects/${projectId}/jobs?per_page=2&page=2`,
		`${cluster.url}/projects/${projectId}/builds?per_page=2`,
	]) {
		const first = await fetch(url, { headers: { "PRIVATE-TOKEN": owner.token } });
		const firstText = await first.text();
		const again = await fetch(url, { headers: { "PRIVATE-TOKEN": owner.token } });
		expect([url, await again.text()]).toEqual([url, firstText]);
		for (const name of ["content-type", "x-total", "x-page", "x-per-page", "x-next-page", "link"])
			expect([url, name, again.headers.get(name)]).toEqual([url, name, first.headers.get(name)]);
	}
});

it("serves jobs, keyset pages, pipelines and one file of the artifacts over the transporter", async () => {
	const ci = internalApi(cluster.url, cluster.internalSecret);
	const ids: number[] = [];
	for (let i = 0; i < 5; i++) ids.push(await ci.build({ project_id: projectId, name: `job${i}`, sha: SHA_B }));
	await ci.drive(ids[0], "success");
	expect((await ci.upload(ids[0], storedZip([{ name: "dir/out.txt", data: Buffer.from("made by job0") }]))).status).toBe(200);

	// Keyset pages walked by their Links give what one offset page of all of them gives.
	const all = (await v4.get(`/projects/${projectId}/jobs`, { query: { per_page: 100 } })).body.map((j: { id: number }) => j.id);
	expect(all.slice(0, 5)).toEqual([...ids].reverse());
	const walked: number[] = [];
	let url: string | null = `${v4Url()}/projects/${projectId}/jobs?pagination=keyset&order_by=id&sort=desc&per_page=3`;
	while (url) {
		const res = await fetch(url, { headers: { "PRIVATE-TOKEN": owner.token } });
		walked.push(...((await res.json()) as { id: number }[]).map(j => j.id));
		const link = res.headers.get("link");
		url = link ? /^<([^>]+)>; rel="next"$/.exec(link)![1] : null;
	}
	expect(walked).toEqual(all);
	expect((await v4.get(`/projects/${projectId}/jobs`, { query: { "scope[]": ["success"] } })).body.map((j: { id: number }) => j.id)).toEqual([ids[0]]);

	const pipeline = (await v4.get(`/projects/${projectId}/jobs/${ids[0]}`)).body.pipeline;
	expect(pipeline.status).toBe("running");
	const jobs = await v4.get(`/projects/${projectId}/pipelines/${pipeline.id}/jobs`, { query: { include_retried: "True", "scope[]": ["pending"] } });
	expect(jobs.body.map((j: { id: number }) => j.id)).toEqual([ids[4], ids[3], ids[2], ids[1]]);
	expect((await v4.get(`/projects/${projectId}/pipelines`, { query: { scope: "running" } })).body.map((p: { id: number }) => p.id)).toEqual([pipeline.id]);

	const file = await v4.get(`/projects/${projectId}/jobs/${ids[0]}/artifacts/dir/out.txt`);
	expect([file.status, file.text]).toEqual([200, "made by job0"]);
	expect((await v4.del(`/projects/${projectId}/jobs/${ids[0]}/artifacts`, { body: {} })).status).toBe(204);
	// v3 sees the same build without its artifacts.
	expect((await cluster.api(owner.token).get(`/projects/${projectId}/builds/${ids[0]}`)).body.artifacts_file).toBeNull();
});
