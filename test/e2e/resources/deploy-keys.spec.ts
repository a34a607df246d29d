/**
 * Deploy keys end to end: the gateway, accounts and keys as separate processes over the real
 * NATS (Redis as cacher), with real keys of every type made by ssh-keygen and fingerprints
 * checked against `ssh-keygen -l -E md5`.
 */
import { Gitlab } from "gitlab";
import { startCluster, type Cluster } from "../../support/cluster";
import { addMember, createProject, createUser, roleMatrix, type TestUser } from "../../support/fixtures";
import { client } from "../../support/http";
import { KEYGEN_TYPES, KeyFactory, type GeneratedKey } from "../../support/ssh-keys";

let cluster: Cluster;
let factory: KeyFactory;
const as = (token: string | null) => client(cluster.url, token ?? undefined);
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

beforeAll(async () => {
	factory = new KeyFactory();
	// The service under its former name, as an existing deployment's environment may still say it: config/ runs deploy-keys for it.
	cluster = await startCluster({ nodes: { api: "api", accounts: "accounts", "deploy-keys": "keys" } });
	await cluster.waitForRoute("GET", "/projects/1/keys");
}, 120000);

afterAll(async () => {
	await cluster?.stop();
	factory?.cleanup();
});

describe("real keys of every type", () => {
	let owner: TestUser;
	let projectId: number;
	let generated: Record<string, GeneratedKey>;

	beforeAll(async () => {
		generated = await factory.all();
		owner = await createUser(cluster.api());
		projectId = (await createProject(as(owner.token))).id;
	});

	it.each(KEYGEN_TYPES.map(k => k.name))("%s: add (201), list, get, delete with ssh-keygen's MD5 fingerprint", async name => {
		const key = generated[name];
		const api = as(owner.token);
		const added = await api.post(`/projects/${projectId}/keys`, { body: { title: `deploy ${name}`, key: key.line } });
		expect(added.status).toBe(201);
		expect(Object.keys(added.body)).toEqual(["id", "title", "key", "created_at"]);
		expect(added.body).toEqual({ id: expect.any(Number), title: `deploy ${name}`, key: key.line, created_at: expect.stringMatching(ISO) });

		const list = await api.get(`/projects/${projectId}/keys`);
		expect(list.status).toBe(200);
		expect(list.body).toContainEqual(added.body);
		expect((await api.get(`/projects/${projectId}/keys/${added.body.id}`)).body).toEqual(added.body);
		// The later path serves the same keys.
		expect((await api.get(`/projects/${projectId}/deploy_keys/${added.body.id}`)).body).toEqual(added.body);

		const deleted = await api.del(`/projects/${projectId}/keys/${added.body.id}`);
		expect(deleted.status).toBe(200);
		expect(deleted.body).toEqual({
			id: added.body.id,
			user_id: owner.id,
			created_at: added.body.created_at,
			updated_at: expect.stringMatching(ISO),
			key: key.line,
			title: `deploy ${name}`,
			fingerprint: key.fingerprint,
			public: false,
		});
		const gone = await api.get(`/projects/${projectId}/keys/${added.body.id}`);
		expect(gone.status).toBe(404);
		expect(gone.body).toEqual({ message: "404 Not found" });
	});

	it("stores a key pasted with CR/LF, surrounding blanks and line breaks in the body as one stripped line", async () => {
		const key = await factory.generate("ed25519");
		const [type, body, ...comment] = key.line.split(" ");
		const pasted = `\r\n  ${type} ${body.slice(0, 30)}\r\n${body.slice(30)} ${comment.join(" ")}  \r\n`;
		const res = await as(owner.token).post(`/projects/${projectId}/deploy_keys`, { form: { title: "pasted", key: pasted } });
		expect(res.status).toBe(201);
		expect(res.body.key).toBe(key.line);
		const deleted = await as(owner.token).del(`/projects/${projectId}/deploy_keys/${res.body.id}`);
		expect(deleted.body.fingerprint).toBe(key.fingerprint);
	});

	it("adding a key the project already has returns it (201) without a duplicate, whatever the title", async () => {
		const key = await factory.generate("ecdsa-256");
		const api = as(owner.token);
		const first = await api.post(`/projects/${projectId}/keys`, { body: { title: "first", key: key.line } });
		const again = await api.post(`/projects/${projectId}/keys`, { body: { title: "second", key: `${key.line}\n` } });
		expect(again.status).toBe(201);
		expect(again.body).toEqual(first.body);
		const list = await api.get(`/projects/${projectId}/keys`);
		expect(list.body.filter((k: { id: number }) => k.id === first.body.id)).toHaveLength(1);
	});

	it("racing adds of one new key give one key", async () => {
		const key = await factory.generate("ed25519");
		const api = as(owner.token);
		const results = await Promise.all(
			Array.from({ length: 6 }, (_, i) => api.post(`/projects/${projectId}/keys`, { body: { title: `race ${i}`, key: key.line } })),
		);
		expect(results.map(r => r.status)).toEqual([201, 201, 201, 201, 201, 201]);
		expect(new Set(results.map(r => r.body.id)).size).toBe(1);
		const list = await api.get(`/projects/${projectId}/keys`);
		expect(list.body.filter((k: { key: string }) => k.key === key.line)).toHaveLength(1);
	});

	it("lists in the order keys were added, whole by default, paginated with headers on request", async () => {
		const fresh = (await createProject(as(owner.token))).id;
		const ids: number[] = [];
		for (const name of ["ed25519", "ecdsa-384", "rsa-2048"]) {
			const res = await as(owner.token).post(`/projects/${fresh}/keys`, { body: { title: name, key: (await factory.generate(name)).line } });
			ids.push(res.body.id);
		}
		const whole = await as(owner.token).get(`/projects/${fresh}/keys`);
		expect(whole.body.map((k: { id: number }) => k.id)).toEqual(ids);
		expect(whole.headers.get("x-total")).toBeNull();
		const page = await as(owner.token).get(`/projects/${fresh}/keys`, { query: { page: 2, per_page: 2 } });
		expect(page.body.map((k: { id: number }) => k.id)).toEqual([ids[2]]);
		expect(page.headers.get("x-total")).toBe("3");
		expect(page.headers.get("x-total-pages")).toBe("2");
		expect(page.headers.get("x-page")).toBe("2");
		expect(page.headers.get("x-next-page")).toBe("");
	});
});

