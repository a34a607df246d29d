/**
 * Backup and restore as docs/operations.md gives them: `npm run backup -- <dir>` run beside the
 * all-in-one process in the middle of a burst of label, deploy-key, snippet and build writes, and
 * `npm run restore -- <dir>` into another DATA_DIR, where a service started on it holds every
 * write answered before the backup began (each list exact, each record whole), the same root, the
 * artifacts and traces, and the generated secrets key that opens its integration secrets. Restore
 * refuses a DATA_DIR a service is using, and a non-empty one unless --force, which moves what it
 * held aside (lib/store/backup/).
 */
import crypto from "crypto";
import fs from "fs";
import os from "os";
import path from "path";
import { startCluster, type Cluster } from "../../support/cluster";
import { internalApi } from "../../support/builds";
import { createProject } from "../../support/fixtures";
import { client, waitFor, type Client } from "../../support/http";
import { npmRun } from "../../support/operator";
import { freePort } from "../../support/processes";
import { exactSizes, KINDS, noneAnswered, startBurst, walkPages, type Answered, type Target } from "../../support/store-writes";

let cluster: Cluster;
let target: Target;
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "glv3-backup-e2e-"));
const backupDir = path.join(scratch, "backup");
const restoredDir = path.join(scratch, "restored");
const artifactBytes = crypto.randomBytes(200 * 1024);
let buildWithFiles = 0;
let rootCreatedAt = "";

beforeAll(async () => {
	// No SECRETS_KEY: the key is generated into DATA_DIR/.secrets-key, which the backup carries.
	// No rate limit: the burst writes as fast as the machine takes them, which a fast machine makes thousands a minute.
	cluster = await startCluster({ nodes: { all: "" }, nats: false, env: { SECRETS_KEY: "", RATE_LIMIT_PER_MINUTE: "0" } });
	const projectId = (await createProject(cluster.api())).id;
	target = { api: cluster.api(), url: cluster.url, internalSecret: cluster.internalSecret, projectId };
	rootCreatedAt = (await cluster.api().get("/user")).body.created_at as string;
	const ci = internalApi(cluster.url, cluster.internalSecret);
	buildWithFiles = await ci.build({ project_id: projectId, name: "with-files" });
	await ci.drive(buildWithFiles, "running");
	expect((await ci.trace(buildWithFiles, "line one\nline two\n")).status).toBe(200);
	expect((await ci.upload(buildWithFiles, artifactBytes, "files.zip")).status).toBe(200);
	const integration = await cluster
		.api()
		.put(`/projects/${projectId}/services/push-notifications`, { body: { api_key: "k-secret", user_key: "u-secret", priority: 0 } });
	expect(integration.status).toBe(200);
}, 120000);

afterAll(async () => {
	await cluster?.stop();
	fs.rmSync(scratch, { recursive: true, force: true });
}, 60000);

const copyOf = (answered: Answered): Answered => ({
	labels: new Set(answered.labels),
	keys: new Set(answered.keys),
	snippets: new Set(answered.snippets),
	builds: new Set(answered.builds),
});

/** An all-in-one process on another DATA_DIR and port, and a client of it. */
async function serviceOn(dataDir: string, name: string): Promise<{ api: Client; url: string }> {
	const port = await freePort();
	await cluster.spawnNode(name, "", { DATA_DIR: dataDir, PORT: String(port) });
	const url = `http://127.0.0.1:${port}/api/v3`;
	return { api: client(url, cluster.rootToken), url };
}

/** Every record a service lists is whole: each snippet's content is the tag its title carries, each label's colour the one written. */
async function expectWhole(t: Target): Promise<void> {
	const snippets = await walkPages(t, "snippets");
	for (const id of snippets.items) {
		const snippet = await t.api.get(`/projects/${t.projectId}/snippets/${id}`);
		const raw = await t.api.get(`/projects/${t.projectId}/snippets/${id}/raw`);
		expect({ id, raw: raw.text }).toEqual({ id, raw: String(snippet.body.title).replace(/^s-/, "") });
	}
	const labels = await t.api.get(`/projects/${t.projectId}/labels`, { query: { per_page: 100 } });
	for (const l of labels.body as { name: string; color: string }[]) expect({ name: l.name, color: l.color }).toEqual({ name: l.name, color: "#428BCA" });
}

