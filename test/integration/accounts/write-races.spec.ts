/**
 * Two requests changing one thing at once, as two replicas would run them (test/support/races.ts):
 * the one whose look-up went stale before its write answers as if it came second (a 404, or
 * GitLab's answer to removing a user who is not a member), and changes nothing.
 */
import AccountsService from "../../../services/accounts.service";
import ApiService from "../../../services/api.service";
import DeployKeysService from "../../../services/deploy-keys.service";
import LabelsService from "../../../services/labels.service";
import { startLocal, type LocalStack } from "../../support/broker";
import { addMember, createProject, createUser } from "../../support/fixtures";
import { client } from "../../support/http";
import { heldAcross, whileFailing } from "../../support/races";
import { KeyFactory } from "../../support/ssh-keys";

let stack: LocalStack;
const keys = new KeyFactory();
const as = (token: string) => client(stack.url, token);

beforeAll(async () => {
	stack = await startLocal([ApiService, AccountsService, LabelsService, DeployKeysService]);
});

afterAll(async () => {
	keys.cleanup();
	await stack?.stop();
});

it("a label change that found the label before a rename answers 404 and leaves the renamed label alone", async () => {
	const owner = await createUser(stack.api());
	const project = await createProject(as(owner.token));
	const labels = `/projects/${project.id}/labels`;
	// 200, not 201: docs/api.md#decisions.
	expect((await as(owner.token).post(labels, { body: { name: "bug", color: "#ff0000" } })).status).toBe(200);
	const [recolor, rename] = await heldAcross(
		stack.broker,
		"labels",
		"labels",
		() => as(owner.token).put(labels, { body: { name: "bug", color: "#00ff00" } }),
		() => as(owner.token).put(labels, { body: { name: "bug", new_name: "defect" } }),
	);
	expect(rename.status).toBe(200);
	expect([recolor.status, recolor.body]).toEqual([404, { message: "404 Label Not Found" }]);
	const now = (await as(owner.token).get(labels)).body as { name: string; color: string }[];
	expect(now.map(l => [l.name, l.color])).toEqual([["defect", "#FF0000"]]);
});

it("a member removed by another request meanwhile is revoked already for the second removal, and not found for a change", async () => {
	const owner = await createUser(stack.api());
	const dev = await createUser(stack.api());
	const project = await createProject(as(owner.token));
	const member = `/projects/${project.id}/members/${dev.id}`;
	await addMember(as(owner.token), project.id, dev.id, 30);
	const [late, first] = await heldAcross(
		stack.broker,
		"accounts",
		"members",
		() => as(owner.token).del(member),
		() => as(owner.token).del(member),
	);
	expect(first.status).toBe(200);
	// As GitLab 8.16 answers the removal of a user who is not a member.
	expect([late.status, late.body]).toEqual([200, { message: "Access revoked", id: dev.id }]);

	await addMember(as(owner.token), project.id, dev.id, 30);
	const [change, removal] = await heldAcross(
		stack.broker,
		"accounts",
		"members",
		() => as(owner.token).put(member, { body: { access_level: 40 } }),
		() => as(owner.token).del(member),
	);
	expect(removal.status).toBe(200);
	expect([change.status, change.body]).toEqual([404, { message: "404 Not found" }]);
	expect((await as(owner.token).get(member)).status).toBe(404);
});

it("a deploy key being added to one project is not joined meanwhile by a user who cannot reach that project", async () => {
	const alice = await createUser(stack.api());
	const mallory = await createUser(stack.api());
	const hers = await createProject(as(alice.token));
	const his = await createProject(as(mallory.token));
	const { line } = await keys.generate("ed25519");
	// Alice's request is held after it has stored the key and before it links it to her project.
	const [added, joined] = await heldAcross(
		stack.broker,
		"deploy-keys",
		"deploy_keys",
		() => as(alice.token).post(`/projects/${hers.id}/deploy_keys`, { body: { title: "deploy", key: line } }),
		() => as(mallory.token).post(`/projects/${his.id}/deploy_keys`, { body: { title: "mine now", key: line } }),
		"insert",
	);
	expect(added.status).toBe(201);
	expect([joined.status, joined.body]).toEqual([400, { message: { fingerprint: ["has already been taken"] } }]);
	expect((await as(mallory.token).get(`/projects/${his.id}/deploy_keys`)).body).toEqual([]);
	expect(((await as(alice.token).get(`/projects/${hers.id}/deploy_keys`)).body as { title: string }[]).map(k => k.title)).toEqual(["deploy"]);

	// A member of her project may still join it to another project of theirs, as GitLab 8 allows.
	const bob = await createUser(stack.api());
	await addMember(as(alice.token), hers.id, bob.id, 40);
	const bobs = await createProject(as(bob.token));
	expect((await as(bob.token).post(`/projects/${bobs.id}/deploy_keys`, { body: { title: "shared", key: line } })).status).toBe(201);
});

it("an enable that read a key just before its last link was removed links nothing, and answers 404 Deploy Key Not Found", async () => {
	const alice = await createUser(stack.api());
	const bob = await createUser(stack.api());
	const hers = await createProject(as(alice.token));
	const his = await createProject(as(bob.token));
	await addMember(as(alice.token), hers.id, bob.id, 10);
	const { line } = await keys.generate("ed25519");
	const added = await as(alice.token).post(`/projects/${hers.id}/deploy_keys`, { body: { title: "deploy", key: line } });
	expect(added.status).toBe(201);
	// Bob's enable is held after its look-up of the key, while alice removes the key's last link (and so the key).
	const [enabled, removed] = await heldAcross(
		stack.broker,
		"deploy-keys",
		"deploy_keys",
		() => as(bob.token).post(`/projects/${his.id}/deploy_keys/${added.body.id}/enable`),
		() => as(alice.token).del(`/projects/${hers.id}/deploy_keys/${added.body.id}/disable`),
	);
	expect([removed.status, removed.body]).toEqual([200, added.body]);
	expect([enabled.status, enabled.body]).toEqual([404, { message: "404 Deploy Key Not Found" }]);
	expect((await as(bob.token).get(`/projects/${his.id}/deploy_keys`)).body).toEqual([]);
	expect((await stack.api().get("/deploy_keys")).body.map((k: { id: number }) => k.id)).not.toContain(added.body.id);
});

it("a deploy key whose link to its project cannot be written is not left behind unlinked", async () => {
	const owner = await createUser(stack.api());
	const project = await createProject(as(owner.token));
	const { line } = await keys.generate("ed25519");
	// The key's first link fails to be written (a full disk, a lost primary).
	const failed = await whileFailing(stack.broker, "deploy-keys", ["deploy_key_links.insert"], () =>
		as(owner.token).post(`/projects/${project.id}/deploy_keys`, { body: { title: "deploy", key: line } }),
	);
	expect([failed.status, failed.body]).toEqual([500, { message: "500 Internal Server Error" }]);
	// No key in no project, waiting for its window to close and anyone to take it up.
	expect(((await stack.api().get("/deploy_keys")).body as { key: string }[]).filter(k => k.key === line)).toEqual([]);
	expect((await as(owner.token).post(`/projects/${project.id}/deploy_keys`, { body: { title: "deploy", key: line } })).status).toBe(201);
});