describe("bad input: GitLab 8 validation errors, nothing stored, never a 500", () => {
	let owner: TestUser;
	let projectId: number;
	let keys: Record<string, GeneratedKey>;

	beforeAll(async () => {
		owner = await createUser(cluster.api());
		projectId = (await createProject(as(owner.token))).id;
		keys = { ed: await factory.generate("ed25519"), rsa: await factory.generate("rsa-2048"), ec: await factory.generate("ecdsa-521") };
	});

	const body = (line: string) => line.split(" ")[1];
	const noFingerprint = { fingerprint: ["cannot be generated"] };
	const cases: [string, () => unknown, Record<string, string[]>][] = [
		["no title", () => ({ key: keys.ed.line }), { title: ["can't be blank"] }],
		["no key", () => ({ title: "t" }), { key: ["can't be blank", "is invalid"], fingerprint: ["cannot be generated"] }],
		["garbage", () => ({ title: "t", key: "this is not a key" }), { key: ["is invalid"], fingerprint: ["cannot be generated"] }],
		["a body of another type", () => ({ title: "t", key: `ssh-rsa ${body(keys.ed.line)}` }), { fingerprint: ["cannot be generated"] }],
		["an ECDSA body under another curve", () => ({ title: "t", key: `ecdsa-sha2-nistp256 ${body(keys.ec.line)}` }), noFingerprint],
		["truncated base64", () => ({ title: "t", key: `ssh-rsa ${body(keys.rsa.line).slice(0, -9)}` }), { fingerprint: ["cannot be generated"] }],
		["an unsupported type", () => ({ title: "t", key: `ssh-foo ${body(keys.ed.line)}` }), { fingerprint: ["cannot be generated"] }],
		[
			"a huge key",
			() => ({ title: "t", key: `ssh-rsa ${"QUFB".repeat(2000)}` }),
			{ key: ["is too long (maximum is 5000 characters)"], fingerprint: ["cannot be generated"] },
		],
		["a title over 255 characters", () => ({ title: "x".repeat(256), key: keys.ed.line }), { title: ["is too long (maximum is 255 characters)"] }],
		[
			"objects for both fields",
			() => ({ title: { $gt: "" }, key: ["ssh-rsa"] }),
			{ title: ["is invalid"], key: ["is invalid"], fingerprint: ["cannot be generated"] },
		],
	];

	it.each(cases)("%s → 400", async (_label, make, errors) => {
		const api = as(owner.token);
		const before = (await api.get(`/projects/${projectId}/keys`)).body;
		const res = await api.post(`/projects/${projectId}/keys`, { body: make() });
		expect(res.status).toBe(400);
		expect(res.body).toEqual({ message: errors });
		expect((await api.get(`/projects/${projectId}/keys`)).body).toEqual(before);
	});

	it.each([
		["GET", "/keys/abc"],
		["GET", "/keys/0"],
		["GET", "/keys/-1"],
		["GET", "/keys/1.5"],
		["GET", "/keys/99999999999999999999999"],
		["GET", "/deploy_keys/424242"],
	])("%s %s → 404 Not found (a record look-up)", async (method, path) => {
		const res = await as(owner.token).request(method, `/projects/${projectId}${path}`);
		expect(res.status).toBe(404);
		expect(res.body).toEqual({ message: "404 Not found" });
	});

	it.each([
		["DELETE", "/keys/abc"],
		["DELETE", "/deploy_keys/424242"],
		["DELETE", "/keys/0"],
		["DELETE", "/deploy_keys/424242/disable"],
		["DELETE", "/keys/abc/disable"],
		["POST", "/deploy_keys/424242/enable"],
		["POST", "/keys/abc/enable"],
		["POST", "/keys/-1/enable"],
		["POST", "/keys/99999999999999999999999/enable"],
	])("%s %s → 404 Deploy Key Not Found (GitLab 8.16's not_found!)", async (method, path) => {
		const res = await as(owner.token).request(method, `/projects/${projectId}${path}`);
		expect(res.status).toBe(404);
		expect(res.body).toEqual({ message: "404 Deploy Key Not Found" });
	});

	it.each(['["ssh-rsa AAAA"]', '"ssh-rsa AAAA"', "null", "42", "{}"])("a JSON body %s that is no object of fields → 400", async raw => {
		const res = await as(owner.token).post(`/projects/${projectId}/keys`, { body: raw });
		expect(res.status).toBe(400);
		expect(res.body).toEqual({
			message: {
				title: ["can't be blank"],
				key: ["can't be blank", "is invalid"],
				fingerprint: ["cannot be generated"],
			},
		});
	});

	it("broken JSON is a 400 and an oversized body a 413", async () => {
		const broken = await as(owner.token).post(`/projects/${projectId}/keys`, { body: '{"title":' });
		expect(broken.status).toBe(400);
		const huge = await as(owner.token).post(`/projects/${projectId}/keys`, { body: { title: "t", key: "ssh-rsa " + "A".repeat(2 * 1024 * 1024) } });
		expect(huge.status).toBe(413);
		expect((await as(owner.token).get(`/projects/${projectId}/keys`)).body).toEqual([]);
	});
});

