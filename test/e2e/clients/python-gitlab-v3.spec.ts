/**
 * A second real v3 client beside ruby-gitlab: python-gitlab 1.4.0, the last release that speaks
 * API v3, walks users, projects, members, builds, labels, deploy keys, services and snippets
 * against the gateway and the services as separate processes over the real NATS
 * (test/support/python-gitlab/v3_walk.py checks each call; docs/clients.md).
 */
import { startCluster, type Cluster } from "../../support/cluster";
import { prepareClientFixture } from "../../support/client-fixtures";
import { allPassed, readWalk } from "../../support/client-walks";
import { runPythonWalk } from "../../support/python-clients";
import { KeyFactory } from "../../support/ssh-keys";

let cluster: Cluster;
const keys = new KeyFactory();

beforeAll(async () => {
	cluster = await startCluster({ nodes: { api: "api", backend: "accounts,integrations,snippets,builds,deploy-keys,labels" } });
	for (const route of ["/projects/1/services/slack", "/projects/1/snippets", "/projects/1/deploy_keys", "/projects/1/labels", "/projects/1/builds"])
		await cluster.waitForRoute("GET", route);
}, 180000);

afterAll(async () => {
	keys.cleanup();
	await cluster?.stop();
});

it("python-gitlab 1.4.0 against /api/v3: every call of the walk passes", async () => {
	const fixture = await prepareClientFixture(cluster, keys);
	const walk = readWalk("python-gitlab 1.4.0 (v3)", await runPythonWalk("1.4.0", "v3_walk.py", fixture));
	expect(walk.outcome).toEqual({ code: 0, stderr: "", failures: [] });
	expect(walk.summary).toEqual(allPassed({ users: 4, projects: 3, members: 3, builds: 10, labels: 5, deploy_keys: 6, services: 3, snippets: 4 }));
});
