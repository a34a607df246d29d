/**
 * Backups as data (lib/store/backup/): what backup.json lists (the snapshot's digest and counts,
 * every other file, the secrets key, artifacts a build names that are gone), a restore that
 * checks the backup whole before it touches DATA_DIR (a file missing or cut, a snapshot not the
 * one listed, no manifest), and a restore cut short finished by running it again. The commands
 * against a running service: test/e2e/store/backup-restore.spec.ts.
 */
import fs from "fs";
import os from "os";
import path from "path";
import { ServiceBroker } from "moleculer";
import { backupDataDir } from "../../../lib/store/backup/backup";
import { MANIFEST_FILE } from "../../../lib/store/backup/manifest";
import { restoreDataDir } from "../../../lib/store/backup/restore";
import { Collection } from "../../../lib/store/collection";
import { RESTORING_FILE } from "../../../lib/store/sqlite/store-files";

const broker = new ServiceBroker({ logger: false });
afterAll(() => broker.stop());
const fresh = (name: string) => fs.mkdtempSync(path.join(os.tmpdir(), `glv3-${name}-`));

/** A DATA_DIR with builds (one naming an artifacts file that is there, one naming a file erased), a trace, a generated key, an upload in progress. */
async function dataDir(): Promise<string> {
	const dir = fresh("backup-src");
	const builds = new Collection("builds", {}, { dataDir: dir, mongoUri: "" });
	await builds.connect(broker);
	await builds.insert({ project_id: 3, artifacts: { filename: "a.zip", size: 5, file: "artifacts-kept-0123456789abcdef" } });
	await builds.insert({ project_id: 3, artifacts: { filename: "b.zip", size: 5, file: "artifacts-gone-0123456789abcdef" } });
	await builds.insert({ project_id: 3, artifacts: null });
	await builds.disconnect();
	const files: Record<string, string> = {
		"artifacts/3/1/artifacts-kept-0123456789abcdef": "kept!",
		"artifacts/3/3/trace.log": "line\n",
		"artifacts/.tmp/3-00000000.part": "half an upload",
		".secrets-key": "a-generated-key",
		".secrets-key-check": "check",
	};
	for (const [rel, text] of Object.entries(files)) {
		fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
		fs.writeFileSync(path.join(dir, rel), text);
	}
	return dir;
}

it("lists the snapshot, every other file, where the key is and the artifacts a build names that are gone; leaves uploads in progress out", async () => {
	const dir = await dataDir();
	const target = path.join(fresh("backup"), "b");
	const manifest = backupDataDir(dir, target, { secretsKeyFromEnv: false });
	expect(manifest.store).toMatchObject({ file: "store.sqlite", collections: { builds: 3 } });
	expect(manifest.store.sha256).toMatch(/^[0-9a-f]{64}$/);
	expect(manifest.files.map(f => f.path)).toEqual([
		".secrets-key",
		".secrets-key-check",
		"artifacts/3/1/artifacts-kept-0123456789abcdef",
		"artifacts/3/3/trace.log",
	]);
	expect(manifest.secretsKey).toBe("in .secrets-key (generated; a restore brings it back)");
	expect(manifest.missingArtifacts).toEqual(["artifacts/3/2/artifacts-gone-0123456789abcdef"]);
	expect(JSON.parse(fs.readFileSync(path.join(target, MANIFEST_FILE), "utf8"))).toEqual(manifest);
	expect(() => backupDataDir(dir, target, { secretsKeyFromEnv: false })).toThrow(`${target} is not empty: a backup goes into a new or empty directory`);
	expect(() => backupDataDir(fresh("empty"), path.join(fresh("backup"), "c"), { secretsKeyFromEnv: false })).toThrow("holds no store to back up");
});

it("with artifacts in a bucket (ARTIFACTS_STORE=s3), says where they are and looks for none under DATA_DIR", async () => {
	const dir = await dataDir();
	const manifest = backupDataDir(dir, path.join(fresh("backup"), "s3"), { secretsKeyFromEnv: false, artifactsBucket: "artifacts/prod/" });
	expect([manifest.artifactsBucket, manifest.missingArtifacts]).toEqual(["artifacts/prod/", []]);
});

it("a restore checks the backup whole before touching DATA_DIR: a file cut or missing, another snapshot, no manifest", async () => {
	const source = await dataDir();
	const backup = path.join(fresh("backup"), "b");
	backupDataDir(source, backup, { secretsKeyFromEnv: true });
	const into = fresh("restore-into");
	const untouched = () => expect(fs.readdirSync(into)).toEqual([]);

	fs.appendFileSync(path.join(backup, "artifacts/3/3/trace.log"), "more");
	expect(() => restoreDataDir(backup, into, { force: false })).toThrow(`${backup} is damaged: artifacts/3/3/trace.log (9 bytes, 5 listed)`);
	fs.truncateSync(path.join(backup, "artifacts/3/3/trace.log"), 5);
	const store = path.join(backup, "store.sqlite");
	const bytes = fs.readFileSync(store);
	bytes[bytes.length - 1] ^= 1;
	fs.writeFileSync(store, bytes);
	expect(() => restoreDataDir(backup, into, { force: false })).toThrow(`${store} is damaged: its SHA-256 is not the one ${MANIFEST_FILE} lists`);
	bytes[bytes.length - 1] ^= 1;
	fs.writeFileSync(store, bytes);
	fs.rmSync(path.join(backup, ".secrets-key"));
	expect(() => restoreDataDir(backup, into, { force: false })).toThrow(`${backup} is damaged: .secrets-key (missing, 15 listed)`);
	fs.writeFileSync(path.join(backup, ".secrets-key"), "a-generated-key");
	const manifest = fs.readFileSync(path.join(backup, MANIFEST_FILE));
	fs.rmSync(path.join(backup, MANIFEST_FILE));
	expect(() => restoreDataDir(backup, into, { force: false })).toThrow(
		`${backup} is not a complete backup: it has no ${MANIFEST_FILE} (a backup writes it last)`,
	);
	untouched();
	fs.writeFileSync(path.join(backup, MANIFEST_FILE), manifest);

	const { replaced } = restoreDataDir(backup, into, { force: false });
	expect(replaced).toBeNull();
	expect(fs.readdirSync(into).sort()).toEqual([".secrets-key", ".secrets-key-check", "artifacts", "store.sqlite", "store.sqlite.marker"]);
	const builds = new Collection("builds", {}, { dataDir: into, mongoUri: "" });
	await builds.connect(broker);
	expect(await builds.count()).toBe(3);
	await builds.disconnect();
});

it("a restore cut short is finished by running it again, what it had copied moved aside", async () => {
	const backup = path.join(fresh("backup"), "b");
	backupDataDir(await dataDir(), backup, { secretsKeyFromEnv: false });
	const into = fresh("restore-cut");
	// Cut after it marked the directory and copied a file.
	fs.writeFileSync(path.join(into, RESTORING_FILE), "{}");
	fs.writeFileSync(path.join(into, ".secrets-key"), "a-generated-key");
	const { replaced } = restoreDataDir(backup, into, { force: false });
	expect(fs.readdirSync(replaced!)).toEqual([".secrets-key"]);
	expect(fs.existsSync(path.join(into, RESTORING_FILE))).toBe(false);
	expect(fs.readFileSync(path.join(into, "artifacts/3/1/artifacts-kept-0123456789abcdef"), "utf8")).toBe("kept!");
});