it("a backup taken in the middle of a write burst restores to a service holding every write answered before the backup began, none torn", async () => {
	const answered = noneAnswered();
	const burst = startBurst(target, answered);
	await waitFor("writes under way", () => burst.answered >= 40, 60000);
	const beforeBackup = copyOf(answered);
	const backup = await npmRun("backup", [backupDir], cluster.baseEnv);
	const duringBackup = burst.answered;
	// Writes went on while it ran, and after.
	await waitFor("writes after the backup", () => burst.answered >= duringBackup + 20, 60000);
	await burst.stop();
	expect(backup.stderr).toBe("");
	expect(backup.code).toBe(0);
	expect(backup.stdout).toContain(`Backed up DATA_DIR=${cluster.dataDir} into ${backupDir}:`);
	expect(backup.stdout).toContain("the secrets key: in .secrets-key (generated; a restore brings it back)");
	expect(backup.stdout).toContain(`Restore it with: npm run restore -- ${backupDir}`);

	const restore = await npmRun("restore", [backupDir], { ...cluster.baseEnv, DATA_DIR: restoredDir });
	expect(restore.stderr).toBe("");
	expect(restore.code).toBe(0);
	expect(restore.stdout).toContain(`Restored ${backupDir} into DATA_DIR=${restoredDir}`);

	const restored = await serviceOn(restoredDir, "restored");
	const t: Target = { ...target, api: restored.api, url: restored.url };
	expect((await restored.api.get("/user")).body).toMatchObject({ username: "root", created_at: rootCreatedAt });
	for (const kind of KINDS) {
		const { total, items, sizes } = await walkPages(t, kind);
		const listed = new Set(items);
		expect({ kind, missing: [...beforeBackup[kind]].filter(x => !listed.has(x)) }).toEqual({ kind, missing: [] });
		expect({ kind, distinct: listed.size, sizes }).toEqual({ kind, distinct: total, sizes: exactSizes(total) });
		// Nothing that was not written: at most what was answered, or sent, by the end of the burst.
		expect(total).toBeLessThanOrEqual(answered[kind].size + burst.unanswered);
	}
	await expectWhole(t);

	// Artifacts, traces and the integration's secrets came back with the store.
	const download = await fetch(`${restored.url}/projects/${target.projectId}/builds/${buildWithFiles}/artifacts`, {
		headers: { "PRIVATE-TOKEN": cluster.rootToken },
	});
	expect(download.status).toBe(200);
	expect(Buffer.from(await download.arrayBuffer()).equals(artifactBytes)).toBe(true);
	expect((await restored.api.get(`/projects/${target.projectId}/builds/${buildWithFiles}/trace`)).text).toBe("line one\nline two\n");
	expect((await restored.api.get(`/projects/${target.projectId}/services/push-notifications`)).body).toMatchObject({ active: true });
	expect(fs.readFileSync(path.join(restoredDir, ".secrets-key"), "utf8")).toBe(fs.readFileSync(path.join(cluster.dataDir, ".secrets-key"), "utf8"));
	await cluster.kill("restored", "SIGTERM");
}, 300000);

it("restore refuses a DATA_DIR a service is using, and a non-empty one unless --force, which moves what it held aside", async () => {
	const digest = (dir: string) => fs.readdirSync(dir).sort();
	const before = digest(cluster.dataDir);
	const inUse = await npmRun("restore", [backupDir, "--force"], cluster.baseEnv);
	expect(inUse.code).toBe(1);
	expect(inUse.stderr).toBe(
		`restore: ${path.join(cluster.dataDir, "store.sqlite")} is open in another process: a service (or another tool) uses DATA_DIR=${cluster.dataDir}; ` +
			`stop every process on it before restoring into it\n`,
	);
	expect(digest(cluster.dataDir)).toEqual(before);

	// A label written after the backup: the restore takes the directory back to the backup, the label stays in what was moved aside.
	const late = await cluster.api().post(`/projects/${target.projectId}/labels`, { body: { name: "after-the-backup", color: "#000000" } });
	expect(late.status).toBe(200);
	expect(await cluster.kill("all", "SIGTERM")).toBe(0);
	const notEmpty = await npmRun("restore", [backupDir], cluster.baseEnv);
	expect(notEmpty.code).toBe(1);
	expect(notEmpty.stderr).toMatch(
		new RegExp(
			`^restore: DATA_DIR=${cluster.dataDir} is not empty \\(.*\\): restore into an empty directory, ` +
				"or add --force to move what it holds into DATA_DIR/replaced-<time>/ first\\n$",
		),
	);
	const forced = await npmRun("restore", [backupDir, "--force"], cluster.baseEnv);
	expect(forced.code).toBe(0);
	const aside = /What DATA_DIR held is now in (\S+) \(nothing was deleted\)\./.exec(forced.stdout)?.[1];
	expect(aside && fs.existsSync(path.join(aside, "store.sqlite"))).toBe(true);

	const again = await serviceOn(cluster.dataDir, "all");
	const labels = (await again.api.get(`/projects/${target.projectId}/labels`, { query: { per_page: 100 } })).body as { name: string }[];
	expect(labels.map(l => l.name)).not.toContain("after-the-backup");
	// The backup's next backup leaves what was moved aside out.
	const second = await npmRun("backup", [path.join(scratch, "second")], cluster.baseEnv);
	expect(second.code).toBe(0);
	expect(fs.readdirSync(path.join(scratch, "second")).filter(f => f.startsWith("replaced-"))).toEqual([]);
}, 240000);
