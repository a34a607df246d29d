/**
 * A client generated from the API's own document (test/support/openapi-client.ts: openapi-typescript's
 * types, openapi-fetch's calls) makes the README's calls against a running gateway, typed end to
 * end: the typecheck refuses a call the document does not have, and each answer is the body its
 * operation declares.
 */
import createClient from "openapi-fetch";
import AccountsService from "../../../services/accounts.service";
import ApiService from "../../../services/api.service";
import LabelsService from "../../../services/labels.service";
import { startLocal, type LocalStack } from "../../support/broker";
import type { paths } from "../../support/openapi/gitlab-api";

let stack: LocalStack;

beforeAll(async () => {
	stack = await startLocal([ApiService, AccountsService, LabelsService]);
});

afterAll(() => stack?.stop());

it("makes the README's calls, v3 and v4, with the document's types", async () => {
	const headers = { "PRIVATE-TOKEN": stack.rootToken };
	// v3's paths are relative to its server, /api/v3; v4's are whole (the document's `servers`).
	const v3 = createClient<paths>({ baseUrl: stack.url, headers });
	const v4 = createClient<paths>({ baseUrl: stack.url.replace(/\/api\/v3$/, ""), headers });

	const me = await v3.GET("/user");
	expect([me.response.status, me.data?.username, me.data?.is_admin]).toEqual([200, "root", true]);

	const project = await v3.POST("/projects", { body: { name: "demo" } });
	expect([project.response.status, project.data?.path_with_namespace]).toEqual([201, "root/demo"]);

	const label = await v3.POST("/projects/{id}/labels", { params: { path: { id: "root/demo" } }, body: { name: "bug", color: "#d9534f" } });
	expect([label.response.status, label.data]).toEqual([200, { name: "bug", color: "#D9534F", description: null }]);

	const listed = await v4.GET("/api/v4/projects/{id}/labels", { params: { path: { id: "root/demo" } } });
	expect(listed.response.status).toBe(200);
	expect(listed.data?.map(l => [l.name, l.color, l.is_project_label])).toEqual([["bug", "#D9534F", true]]);
	expect(listed.response.headers.get("x-total")).toBe("1");
});

it("reads a refusal as its operation declares it", async () => {
	const v4 = createClient<paths>({ baseUrl: stack.url.replace(/\/api\/v3$/, ""), headers: { "PRIVATE-TOKEN": stack.rootToken } });
	const missing = await v4.GET("/api/v4/projects/{id}/labels/{label_id}", { params: { path: { id: "root/demo", label_id: "nope" } } });
	expect([missing.response.status, missing.error]).toEqual([404, { message: "404 Label Not Found" }]);
});
