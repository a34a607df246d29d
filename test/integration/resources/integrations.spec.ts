/**
 * Integration settings on the in-process stack (gateway, accounts, integrations): every slug's
 * PUT/GET/DELETE, permissions, GitLab's error bodies, secrets hidden and encrypted at rest, and
 * the password that does not follow a changed URL.
 */
import fs from "fs";
import path from "path";
import { config } from "../../../config";
import { decryptSecret, isEncrypted } from "../../../lib/crypto/secrets";
import { resolveSecretsKey } from "../../../lib/crypto/secrets-key";
import { CATALOGUE, fieldsOf, findIntegration, isRequired, isSecret } from "../../../lib/integrations/catalogue";
import { DATABASE_FILE } from "../../../lib/store/sqlite/store-files";
import AccountsService from "../../../services/accounts.service";
import ApiService from "../../../services/api.service";
import IntegrationsService from "../../../services/integrations.service";
import { startLocal, type LocalStack } from "../../support/broker";
import { addMember, createProject, createUser } from "../../support/fixtures";
import { client } from "../../support/http";
import { heldAcross } from "../../support/races";

let stack: LocalStack;
let projectId: number;
const as = (token: string | null) => client(stack.url, token ?? undefined);

/** A value each field accepts. */
function valueFor(slug: string, field: string): string {
	if (/url$|^webhook$|^server$/.test(field)) return `https://${slug}.example.com/${field}`;
	if (field === "recipients") return slug === "irc-gateway" ? "irc://irc.example.com/#dev" : "dev@example.com";
	if (field === "priority") return "1";
	if (field === "sound") return "bike";
	if (field === "color") return "green";
	if (field === "server_port") return "6697";
	if (/^(enable_ssl_verification|notify|disable_diffs|send_from_committer_email|colorize_messages)$/.test(field)) return "1";
	return `${field}Value${slug.replace(/-/g, "")}`;
}

const PLAIN_SECRET = (slug: string, field: string) => valueFor(slug, field);

beforeAll(async () => {
	stack = await startLocal([ApiService, AccountsService, IntegrationsService]);
	projectId = (await stack.api().post("/projects", { body: { name: "integrations-demo" } })).body.id;
});

afterAll(() => stack?.stop());

describe("every slug", () => {
	it.each(CATALOGUE.map(d => d.slug))("%s: PUT sets and activates, GET shows it without secrets, DELETE clears", async slug => {
		const def = findIntegration(slug)!;
		const body = Object.fromEntries(fieldsOf(def, "v3").map(f => [f.name, valueFor(slug, f.name)]));
		const put = await stack.api().put(`/projects/${projectId}/services/${slug}`, { form: body });
		expect(put.status).toBe(200);
		expect(put.body).toBe(true);

		const get = await stack.api().get(`/projects/${projectId}/services/${slug}`);
		expect(get.status).toBe(200);
		const expected: Record<string, unknown> = {};
		for (const f of fieldsOf(def, "v3")) {
			if (isSecret(f)) continue;
			const raw = body[f.name];
			expected[f.name] = f.type === "boolean" ? raw === "1" : f.type === "integer" ? Number(raw) : raw;
		}
		expect(get.body).toEqual({
			id: expect.any(Number),
			title: def.titleProperty ? body[def.titleProperty] : def.title,
			created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
			updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
			active: true,
			push_events: true,
			tag_push_events: true,
			issues_events: true,
			merge_requests_events: true,
			note_events: true,
			build_events: true,
			pipeline_events: true,
			properties: expected,
		});

		const del = await stack.api().del(`/projects/${projectId}/services/${slug}`);
		expect(del.status).toBe(200);
		expect(del.body).toBe(true);
		const after = await stack.api().get(`/projects/${projectId}/services/${slug}`);
		expect(after.body).toMatchObject({ active: false, properties: {} });
	});

	it.each(CATALOGUE.map(d => d.slug))("%s: PUT without a required field is a 400 naming it, and stores nothing", async slug => {
		const def = findIntegration(slug)!;
		const required = fieldsOf(def, "v3").filter(f => isRequired(f, "v3"));
		const fresh = (await createProject(stack.api())).id;
		for (const f of required) {
			const body = Object.fromEntries(required.filter(r => r !== f).map(r => [r.name, valueFor(slug, r.name)]));
			const res = await stack.api().put(`/projects/${fresh}/services/${slug}`, { body });
			expect(res.status).toBe(400);
			expect(res.body).toEqual({ error: `${f.name} is missing` });
		}
		expect((await stack.api().get(`/projects/${fresh}/services/${slug}`)).body).toMatchObject({ id: null, active: false, properties: {} });
	});
});