describe("permissions: master or above", () => {
	it.each([0, 10, 20])("on a project of visibility %i", async visibility => {
		const { project, roles } = await roleMatrix(cluster.api(), token => as(token), visibility);
		const strangerStatus = visibility === 0 ? 404 : 403;
		const expected: Record<string, number> = { owner: 201, master: 201, developer: 403, reporter: 403, guest: 403, stranger: strangerStatus };
		for (const [role, status] of Object.entries(expected)) {
			const key = await factory.generate("ed25519");
			const res = await as(roles[role].token).post(`/projects/${project.id}/keys`, { body: { title: role, key: key.line } });
			expect([role, res.status]).toEqual([role, status]);
			if (status === 403) expect(res.body).toEqual({ message: "403 Forbidden" });
			if (status === 404) expect(res.body).toEqual({ message: "404 Project Not Found" });
			const list = await as(roles[role].token).get(`/projects/${project.id}/keys`);
			expect([role, list.status]).toEqual([role, status === 201 ? 200 : status]);
		}
		const admin = await cluster.api().post(`/projects/${project.id}/keys`, { body: { title: "admin", key: (await factory.generate("ed25519")).line } });
		expect(admin.status).toBe(201);
		const anonymous = await as(null).get(`/projects/${project.id}/keys`);
		expect(anonymous.status).toBe(401);
		expect(anonymous.body).toEqual({ message: "401 Unauthorized" });
	});
});

