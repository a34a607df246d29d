/**
 * Real v4 clients against /api/v4, on the gateway and the services as separate processes over the
 * real NATS, each on a project of its own made through v3 (the same data a script meets when it
 * moves): python-gitlab (the current release) and the ruby-gitlab gem with its endpoint at
 * /api/v4. Each walk checks every call as it goes and prints `N passed, N failed` per resource
 * (test/support/python-gitlab/v4_walk.py, test/support/ruby-gitlab-v4.rb; docs/clients.md).
 */
import path from "path";
import { startCluster, type Cluster } from "../../support/cluster";
import { prepareClientFixture } from "../../support/client-fixtures";
import { allPassed, readWalk, runWalk } from "../../support/client-walks";
import { runPythonWalk } from "../../support/python-clients";
import { KeyFactory } from "../../support/ssh-keys";

let cluster: Cluster;
const keys = new KeyFactory();

beforeAll(async () => {
	cluster = await startCluster({ nodes: { api: "api", backend: "accounts,integrations,snippets,builds,deploy-keys,labels" }, ownGitlabUrl: true });
	for (const route of ["/projects/1/services/slack", "/projects/1/snippets", "/projects/1/deploy_keys", "/projects/1/labels", "/projects/1/builds"])
		await cluster.waitForRoute("GET", route);
}, 180000);

afterAll(async () => {
	keys.cleanup();
	await cluster?.stop();
});

it("python-gitlab 8.6.0 against /api/v4: every call of the walk passes", async () => {
	const walk = readWalk("python-gitlab 8.6.0 (v4)", await runPythonWalk("8.6.0", "v4_walk.py", await prepareClientFixture(cluster, keys)));
	expect(walk.outcome).toEqual({ code: 0, stderr: "", failures: [] });
	expect(walk.summary).toEqual(
		allPassed({
			users: 3,
			projects: 3,
			anonymous: 3,
			members: 3,
			jobs: 10,
			pipelines: 5,
			artifacts: 6,
			labels: 8,
			deploy_keys: 5,
			integrations: 7,
			snippets: 6,
		}),
	);
});

it("ruby-gitlab 4.17.0 with its endpoint at /api/v4: every call of the walk passes", async () => {
	const fixture = await prepareClientFixture(cluster, keys);
	const walk = readWalk("ruby-gitlab 4.17.0 (v4)", await runWalk("ruby", [path.join(__dirname, "../../support/ruby-gitlab-v4.rb")], fixture));
	expect(walk.outcome).toEqual({ code: 0, stderr: "", failures: [] });
	expect(walk.summary).toEqual(allPassed({ accounts: 2, jobs: 14, labels: 5, deploy_keys: 5, services: 3, snippets: 5 }));
});
