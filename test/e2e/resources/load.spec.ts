/**
 * Sustained mixed load: reads and writes across every resource (accounts, members, labels, deploy
 * keys, snippets, builds with traces and artifacts, integrations, push events) from several
 * clients at once, for a bounded time, against the gateway and all services as processes over the
 * real NATS with the Redis cacher. Every answer must be the expected one (no error of any kind),
 * and no process may hold more memory after the run than after the warm-up.
 *
 * Memory is measured where a leak shows, not as RSS: each process runs with its inspector, and
 * after the warm-up and after the run (with no request in flight) the test has it collect its
 * garbage and reads its live heap and the memory outside it (buffers). RSS keeps the high-water
 * mark of V8's heap sizing, which lets the old generation grow to a few times the live data
 * between full collections; it is printed, not asserted.
 *
 * The data set is kept steady (what is created is deleted again, except builds, which have no
 * delete: about two thousand small documents a run), so that growth would mean a leak, not more
 * data held by the store.
 */
import { liveMemory, rssBytes, serviceNames } from "../../support/processes";
import { internalApi } from "../../support/builds";
import { startCluster, type Cluster } from "../../support/cluster";
import { createUser, type TestUser } from "../../support/fixtures";
import { client, type Client, type Reply } from "../../support/http";
import { seedProject } from "../../support/project-fixtures";
import { pushBody } from "../../support/push-fixtures";
import { KeyFactory } from "../../support/ssh-keys";

const WARMUP_MS = 8000;
const RUN_MS = 36000;
const CLIENTS = 6;
const SAMPLE_EVERY_MS = 500;
/**
 * Allowed growth of the live heap and of the memory outside it from the warm-up to the end: the
 * builds the run adds and code the JIT compiles later (0–5 MB measured); a leak of a kilobyte per
 * operation (over 20 MB in a run, about 22,000 operations on two cores) is well over it.
 */
const MAX_GROWTH_RATIO = 1.1;
const MAX_GROWTH_BYTES = 12 * 1024 * 1024;
const MB = 2 ** 20;

let cluster: Cluster;
let owner: TestUser;
let ids: Record<string, string>;
const keys = new KeyFactory();
let keyPool: string[] = [];

interface Op {
	name: string;
	weight: number;
	run(api: Client, n: number): Promise<void>;
}

function expectStatus(what: string, reply: Reply, ...ok: number[]): Reply {
	if (!ok.includes(reply.status)) throw new Error(`${what}: ${reply.status} ${reply.text.slice(0, 200)}`);
	return reply;
}