describe("the cross-project join rule: two users, three projects", () => {
	let alice: TestUser;
	let bob: TestUser;
	let p1: number;
	let p2: number;
	let p3: number;
	let key: GeneratedKey;
	let keyId: number;

	beforeAll(async () => {
		alice = await createUser(cluster.api());
		bob = await createUser(cluster.api());
		p1 = (await createProject(as(alice.token))).id;
		p2 = (await createProject(as(alice.token))).id;
		p3 = (await createProject(as(bob.token), { visibility_level: 20 })).id;
		key = await factory.generate("rsa-2048");
	});

	it("alice adds the key to her first project", async () => {
		const res = await as(alice.token).post(`/projects/${p1}/keys`, { body: { title: "alice's key", key: key.line } });
		expect(res.status).toBe(201);
		keyId = res.body.id;
	});

	it("alice adds it to her second project: joined, same id, the first title kept", async () => {
		const res = await as(alice.token).post(`/projects/${p2}/keys`, { body: { title: "another title", key: key.line } });
		expect(res.status).toBe(201);
		expect(res.body).toMatchObject({ id: keyId, title: "alice's key", key: key.line });
		expect((await as(alice.token).get(`/projects/${p2}/keys`)).body.map((k: { id: number }) => k.id)).toEqual([keyId]);
	});

	it("bob, who cannot access alice's projects, gets a uniqueness error for his own project", async () => {
		const res = await as(bob.token).post(`/projects/${p3}/keys`, { body: { title: "bob's", key: key.line } });
		expect(res.status).toBe(400);
		expect(res.body).toEqual({ message: { fingerprint: ["has already been taken"] } });
		expect((await as(bob.token).get(`/projects/${p3}/keys`)).body).toEqual([]);
		// The same key with another comment is still the same key.
		const recommented = `${key.line.split(" ").slice(0, 2).join(" ")} someone-else`;
		expect((await as(bob.token).post(`/projects/${p3}/keys`, { body: { title: "b", key: recommented } })).status).toBe(400);
	});

	it("once bob is a member (even a guest) of alice's first project, his add joins the key", async () => {
		await addMember(as(alice.token), p1, bob.id, 10);
		const res = await as(bob.token).post(`/projects/${p3}/keys`, { body: { title: "bob's", key: key.line } });
		expect(res.status).toBe(201);
		expect(res.body).toMatchObject({ id: keyId, title: "alice's key" });
	});

	it("alice cannot join a key only bob's public project uses (reading is not access)", async () => {
		const bobsKey = await factory.generate("ed25519");
		expect((await as(bob.token).post(`/projects/${p3}/keys`, { body: { title: "bob only", key: bobsKey.line } })).status).toBe(201);
		const res = await as(alice.token).post(`/projects/${p1}/keys`, { body: { title: "mine?", key: bobsKey.line } });
		expect(res.status).toBe(400);
		expect(res.body).toEqual({ message: { fingerprint: ["has already been taken"] } });
		// An admin can reach every project, so joins.
		const admin = await cluster.api().post(`/projects/${p1}/keys`, { body: { title: "admin", key: bobsKey.line } });
		expect(admin.status).toBe(201);
		expect(admin.body.title).toBe("bob only");
	});

	it("removing the key from one project unlinks it there and keeps it for the others", async () => {
		const res = await as(alice.token).del(`/projects/${p1}/keys/${keyId}`);
		expect(res.status).toBe(200);
		expect(res.body).toMatchObject({ id: keyId, fingerprint: key.fingerprint, user_id: alice.id, public: false });
		expect((await as(alice.token).get(`/projects/${p1}/keys/${keyId}`)).status).toBe(404);
		expect((await as(alice.token).get(`/projects/${p2}/keys/${keyId}`)).body).toMatchObject({ id: keyId, title: "alice's key" });
		expect((await as(bob.token).get(`/projects/${p3}/keys/${keyId}`)).body).toMatchObject({ id: keyId, title: "alice's key" });
	});

	it("removing its last link deletes it: added again later, it is a new key", async () => {
		expect((await as(alice.token).del(`/projects/${p2}/keys/${keyId}`)).status).toBe(200);
		const last = await as(bob.token).del(`/projects/${p3}/keys/${keyId}`);
		expect(last.status).toBe(200);
		expect(last.body.fingerprint).toBe(key.fingerprint);
		const again = await as(bob.token).post(`/projects/${p3}/keys`, { body: { title: "bob's own now", key: key.line } });
		expect(again.status).toBe(201);
		expect(again.body.id).not.toBe(keyId);
		expect(again.body.title).toBe("bob's own now");
		// And it is bob's: alice (not a member of p3) cannot join it any more.
		const alices = await as(alice.token).post(`/projects/${p1}/keys`, { body: { title: "x", key: key.line } });
		expect(alices.status).toBe(400);
	});

	it("joins and removals racing on one key leave it consistent", async () => {
		const raced = await factory.generate("ecdsa-256");
		const projects = [p1, p2];
		for (let round = 0; round < 5; round++) {
			const first = await as(alice.token).post(`/projects/${p1}/keys`, { body: { title: "r", key: raced.line } });
			expect(first.status).toBe(201);
			// Remove it from p1 while adding it to p2: either p2 joins the old key or creates a new one.
			const [removed, joined] = await Promise.all([
				as(alice.token).del(`/projects/${p1}/keys/${first.body.id}`),
				as(alice.token).post(`/projects/${p2}/keys`, { body: { title: "r2", key: raced.line } }),
			]);
			expect(removed.status).toBe(200);
			expect(joined.status).toBe(201);
			const p2Keys = (await as(alice.token).get(`/projects/${p2}/keys`)).body.filter((k: { key: string }) => k.key === raced.line);
			expect(p2Keys).toHaveLength(1);
			expect(p2Keys[0].id).toBe(joined.body.id);
			expect((await as(alice.token).get(`/projects/${p2}/keys/${joined.body.id}`)).status).toBe(200);
			for (const p of projects) await as(alice.token).del(`/projects/${p}/keys/${joined.body.id}`);
		}
	});
});