describe("secrets at rest", () => {
	it("stores no plain secret: the record holds AES-GCM ciphertext that decrypts to what was sent", async () => {
		const fresh = (await createProject(stack.api())).id;
		const sent: { slug: string; field: string; value: string }[] = [];
		for (const def of CATALOGUE) {
			const body = Object.fromEntries(fieldsOf(def, "v3").map(f => [f.name, valueFor(def.slug, f.name)]));
			expect((await stack.api().put(`/projects/${fresh}/services/${def.slug}`, { form: body })).status).toBe(200);
			for (const f of fieldsOf(def, "v3").filter(isSecret)) sent.push({ slug: def.slug, field: f.name, value: PLAIN_SECRET(def.slug, f.name) });
		}
		expect(sent.length).toBe(15);
		// The store's bytes on the disk: its file and its write-ahead log, where the last writes are.
		const store = path.join(config.dataDir, DATABASE_FILE);
		const file = [store, `${store}-wal`].map(f => (fs.existsSync(f) ? fs.readFileSync(f, "latin1") : "")).join("");
		expect(file).toContain(`"slug":"${CATALOGUE[0].slug}"`);
		const key = resolveSecretsKey(config.secretsKey, config.dataDir).key;
		for (const s of sent) {
			expect(file).not.toContain(s.value);
			const doc: any = await stack.broker.call("integrations.settingsFor", { projectKey: String(fresh), slug: s.slug });
			expect(isEncrypted(doc.properties[s.field])).toBe(true);
			expect(decryptSecret(doc.properties[s.field], key)).toBe(s.value);
		}
	});

	it("never returns secrets, not even to an admin", async () => {
		const res = await stack.api().get(`/projects/${projectId}/services/push-notifications`);
		expect(res.status).toBe(200);
		await stack.api().put(`/projects/${projectId}/services/push-notifications`, { body: { api_key: "k1", user_key: "u1", priority: 0 } });
		const again = await stack.api().get(`/projects/${projectId}/services/push-notifications`);
		expect(again.body.properties).toEqual({ priority: "0" });
		expect(JSON.stringify(again.body)).not.toMatch(/k1|u1|v1:/);
	});

	it("keeps a stored secret when a later PUT leaves it out, and drops a password whose server URL changed", async () => {
		const slug = "build-server-b";
		const base = { build_server_url: "https://teamcity.example.com", build_type: "bt1", username: "ci" };
		expect((await stack.api().put(`/projects/${projectId}/services/${slug}`, { body: { ...base, password: "s3cret" } })).status).toBe(200);
		expect((await stack.api().put(`/projects/${projectId}/services/${slug}`, { body: { ...base, build_type: "bt2" } })).status).toBe(200);
		const key = resolveSecretsKey(config.secretsKey, config.dataDir).key;
		let doc: any = await stack.broker.call("integrations.settingsFor", { projectKey: String(projectId), slug });
		expect(decryptSecret(doc.properties.password, key)).toBe("s3cret");

		const moved = await stack.api().put(`/projects/${projectId}/services/${slug}`, { body: { ...base, build_server_url: "https://attacker.example.com" } });
		expect(moved.status).toBe(400);
		expect(moved.body).toEqual({ error: "password is missing" });
		doc = await stack.broker.call("integrations.settingsFor", { projectKey: String(projectId), slug });
		expect(doc.properties.build_server_url).toBe("https://teamcity.example.com");

		expect(
			(
				await stack
					.api()
					.put(`/projects/${projectId}/services/${slug}`, { body: { ...base, build_server_url: "https://new.example.com", password: "n3w" } })
			).status,
		).toBe(200);
		doc = await stack.broker.call("integrations.settingsFor", { projectKey: String(projectId), slug });
		expect(doc.properties.build_server_url).toBe("https://new.example.com");
		expect(decryptSecret(doc.properties.password, key)).toBe("n3w");
	});
});

