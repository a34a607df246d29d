/**
 * A real v3 client against the in-process stack: the `gitlab` npm package 14.2.2 in v3 mode
 * lists, creates, edits and deletes labels exactly as it would against GitLab 8.
 */
import { Gitlab } from "gitlab";
import AccountsService from "../../../services/accounts.service";
import ApiService from "../../../services/api.service";
import LabelsService from "../../../services/labels.service";
import { startLocal, type LocalStack } from "../../support/broker";

let stack: LocalStack;
let api: InstanceType<typeof Gitlab>;
let projectId: number;

beforeAll(async () => {
	stack = await startLocal([ApiService, AccountsService, LabelsService]);
	api = new Gitlab({ host: stack.url.replace(/\/api\/v3$/, ""), token: stack.rootToken, version: 3 } as any);
	projectId = (await stack.api().post("/projects", { body: { name: "client-demo" } })).body.id;
});

afterAll(() => stack?.stop());

it("runs the whole label life cycle through the gitlab client", async () => {
	const created: any = await api.Labels.create(projectId, "bug", "#ff0000", { description: "Broken" });
	expect(created).toEqual({ name: "bug", color: "#FF0000", description: "Broken" });
	await api.Labels.create(projectId, "docs", "#00f");

	const all: any[] = (await api.Labels.all(projectId)) as any[];
	expect(all.map(l => l.name)).toEqual(["bug", "docs"]);
	expect(all[0]).toMatchObject({ open_issues_count: 0, closed_issues_count: 0, open_merge_requests_count: 0 });

	const edited: any = await api.Labels.edit(projectId, "bug", { newName: "defect", color: "#00ff00" });
	expect(edited).toEqual({ name: "defect", color: "#00FF00", description: "Broken" });

	const removed: any = await api.Labels.remove(projectId, "defect");
	expect(removed).toMatchObject({ title: "defect", project_id: projectId, template: false });
	expect(((await api.Labels.all(projectId)) as any[]).map(l => l.name)).toEqual(["docs"]);
});

it("surfaces GitLab's errors to the client", async () => {
	await expect(api.Labels.create(projectId, "docs", "#fff")).rejects.toMatchObject({ response: { status: 409 } });
	await expect(api.Labels.remove(projectId, "ghost")).rejects.toMatchObject({ response: { status: 404 } });
});