describe("enable and disable (GitLab 8.11+) and every key for admins (GET /deploy_keys)", () => {
	let alice: TestUser;
	let bob: TestUser;
	let carol: TestUser;
	let pA: number;
	let pB: number;
	let pC: number;
	let key: GeneratedKey;
	let added: { id: number; title: string; key: string; created_at: string };
	const keysOf = async (user: TestUser, project: number) => (await as(user.token).get(`/projects/${project}/deploy_keys`)).body as { id: number }[];

	beforeAll(async () => {
		alice = await createUser(cluster.api());
		bob = await createUser(cluster.api());
		carol = await createUser(cluster.api());
		pA = (await createProject(as(alice.token))).id;
		pB = (await createProject(as(bob.token), { visibility_level: 20 })).id;
		pC = (await createProject(as(carol.token), { visibility_level: 20 })).id;
		// bob is a guest of alice's project: he may join its keys to his own, as GitLab's accessible keys.
		await addMember(as(alice.token), pA, bob.id, 10);
		key = await factory.generate("ed25519");
		const res = await as(alice.token).post(`/projects/${pA}/deploy_keys`, { body: { title: "alice's deploy key", key: key.line } });
		expect(res.status).toBe(201);
		added = res.body;
	});

	it("a member of the key's project enables it on his own project: 201 with the key, then listed there", async () => {
		// Read (and cached) before, so the list below proves the enable cleaned it.
		expect(await keysOf(bob, pB)).toEqual([]);
		const res = await as(bob.token).post(`/projects/${pB}/deploy_keys/${added.id}/enable`);
		expect(res.status).toBe(201);
		expect(Object.keys(res.body)).toEqual(["id", "title", "key", "created_at"]);
		expect(res.body).toEqual(added);
		expect(await keysOf(bob, pB)).toEqual([added]);
		expect((await as(bob.token).get(`/projects/${pB}/keys/${added.id}`)).body).toEqual(added);
		// Still alice's too, one record.
		expect(await keysOf(alice, pA)).toEqual([added]);
	});

	it("a stranger to the key's projects gets 404 Deploy Key Not Found and nothing is linked", async () => {
		expect(await keysOf(carol, pC)).toEqual([]);
		for (const path of [`/projects/${pC}/deploy_keys/${added.id}/enable`, `/projects/${pC}/keys/${added.id}/enable`]) {
			const res = await as(carol.token).post(path);
			expect([res.status, res.body]).toEqual([404, { message: "404 Deploy Key Not Found" }]);
		}
		expect(await keysOf(carol, pC)).toEqual([]);
		// Reading a project that uses it (bob's public one) is not access to the key, as for a create.
		const publicReader = await createUser(cluster.api());
		const theirs = (await createProject(as(publicReader.token))).id;
		const res = await as(publicReader.token).post(`/projects/${theirs}/keys/${added.id}/enable`);
		expect(res.status).toBe(404);
		expect(await keysOf(publicReader, theirs)).toEqual([]);
	});

	it("needs master or above on the project: a developer gets 403, an admin may enable any key", async () => {
		const dev = await createUser(cluster.api());
		await addMember(as(alice.token), pA, dev.id, 30);
		await addMember(as(carol.token), pC, dev.id, 30);
		const res = await as(dev.token).post(`/projects/${pC}/keys/${added.id}/enable`);
		expect([res.status, res.body]).toEqual([403, { message: "403 Forbidden" }]);
		expect((await as(dev.token).del(`/projects/${pA}/keys/${added.id}/disable`)).status).toBe(403);
		const anonymous = await as(null).post(`/projects/${pC}/keys/${added.id}/enable`);
		expect([anonymous.status, anonymous.body]).toEqual([401, { message: "401 Unauthorized" }]);
		expect(await keysOf(carol, pC)).toEqual([]);
		const admin = await cluster.api().post(`/projects/${pC}/keys/${added.id}/enable`);
		expect([admin.status, admin.body]).toEqual([201, added]);
		expect(await keysOf(carol, pC)).toEqual([added]);
		expect((await as(carol.token).del(`/projects/${pC}/keys/${added.id}/disable`)).status).toBe(200);
	});

	it("enabling a key the project has already answers 201 with it and links it once", async () => {
		for (const [user, path] of [
			[bob, `/projects/${pB}/deploy_keys/${added.id}/enable`],
			[alice, `/projects/${pA}/keys/${added.id}/enable`],
		] as const) {
			const res = await as(user.token).post(path);
			expect([res.status, res.body]).toEqual([201, added]);
		}
		expect(await keysOf(alice, pA)).toEqual([added]);
		expect(await keysOf(bob, pB)).toEqual([added]);
		const raced = await Promise.all(Array.from({ length: 4 }, () => as(bob.token).post(`/projects/${pB}/deploy_keys/${added.id}/enable`)));
		expect(raced.map(r => r.status)).toEqual([201, 201, 201, 201]);
		expect(await keysOf(bob, pB)).toEqual([added]);
	});

	it("disable unlinks it from this project only (200 with the key), then it is gone there", async () => {
		const res = await as(bob.token).del(`/projects/${pB}/deploy_keys/${added.id}/disable`);
		expect(res.status).toBe(200);
		expect(Object.keys(res.body)).toEqual(["id", "title", "key", "created_at"]);
		expect(res.body).toEqual(added);
		expect(await keysOf(bob, pB)).toEqual([]);
		const gone = await as(bob.token).get(`/projects/${pB}/keys/${added.id}`);
		expect([gone.status, gone.body]).toEqual([404, { message: "404 Not found" }]);
		const again = await as(bob.token).del(`/projects/${pB}/keys/${added.id}/disable`);
		expect([again.status, again.body]).toEqual([404, { message: "404 Deploy Key Not Found" }]);
		const deleted = await as(bob.token).del(`/projects/${pB}/deploy_keys/${added.id}`);
		expect([deleted.status, deleted.body]).toEqual([404, { message: "404 Deploy Key Not Found" }]);
		// The key itself stays in its other project.
		expect(await keysOf(alice, pA)).toEqual([added]);
		expect((await as(alice.token).get(`/projects/${pA}/keys/${added.id}`)).body).toEqual(added);
		// And may be enabled again.
		expect((await as(bob.token).post(`/projects/${pB}/keys/${added.id}/enable`)).status).toBe(201);
		expect((await as(bob.token).del(`/projects/${pB}/keys/${added.id}/disable`)).status).toBe(200);
	});

	it("the last disable removes the key: no longer listed for admins, no longer to be enabled", async () => {
		const res = await as(alice.token).del(`/projects/${pA}/keys/${added.id}/disable`);
		expect([res.status, res.body]).toEqual([200, added]);
		expect(await keysOf(alice, pA)).toEqual([]);
		const all = (await cluster.api().get("/deploy_keys")).body as { id: number }[];
		expect(all.map(k => k.id)).not.toContain(added.id);
		const enable = await as(alice.token).post(`/projects/${pA}/keys/${added.id}/enable`);
		expect([enable.status, enable.body]).toEqual([404, { message: "404 Deploy Key Not Found" }]);
		// Its text makes a new key now.
		const readded = await as(alice.token).post(`/projects/${pA}/keys`, { body: { title: "again", key: key.line } });
		expect(readded.status).toBe(201);
		expect(readded.body.id).not.toBe(added.id);
	});

	it("GET /deploy_keys: every key of every project by id for an admin, whole or paginated", async () => {
		const mine: number[] = [];
		for (const [user, project] of [
			[alice, pA],
			[bob, pB],
			[carol, pC],
		] as const) {
			const res = await as(user.token).post(`/projects/${project}/keys`, {
				body: { title: `of ${user.username}`, key: (await factory.generate("ed25519")).line },
			});
			mine.push(res.body.id);
		}
		const whole = await cluster.api().get("/deploy_keys");
		expect(whole.status).toBe(200);
		expect(whole.headers.get("x-total")).toBeNull();
		const ids = (whole.body as { id: number }[]).map(k => k.id);
		expect(ids).toEqual([...ids].sort((a, b) => a - b));
		expect(ids).toEqual(expect.arrayContaining(mine));
		for (const entity of whole.body) expect(Object.keys(entity)).toEqual(["id", "title", "key", "created_at"]);
		expect(whole.body.find((k: { id: number }) => k.id === mine[1])).toMatchObject({ title: `of ${bob.username}`, created_at: expect.stringMatching(ISO) });

		const page = await cluster.api().get("/deploy_keys", { query: { page: 2, per_page: 2 } });
		expect(page.status).toBe(200);
		expect(page.body).toEqual(whole.body.slice(2, 4));
		expect(page.headers.get("x-total")).toBe(String(ids.length));
		expect(page.headers.get("x-page")).toBe("2");
		expect(page.headers.get("x-per-page")).toBe("2");
	});

	it("GET /deploy_keys: 403 for anyone but an admin (a project's owner too), 401 without a token", async () => {
		const res = await as(alice.token).get("/deploy_keys");
		expect([res.status, res.body]).toEqual([403, { message: "403 Forbidden" }]);
		const paged = await as(bob.token).get("/deploy_keys", { query: { page: 1 } });
		expect([paged.status, paged.body]).toEqual([403, { message: "403 Forbidden" }]);
		const anonymous = await as(null).get("/deploy_keys");
		expect([anonymous.status, anonymous.body]).toEqual([401, { message: "401 Unauthorized" }]);
		// An admin acting as a user (sudo) is that user.
		const sudo = await cluster.api().get("/deploy_keys", { headers: { Sudo: alice.username } });
		expect([sudo.status, sudo.body]).toEqual([403, { message: "403 Forbidden" }]);
	});
});

