/**
 * API v4's integrations (services/modules/integrations/integrations.v4.ts) on one in-process
 * broker, beside v3 on the same settings: GitLab's slugs and field names under `/integrations`
 * and `/services`, the active ones listed, GET 404 until set, PUT answering the integration with
 * its event flags, DELETE 204 (If-Unmodified-Since), and secrets never shown.
 */
import AccountsService from "../../services/accounts.service";
import ApiService from "../../services/api.service";
import IntegrationsService from "../../services/integrations.service";
import { startLocal, type LocalStack } from "../support/broker";
import { addMember, createProject, createUser, type TestUser } from "../support/fixtures";
import type { Client } from "../support/http";

let stack: LocalStack;
let owner: TestUser;
let developer: TestUser;
let projectId: number;
let v4: Client;
const integrations = (segment = "integrations") => `/projects/${projectId}/${segment}`;

beforeAll(async () => {
	stack = await startLocal([ApiService, AccountsService, IntegrationsService]);
	owner = await createUser(stack.api());
	developer = await createUser(stack.api());
	projectId = (await createProject(stack.api(owner.token))).id;
	await addMember(stack.api(owner.token), projectId, developer.id, 30);
	v4 = stack.v4(owner.token);
});

afterAll(() => stack?.stop());

it("answers 404 Integration Not Found for one never set, and 400 for a slug it does not have", async () => {
	expect((await v4.get(`${integrations()}/slack`)).body).toEqual({ message: "404 Integration Not Found" });
	const unknown = await v4.get(`${integrations()}/nope`);
	expect([unknown.status, unknown.body]).toEqual([400, { error: "slug does not have a valid value" }]);
	const putUnknown = await v4.put(`${integrations()}/nope`, { body: {} });
	expect([putUnknown.status, putUnknown.body]).toEqual([404, { error: "404 Not Found" }]);
	expect((await v4.get(integrations())).body).toEqual([]);
});

it("sets one with PUT in GitLab's names and flags, shows it (no secrets), and v3 sees the same settings", async () => {
	const put = await v4.put(`${integrations()}/slack`, {
		body: { webhook: "https://hooks.example.com/x", channel: "#b", pipeline_events: false, job_events: "False" },
	});
	expect(put.status).toBe(200);
	expect(put.body).toMatchObject({
		id: expect.any(Number),
		title: "Team chat",
		slug: "slack",
		active: true,
		push_events: true,
		pipeline_events: false,
		job_events: false,
		properties: { webhook: "https://hooks.example.com/x", channel: "#b" },
	});
	expect((await v4.get(`${integrations("services")}/slack`)).body).toEqual(put.body);
	expect((await stack.api(owner.token).get(`/projects/${projectId}/services/team-chat`)).body).toMatchObject({
		active: true,
		pipeline_events: false,
		properties: { webhook: "https://hooks.example.com/x", channel: "#b" },
	});

	const bamboo = await v4.put(`${integrations()}/bamboo`, {
		form: { bamboo_url: "https://ci.example.com", build_key: "KEY", username: "ci", password: "s3cret" },
	});
	expect([bamboo.status, bamboo.body.properties]).toEqual([200, { bamboo_url: "https://ci.example.com", build_key: "KEY", username: "ci" }]);
	const missing = await v4.put(`${integrations()}/drone-ci`, { body: { token: "t" } });
	expect([missing.status, missing.body]).toEqual([400, { error: "drone_url is missing" }]);

	const list = await v4.get(integrations("services"));
	expect(list.body.map((i: { slug: string }) => i.slug)).toEqual(["slack", "bamboo"]);
	expect(list.body[0]).not.toHaveProperty("properties");
	expect(list.headers.get("x-total")).toBe("2");
	expect((await stack.v4(developer.token).get(integrations())).status).toBe(403);
});

it("disables one with DELETE 204: kept, inactive, cleared; If-Unmodified-Since is honoured", async () => {
	const stale = await v4.del(`${integrations()}/slack`, { headers: { "If-Unmodified-Since": "Thu, 01 Jan 2015 00:00:00 GMT" } });
	expect([stale.status, stale.body]).toEqual([412, { message: "412 Precondition Failed" }]);
	const removed = await v4.del(`${integrations()}/slack`, { body: {} });
	expect([removed.status, removed.text]).toEqual([204, ""]);
	expect((await v4.get(`${integrations()}/slack`)).body).toMatchObject({ slug: "slack", active: false, properties: {} });
	expect((await v4.get(integrations())).body.map((i: { slug: string }) => i.slug)).toEqual(["bamboo"]);
	expect((await v4.del(`${integrations()}/nope`)).status).toBe(400);
});