function operations(): Op[] {
	const p = `/projects/${ids.id}`;
	const ci = () => internalApi(cluster.url, cluster.internalSecret);
	return [
		{ name: "GET labels", weight: 8, run: async api => void expectStatus("list labels", await api.get(`${p}/labels`), 200) },
		{
			name: "label create/update/delete",
			weight: 3,
			run: async (api, n) => {
				const name = `load-${n}`;
				expectStatus("create label", await api.post(`${p}/labels`, { body: { name, color: "#123456" } }), 200);
				expectStatus("update label", await api.put(`${p}/labels`, { body: { name, color: "#654321" } }), 200);
				expectStatus("delete label", await api.del(`${p}/labels`, { query: { name } }), 200);
			},
		},
		{ name: "GET project", weight: 3, run: async api => void expectStatus("project", await api.get(p), 200) },
		{ name: "GET user", weight: 2, run: async api => void expectStatus("user", await api.get("/user"), 200) },
		{ name: "GET members", weight: 2, run: async api => void expectStatus("members", await api.get(`${p}/members`), 200) },
		{
			name: "member update",
			weight: 1,
			run: async (api, n) =>
				void expectStatus("member update", await api.put(`${p}/members/${ids.user_id}`, { body: { access_level: 20 + (n % 2) * 10 } }), 200),
		},
		{ name: "GET deploy keys", weight: 3, run: async api => void expectStatus("keys", await api.get(`${p}/deploy_keys`), 200) },
		{
			name: "deploy key add/delete",
			weight: 1,
			run: async (api, n) => {
				const body = { title: `k${n}`, key: keyPool[n % keyPool.length] };
				const created = expectStatus("add key", await api.post(`${p}/deploy_keys`, { body }), 201, 400);
				// Another client may hold the same pooled key right now (400: fingerprint taken).
				if (created.status === 201) expectStatus("delete key", await api.del(`${p}/deploy_keys/${created.body.id}`), 200);
			},
		},
		{ name: "GET snippets", weight: 3, run: async api => void expectStatus("snippets", await api.get(`${p}/snippets`), 200) },
		{
			name: "snippet lifecycle",
			weight: 2,
			run: async (api, n) => {
				const s = expectStatus(
					"create snippet",
					await api.post(`${p}/snippets`, { body: { title: `s${n}`, file_name: "a.rb", code: `puts ${n}`, visibility_level: 0 } }),
					201,
				);
				expectStatus("get snippet", await api.get(`${p}/snippets/${s.body.id}`), 200);
				const raw = expectStatus("raw snippet", await api.get(`${p}/snippets/${s.body.id}/raw`), 200);
				if (raw.text !== `puts ${n}`) throw new Error(`raw snippet: ${raw.text}`);
				expectStatus("update snippet", await api.put(`${p}/snippets/${s.body.id}`, { body: { code: `puts ${n + 1}` } }), 200);
				expectStatus("delete snippet", await api.del(`${p}/snippets/${s.body.id}`), 200);
			},
		},
		{ name: "GET builds", weight: 4, run: async api => void expectStatus("builds", await api.get(`${p}/builds`, { query: { per_page: 20 } }), 200) },
		{ name: "GET build", weight: 2, run: async api => void expectStatus("build", await api.get(`${p}/builds/${ids.build_id}`), 200) },
		{
			name: "build lifecycle",
			weight: 2,
			run: async (api, n) => {
				const c = ci();
				const id = await c.build({ project_id: Number(ids.id), name: `job-${n}` });
				expectStatus("running", await c.state(id, "running"), 200);
				expectStatus(
					"trace",
					await c.raw.patch(`/internal/builds/${id}/trace`, { headers: { ...c.headers, "Content-Type": "text/plain" }, body: `line ${n}\n` }),
					200,
				);
				expectStatus("success", await c.state(id, "success"), 200);
				expectStatus("trace read", await api.get(`${p}/builds/${id}/trace`), 200);
				if (n % 3 === 0) expectStatus("retry", await api.post(`${p}/builds/${id}/retry`), 201);
			},
		},
		{
			name: "artifacts up and down",
			weight: 1,
			run: async (api, n) => {
				const c = ci();
				const id = await c.build({ project_id: Number(ids.id), name: `art-${n}` });
				const body = Buffer.alloc(64 * 1024, n % 251);
				const up = await fetch(`${cluster.url}/internal/builds/${id}/artifacts?filename=a${n}.zip`, {
					method: "PUT",
					headers: { ...c.headers, "Content-Type": "application/octet-stream" },
					body,
				});
				if (up.status !== 200) throw new Error(`upload: ${up.status} ${await up.text()}`);
				const down = await fetch(`${cluster.url}${p}/builds/${id}/artifacts`, { headers: { "PRIVATE-TOKEN": owner.token } });
				const got = Buffer.from(await down.arrayBuffer());
				if (down.status !== 200 || !got.equals(body)) throw new Error(`download: ${down.status}, ${got.length} bytes`);
				expectStatus("state", await c.state(id, "running"), 200);
				expectStatus("state", await c.state(id, "failed"), 200);
				expectStatus("erase", await api.post(`${p}/builds/${id}/erase`), 201);
			},
		},
		{
			name: "integration put/get/delete",
			weight: 1,
			run: async (api, n) => {
				expectStatus("put", await api.put(`${p}/services/emails-on-push`, { body: { recipients: `dev${n}@example.com`, disable_diffs: true } }), 200);
				expectStatus("get", await api.get(`${p}/services/emails-on-push`), 200);
				expectStatus("delete", await api.del(`${p}/services/emails-on-push`), 200);
			},
		},
		{ name: "GET integration", weight: 2, run: async api => void expectStatus("integration", await api.get(`${p}/services/pipeline-service-a`), 200) },
		{
			name: "push event",
			weight: 1,
			run: async (_api, n) => {
				const c = ci();
				expectStatus(
					"push",
					await c.raw.post("/internal/push", {
						headers: c.headers,
						body: pushBody({ projectId: Number(ids.id), path: ids.path, commits: [{ message: `change ${n}` }] }),
					}),
					202,
				);
			},
		},
	];
}