describe("the gitlab npm client (14.2.2, version 3)", () => {
	it("lists, adds, shows and removes deploy keys", async () => {
		const owner = await createUser(cluster.api());
		const project = await createProject(as(owner.token));
		const api = new Gitlab({ host: `http://127.0.0.1:${cluster.port}`, token: owner.token, version: 3 });
		const key = await factory.generate("ed25519");
		// The client's typings only declare `sudo` for add; the body goes through as given.
		const keyBody = (title: string, text: string) => ({ title, key: text }) as unknown as Parameters<typeof api.DeployKeys.add>[1];

		expect(await api.DeployKeys.all({ projectId: project.id })).toEqual([]);
		const added = (await api.DeployKeys.add(project.id, keyBody("from the client", key.line))) as Record<string, unknown>;
		expect(added).toEqual({ id: expect.any(Number), title: "from the client", key: key.line, created_at: expect.stringMatching(ISO) });
		expect(await api.DeployKeys.all({ projectId: project.id })).toEqual([added]);
		expect(await api.DeployKeys.show(project.id, String(added.id))).toEqual(added);
		const removed = (await api.DeployKeys.remove(project.id, String(added.id))) as Record<string, unknown>;
		expect(removed).toMatchObject({ id: added.id, fingerprint: key.fingerprint });
		expect(await api.DeployKeys.all({ projectId: project.id })).toEqual([]);

		// Errors reach the client as rejections with GitLab's status.
		await expect(api.DeployKeys.add(project.id, keyBody("bad", "nonsense"))).rejects.toMatchObject({ response: { status: 400 } });
	});
});
