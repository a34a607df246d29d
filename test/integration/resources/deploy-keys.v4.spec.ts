/**
 * API v4's deploy keys (services/modules/deploy-keys/deploy-keys.v4.ts) on one in-process broker, beside
 * v3 on the same keys: can_push per project, the SHA-256 fingerprint `ssh-keygen -l` prints, PUT,
 * enable (201), DELETE (204, If-Unmodified-Since), and the instance's keys for admins.
 */
import fs from "fs";
import path from "path";
import AccountsService from "../../../services/accounts.service";
import ApiService from "../../../services/api.service";
import DeployKeysService from "../../../services/deploy-keys.service";
import { startLocal, type LocalStack } from "../../support/broker";
import { runCommand } from "../../support/commands";
import { createProject, createUser, type TestUser } from "../../support/fixtures";
import type { Client } from "../../support/http";
import { KeyFactory, type GeneratedKey } from "../../support/ssh-keys";

let stack: LocalStack;
let owner: TestUser;
let stranger: TestUser;
let projectId: number;
let otherProject: number;
let v4: Client;
let keys: KeyFactory;
let ed: GeneratedKey;
let rsa: GeneratedKey;
const deployKeys = (p = projectId) => `/projects/${p}/deploy_keys`;

/** `ssh-keygen -l -E sha256`'s fingerprint of a key line. */
async function sha256Of(key: GeneratedKey): Promise<string> {
	const file = path.join(keys.dir, `${Math.random()}.pub`);
	fs.writeFileSync(file, `${key.line}\n`);
	return /SHA256:\S+/.exec((await runCommand("ssh-keygen", ["-l", "-E", "sha256", "-f", file])).stdout)![0];
}

beforeAll(async () => {
	stack = await startLocal([ApiService, AccountsService, DeployKeysService]);
	owner = await createUser(stack.api());
	stranger = await createUser(stack.api());
	projectId = (await createProject(stack.api(owner.token))).id;
	otherProject = (await createProject(stack.api(owner.token))).id;
	v4 = stack.v4(owner.token);
	keys = new KeyFactory();
	[ed, rsa] = await Promise.all([keys.generate("ed25519"), keys.generate("rsa-2048")]);
});

afterAll(async () => {
	keys?.cleanup();
	await stack?.stop();
});

it("adds a key with can_push (201) and both fingerprints; v3 shows the same key", async () => {
	const res = await v4.post(deployKeys(), { body: { title: "ci key", key: ed.line, can_push: true } });
	expect(res.status).toBe(201);
	expect(res.body).toEqual({
		id: expect.any(Number),
		title: "ci key",
		created_at: expect.any(String),
		expires_at: null,
		key: ed.line,
		fingerprint: ed.fingerprint,
		fingerprint_sha256: await sha256Of(ed),
		can_push: true,
	});
	const v3 = await stack.api(owner.token).get(`/projects/${projectId}/keys/${res.body.id}`);
	expect(v3.body).toEqual({ id: res.body.id, title: "ci key", key: ed.line, created_at: res.body.created_at });
	const bad = await v4.post(deployKeys(), { form: { title: "x", key: "ssh-rsa nope" } });
	expect([bad.status, bad.body]).toEqual([400, { message: { fingerprint: ["cannot be generated"] } }]);
	const again = await v4.post(deployKeys(), { body: { title: "ci key", key: ed.line } });
	expect([again.status, again.body.id, again.body.can_push]).toEqual([201, res.body.id, true]);
});

it("lists and reads a project's keys with its can_push, paginated", async () => {
	await v4.post(deployKeys(), { form: { title: "read only", key: rsa.line } });
	const list = await v4.get(deployKeys());
	expect(list.body.map((k: { title: string; can_push: boolean }) => [k.title, k.can_push])).toEqual([
		["ci key", true],
		["read only", false],
	]);
	expect(list.headers.get("x-total")).toBe("2");
	const one = await v4.get(`${deployKeys()}/${list.body[1].id}`);
	expect(one.body).toEqual(list.body[1]);
	expect((await v4.get(`${deployKeys()}/999999`)).body).toEqual({ message: "404 Not found" });
	expect((await stack.v4(stranger.token).get(deployKeys())).status).toBe(404);
});

it("edits the title and this project's can_push", async () => {
	const [key] = (await v4.get(deployKeys())).body;
	const res = await v4.put(`${deployKeys()}/${key.id}`, { form: { title: "renamed", can_push: "false" } });
	expect([res.status, res.body.title, res.body.can_push]).toEqual([200, "renamed", false]);
	const none = await v4.put(`${deployKeys()}/${key.id}`, { body: {} });
	expect([none.status, none.body]).toEqual([400, { error: "title, can_push are missing, at least one parameter must be provided" }]);
	const blank = await v4.put(`${deployKeys()}/${key.id}`, { body: { title: " " } });
	expect([blank.status, blank.body]).toEqual([400, { message: { title: ["can't be blank"] } }]);
	expect((await v4.put(`${deployKeys()}/999999`, { body: { can_push: true } })).status).toBe(404);
});

it("enables a key in another project (201), read-only there, and lists the instance's keys for admins", async () => {
	const [key] = (await v4.get(deployKeys())).body;
	await v4.put(`${deployKeys()}/${key.id}`, { body: { can_push: true } });
	const enabled = await v4.post(`${deployKeys(otherProject)}/${key.id}/enable`, { body: {} });
	expect([enabled.status, enabled.body]).toEqual([201, { id: key.id, title: "renamed", created_at: key.created_at, expires_at: null, key: ed.line }]);
	expect((await v4.get(`${deployKeys(otherProject)}/${key.id}`)).body.can_push).toBe(false);
	expect((await v4.post(`${deployKeys(otherProject)}/999999/enable`)).body).toEqual({ message: "404 Deploy Key Not Found" });

	expect((await v4.get("/deploy_keys")).status).toBe(403);
	const all = await stack.v4().get("/deploy_keys", { query: { per_page: 100 } });
	const mine = all.body.find((k: { id: number }) => k.id === key.id);
	expect(mine).toMatchObject({ fingerprint_sha256: await sha256Of(ed), projects_with_write_access: [expect.objectContaining({ id: projectId })] });
	expect(mine).not.toHaveProperty("can_push");
	expect((await stack.v4().get("/deploy_keys", { query: { public: "true" } })).body).toEqual([]);
});

it("removes a key from a project with 204, honouring If-Unmodified-Since", async () => {
	const [key] = (await v4.get(deployKeys())).body;
	const stale = await v4.del(`${deployKeys()}/${key.id}`, { headers: { "If-Unmodified-Since": "Thu, 01 Jan 2015 00:00:00 GMT" } });
	expect([stale.status, stale.body]).toEqual([412, { message: "412 Precondition Failed" }]);
	const removed = await v4.del(`${deployKeys()}/${key.id}`, { body: {} });
	expect([removed.status, removed.text]).toEqual([204, ""]);
	expect((await v4.del(`${deployKeys()}/${key.id}`)).body).toEqual({ message: "404 Deploy Key Not Found" });
	// Still the other project's.
	expect((await v4.get(`${deployKeys(otherProject)}/${key.id}`)).status).toBe(200);
});