beforeAll(async () => {
	const backend = serviceNames()
		.filter(s => s !== "api")
		.join(",");
	// The inspector on a port of its own choosing, for liveMemory().
	cluster = await startCluster({ nodes: { api: "api", backend }, env: { RATE_LIMIT_PER_MINUTE: String(1e9), NODE_OPTIONS: "--inspect=127.0.0.1:0" } });
	owner = await createUser(cluster.api());
	({ ids } = await seedProject(cluster, owner, keys));
	keyPool = await Promise.all(Array.from({ length: 24 }, async () => (await keys.generate("ed25519")).line));
}, 180000);

afterAll(async () => {
	keys.cleanup();
	await cluster?.stop();
});

it(`serves ${CLIENTS} clients of mixed reads and writes for ${RUN_MS / 1000} s without an error, and memory does not grow`, async () => {
	const ops = operations();
	const weighted = ops.flatMap(op => Array.from({ length: op.weight }, () => op));
	const errors: string[] = [];
	const counts: Record<string, number> = {};
	let n = 0;
	const rssSamples: Record<string, number>[] = [];

	/** All clients for `ms`, each starting its next operation until then; resolves when none is in flight. */
	const runFor = async (ms: number) => {
		const end = Date.now() + ms;
		const clientLoop = async (c: number) => {
			const api = client(cluster.url, owner.token);
			while (Date.now() < end) {
				const i = n++;
				const op = weighted[(i * 7 + c) % weighted.length];
				try {
					await op.run(api, i);
					counts[op.name] = (counts[op.name] ?? 0) + 1;
				} catch (err) {
					errors.push(`${op.name}: ${(err as Error).message}`);
				}
			}
		};
		await Promise.all(Array.from({ length: CLIENTS }, (_, c) => clientLoop(c)));
	};
	const live = async () => {
		const memory: Record<string, NodeJS.MemoryUsage> = {};
		for (const [name, node] of cluster.nodes) memory[name] = await liveMemory(node);
		return memory;
	};

	await runFor(WARMUP_MS);
	const before = await live();
	const sampler = setInterval(() => {
		const rss: Record<string, number> = {};
		for (const [name, node] of cluster.nodes) rss[name] = Math.round((rssBytes(node.child.pid) ?? NaN) / MB);
		rssSamples.push(rss);
	}, SAMPLE_EVERY_MS);
	await runFor(RUN_MS);
	clearInterval(sampler);
	const after = await live();

	const report: Record<string, object> = {};
	for (const name of cluster.nodes.keys()) {
		const rss = rssSamples.map(s => s[name]);
		report[name] = {
			heapMB: [before[name].heapUsed, after[name].heapUsed].map(b => Math.round(b / MB)),
			externalMB: [before[name].external, after[name].external].map(b => Math.round(b / MB)),
			rssMB: { first: rss[0], max: Math.max(...rss), last: rss[rss.length - 1] },
		};
	}
	console.log(`load: ${n} operations (${JSON.stringify(counts)}); live memory after warm-up → after the run ${JSON.stringify(report)}`);

	expect(errors.slice(0, 20)).toEqual([]);
	expect(rssSamples.length).toBeGreaterThan(30);
	for (const op of ops) expect([op.name, (counts[op.name] ?? 0) > 0]).toEqual([op.name, true]);
	for (const name of cluster.nodes.keys()) {
		for (const kind of ["heapUsed", "external"] as const) {
			const limit = before[name][kind] * MAX_GROWTH_RATIO + MAX_GROWTH_BYTES;
			expect([name, kind, after[name][kind] <= limit]).toEqual([name, kind, true]);
		}
	}
	for (const [name, node] of cluster.nodes) expect([name, node.child.exitCode]).toEqual([name, null]);
}, 180000);