describe("IRC channel keys and server passwords", () => {
	const slug = "irc-gateway";
	const stored = async () => ((await stack.broker.call("integrations.settingsFor", { projectKey: String(projectId), slug })) as any).properties;

	it("are never shown, and stay when a PUT sends the recipients back as GET showed them", async () => {
		const recipients = "irc://irc.example.net/#dev ops?key=s3cret ircs://bot:pw0rd@irc.example.org:6697/#ci?key=k2&x=1";
		const base = "irc://:netpw@irc.example.net:6697/";
		expect((await stack.api().put(`/projects/${projectId}/services/${slug}`, { body: { recipients, default_irc_uri: base } })).status).toBe(200);
		for (const path of [`/projects/${projectId}/services/${slug}`, `/projects/${projectId}/services/irker`]) {
			const shown = (await stack.api().get(path)).body.properties;
			expect(shown).toMatchObject({
				recipients: "irc://irc.example.net/#dev ops ircs://bot@irc.example.org:6697/#ci?x=1",
				default_irc_uri: "irc://irc.example.net:6697/",
			});
			expect(JSON.stringify(shown)).not.toMatch(/s3cret|k2|pw0rd|netpw/);
		}

		// Sent back as shown, with a channel added: the stored keys and passwords stay, the new channel has none.
		const shown = (await stack.api().get(`/projects/${projectId}/services/${slug}`)).body.properties;
		const again = { recipients: `${shown.recipients} #new`, default_irc_uri: shown.default_irc_uri, colorize_messages: true };
		expect((await stack.api().put(`/projects/${projectId}/services/${slug}`, { body: again })).status).toBe(200);
		expect(await stored()).toMatchObject({ recipients: `${recipients} #new`, default_irc_uri: base, colorize_messages: true });

		// A key of its own replaces the stored one; a channel left out goes with its key.
		const replaced = "irc://irc.example.net/#dev ops?key=n3w";
		expect((await stack.api().put(`/projects/${projectId}/services/${slug}`, { body: { recipients: replaced } })).status).toBe(200);
		expect((await stored()).recipients).toBe(replaced);
		expect((await stack.api().get(`/projects/${projectId}/services/${slug}`)).body.properties.recipients).toBe("irc://irc.example.net/#dev ops");
	});
});

describe("changes at the same time", () => {
	it("a PUT that read the settings before a DELETE does not bring them back (a revocation sticks)", async () => {
		const slug = "build-server-b";
		const base = { build_server_url: "https://teamcity.example.com", build_type: "bt1", username: "ci" };
		expect((await stack.api().put(`/projects/${projectId}/services/${slug}`, { body: { ...base, password: "s3cret" } })).status).toBe(200);
		// The PUT's read of the stored settings, held until the DELETE is done.
		const [answer, removal] = await heldAcross(
			stack.broker,
			"integrations",
			"integrations",
			() => stack.api().put(`/projects/${projectId}/services/${slug}`, { body: { ...base, build_type: "bt2" } }),
			() => stack.api().del(`/projects/${projectId}/services/${slug}`),
		);
		expect(removal.status).toBe(200);
		// Merged again onto what is there now (nothing): the password it relied on is gone.
		expect([answer.status, answer.body]).toEqual([400, { error: "password is missing" }]);
		const doc = await stack.broker.call<{ active: boolean; properties: object }, object>("integrations.settingsFor", {
			projectKey: String(projectId),
			slug,
		});
		expect([doc.active, doc.properties]).toEqual([false, {}]);
	});
});

describe("requests", () => {
	it("accepts slugs with underscores and answers 404 Service Not Found for unknown ones", async () => {
		expect(
			(await stack.api().put(`/projects/${projectId}/services/external_wiki`, { form: { external_wiki_url: "https://wiki.example.com" } })).status,
		).toBe(200);
		expect((await stack.api().get(`/projects/${projectId}/services/external-wiki`)).body.properties).toEqual({
			external_wiki_url: "https://wiki.example.com",
		});
		// GitLab 8.16 services with no counterpart here.
		for (const name of ["bugzilla", "kubernetes", "mattermost"])
			for (const method of ["get", "put", "del"] as const) {
				const res = await stack.api()[method](`/projects/${projectId}/services/${name}`, method === "put" ? { body: { token: "x" } } : {});
				expect([name, method, res.status, res.body]).toEqual([name, method, 404, { message: "404 Service Not Found" }]);
			}
	});

	it("takes GitLab 8.16's service names for PUT, GET and DELETE on the slug's own record, in GitLab's field names", async () => {
		const fresh = (await createProject(stack.api())).id;
		const put = await stack.api().put(`/projects/${fresh}/services/bamboo`, {
			form: { bamboo_url: "https://bamboo.example.com", build_key: "PLAN", username: "ci", password: "s3cret" },
		});
		expect([put.status, put.body]).toEqual([200, true]);
		const byGitLab = await stack.api().get(`/projects/${fresh}/services/bamboo`);
		expect(byGitLab.body).toMatchObject({ id: expect.any(Number), title: "Build server A", active: true, pipeline_events: true });
		expect(byGitLab.body.properties).toEqual({ bamboo_url: "https://bamboo.example.com", build_key: "PLAN", username: "ci" });
		const bySlug = await stack.api().get(`/projects/${fresh}/services/build-server-a`);
		expect(bySlug.body).toEqual({ ...byGitLab.body, properties: { build_server_url: "https://bamboo.example.com", build_key: "PLAN", username: "ci" } });
		// The spec's slug edits the same record GitLab's name made, and GitLab's name deletes it.
		const again = { build_server_url: "https://bamboo.example.com", build_key: "PLAN2", username: "ci" };
		expect((await stack.api().put(`/projects/${fresh}/services/build_server_a`, { body: again })).status).toBe(200);
		expect((await stack.api().get(`/projects/${fresh}/services/bamboo`)).body.properties.build_key).toBe("PLAN2");
		const missing = await stack.api().put(`/projects/${fresh}/services/teamcity`, { body: { build_type: "bt", username: "u", password: "p" } });
		expect([missing.status, missing.body]).toEqual([400, { error: "teamcity_url is missing" }]);
		expect((await stack.api().del(`/projects/${fresh}/services/bamboo`)).body).toBe(true);
		const cleared = await stack.api().get(`/projects/${fresh}/services/build-server-a`);
		expect(cleared.body).toMatchObject({ id: byGitLab.body.id, active: false, properties: {} });
		// hipchat's color and server, pushover's priority and sound: stored as given.
		const hipchat = { token: "t", color: "pink", server: "chat.local" };
		expect((await stack.api().put(`/projects/${fresh}/services/hipchat`, { body: hipchat })).status).toBe(200);
		expect((await stack.api().get(`/projects/${fresh}/services/group-chat-b`)).body.properties).toEqual({ color: "pink", server: "chat.local" });
		const pushover = { api_key: "a", user_key: "u", priority: "2", sound: "x" };
		expect((await stack.api().put(`/projects/${fresh}/services/pushover`, { body: pushover })).status).toBe(200);
		expect((await stack.api().get(`/projects/${fresh}/services/pushover`)).body.properties).toEqual({ priority: "2", sound: "x" });
	});

	it("answers GitLab's errors for bad values and changes nothing", async () => {
		const slug = "custom-issue-tracker";
		const good = { new_issue_url: "https://t.example.com/new", issues_url: "https://t.example.com/i/:id", project_url: "https://t.example.com" };
		await stack.api().put(`/projects/${projectId}/services/${slug}`, { body: good });
		const bad = await stack.api().put(`/projects/${projectId}/services/${slug}`, { body: { ...good, project_url: "ftp://t.example.com" } });
		expect(bad.status).toBe(400);
		expect(bad.body).toEqual({ message: { project_url: ["must be a valid URL"] } });
		const maybe = { recipients: "a@example.com", disable_diffs: "maybe" };
		const boolBad = await stack.api().put(`/projects/${projectId}/services/emails-on-push`, { body: maybe });
		expect(boolBad.status).toBe(400);
		expect(boolBad.body).toEqual({ error: "disable_diffs is invalid" });
		const nested = await stack.api().put(`/projects/${projectId}/services/collab-app-a`, { form: { "token[$ne]": "x" } });
		expect(nested.status).toBe(400);
		expect(nested.body).toEqual({ error: "token is invalid" });
		expect((await stack.api().get(`/projects/${projectId}/services/${slug}`)).body.properties.project_url).toBe("https://t.example.com");
	});

	it("needs master or above; others get 403, strangers to a private project 404, anonymous 401", async () => {
		const owner = await createUser(stack.api());
		const project = await createProject(as(owner.token), { visibility_level: 0 });
		const roles: Record<string, string> = {};
		for (const [role, level] of [
			["guest", 10],
			["reporter", 20],
			["developer", 30],
			["master", 40],
		] as const) {
			const u = await createUser(stack.api());
			await addMember(as(owner.token), project.id, u.id, level);
			roles[role] = u.token;
		}
		const stranger = await createUser(stack.api());
		const path = `/projects/${project.id}/services/emails-on-push`;
		for (const role of ["guest", "reporter", "developer"]) {
			for (const res of [
				await as(roles[role]).get(path),
				await as(roles[role]).put(path, { body: { recipients: "a@example.com" } }),
				await as(roles[role]).del(path),
			]) {
				expect(res.status).toBe(403);
				expect(res.body).toEqual({ message: "403 Forbidden" });
			}
		}
		expect((await as(roles.master).put(path, { body: { recipients: "a@example.com" } })).status).toBe(200);
		expect((await as(owner.token).get(path)).body.properties).toEqual({ recipients: "a@example.com" });
		const hidden = await as(stranger.token).get(path);
		expect(hidden.status).toBe(404);
		expect(hidden.body).toEqual({ message: "404 Project Not Found" });
		expect((await as(null).get(path)).status).toBe(401);
	});

	it("takes the project as namespace/path too", async () => {
		const project = await createProject(stack.api());
		const res = await stack.api().put(`/projects/${encodeURIComponent(project.path_with_namespace)}/services/source-commits-b`, { body: { token: "abc" } });
		expect(res.status).toBe(200);
		expect((await stack.api().get(`/projects/${project.id}/services/source-commits-b`)).body.active).toBe(true);
	});
});
